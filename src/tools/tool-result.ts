import { TOOL_LIMITS } from "../constants.js";
import { canonicalJson } from "../vocabulary/canonical-json.js";
import type { ToolErrorCode, ToolResult } from "./types.js";

/**
 * Builds the failure envelope of CONTRACT section 4:
 * `{"ok": false, "tool": NAME, "data": null, "error": {"code": CODE, "message": TEXT}}`.
 *
 * Why: every place that turns a problem into a tool message (registry, graph guard, ledger
 * recovery, approval rejection) must produce the same shape. The message is bounded in length.
 */
export function failureResult(tool: string, code: ToolErrorCode, message: string): ToolResult {
  // the name may be whatever the model made up: bounded like the message
  const name = tool.length > TOOL_NAME_ECHO_MAX_CHARS ? cutWithMarker(tool, TOOL_NAME_ECHO_MAX_CHARS) : tool;
  return { ok: false, tool: name, data: null, error: { code, message: cutWithMarker(message, TOOL_LIMITS.errorMessageMaxChars) } };
}

/** Longest tool name echoed back in an envelope (real tool names are at most 64 characters). */
const TOOL_NAME_ECHO_MAX_CHARS = 100;

/**
 * Builds the success envelope `{"ok": true, "tool": NAME, "data": DATA, "error": null, "truncated": T}`.
 * `data` must already be JSON-safe; the registry's `execute` guarantees that for tool output.
 */
export function successResult(tool: string, data: unknown, truncated: boolean): ToolResult {
  return { ok: true, tool, data, error: null, truncated };
}

/**
 * The JSON text the model sees as the ToolMessage content for `result`.
 *
 * Keys always come in the contract's order and nothing but the envelope's fields is emitted, so
 * the same outcome always yields the same text (useful for caching and for tests). Never throws:
 * a result whose data cannot be serialized becomes a TOOL_FAILED envelope.
 */
export function toolMessageContent(result: ToolResult): string {
  if (!result.ok) {
    return JSON.stringify({ ok: false, tool: result.tool, data: null, error: { code: result.error.code, message: result.error.message } });
  }
  try {
    const text = JSON.stringify({ ok: true, tool: result.tool, data: result.data ?? null, error: null, truncated: result.truncated });
    if (text !== undefined) return text;
  } catch {
    // fall through to the failure envelope below
  }
  return toolMessageContent(failureResult(result.tool, "TOOL_FAILED", "result is not JSON-serializable"));
}

/**
 * A stable identity for "the same call": the tool name, a colon, and the arguments' canonical JSON
 * (`canonicalJson`: object keys sorted at every depth, `add:{"a":1,"b":2}` for both `{a:1,b:2}`
 * and `{b:2,a:1}`) — the same text approval digests are taken of.
 *
 * Why: the no-progress rule (DEVMIND_NO_PROGRESS_LIMIT) counts repeats of the same failing call,
 * and key order in model output is arbitrary. Never throws: arguments with no JSON form (a cycle,
 * a BigInt) give `NAME:[unserializable]`.
 */
export function canonicalToolCallKey(name: string, args: unknown): string {
  try {
    return `${name}:${canonicalJson(args)}`;
  } catch {
    return `${name}:[unserializable]`;
  }
}

/** Outcome of shaping a tool's return value into envelope data. */
export type ShapedOutput = { ok: true; data: unknown; truncated: boolean } | { ok: false; message: string };

/**
 * Turns a tool's return value into JSON-safe envelope data within `maxChars`.
 *
 * `undefined` becomes `null`; values are round-tripped through JSON (so a Date becomes its ISO
 * string); a value that cannot be serialized (cycle, BigInt, throwing toJSON) is reported. When the
 * data is too long, a string is cut with a `…[truncated N chars]` marker and any other value is
 * replaced by its JSON text cut the same way; the caller sets `truncated: true`.
 */
export function shapeOutput(value: unknown, maxChars: number): ShapedOutput {
  if (value === undefined) return { ok: true, data: null, truncated: false };
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return { ok: false, message: `result is not JSON-serializable (${firstLine(describeError(error), 200)})` };
  }
  if (json === undefined) return { ok: false, message: `result is not JSON-serializable (a ${typeof value})` };
  const data: unknown = JSON.parse(json);
  const size = typeof data === "string" ? data.length : json.length;
  if (size <= maxChars) return { ok: true, data, truncated: false };
  return { ok: true, data: cutWithMarker(typeof data === "string" ? data : json, maxChars), truncated: true };
}

/**
 * Cuts `text` so the result, marker included, fits `maxChars` (when the marker itself fits), never
 * splitting a surrogate pair. The marker says how many characters were removed. Used for long
 * tool output and for any text echoed back to the model (error messages, quoted paths).
 */
export function cutWithMarker(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let keep = Math.max(0, maxChars - marker(text.length).length);
  if (keep > 0 && isHighSurrogate(text.charCodeAt(keep - 1))) keep -= 1;
  return text.slice(0, keep) + marker(text.length - keep);
}

/**
 * A one-line, bounded, stack-free description of anything thrown: `TypeError: x is not a
 * function`, the string itself, or a fallback for values whose conversion throws.
 */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) {
      const message = typeof error.message === "string" && error.message !== "" ? error.message : "(no message)";
      return error.name && error.name !== "Error" ? `${error.name}: ${message}` : message;
    }
    if (typeof error === "string") return error === "" ? "(no message)" : error;
    return String(error);
  } catch {
    return "unknown error";
  }
}

/** Quotes a user-supplied value for an error message, JSON-escaped and bounded. */
export function quote(value: string, maxChars: number = TOOL_LIMITS.quotedPathMaxChars): string {
  return JSON.stringify(cutWithMarker(value, maxChars));
}

function marker(removed: number): string {
  return `…[truncated ${removed} chars]`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function firstLine(text: string, maxChars: number): string {
  return cutWithMarker(text.split("\n", 1)[0] ?? "", maxChars);
}
