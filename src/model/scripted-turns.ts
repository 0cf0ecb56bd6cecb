/**
 * The scripted model's turn format (CONTRACT section 7) and its validation. A script is a JSON
 * array of turns; each is checked here once, when the model is built, so a typo fails before any
 * run starts, with the turn index and the field named.
 */
import { z } from "zod";
import { ModelError } from "../errors.js";

/** Token counts a scripted turn reports; they become the message's `usage_metadata`. */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Keys every answering turn may carry. */
export interface ScriptedTurnOptions {
  /** Wait this long before answering; the call's AbortSignal ends the wait at once. */
  delay_ms?: number;
  usage?: ScriptedUsage;
  /** Becomes `response_metadata.finish_reason`; default "tool_calls" when there are tool calls, else "stop". */
  finish_reason?: string;
}

/** A plain answer. */
export interface ScriptedContentTurn extends ScriptedTurnOptions {
  content: string;
}

/**
 * One tool call of a turn: `args` (an object) or `args_json` (the raw argument text as a model
 * would stream it, for testing malformed arguments). `id` defaults to `call_<turn>_<i>`.
 */
export type ScriptedToolCall =
  | { id?: string; name: string; args: Record<string, unknown> }
  | { id?: string; name: string; args_json: string };

/** A message asking for tool calls, optionally with text. */
export interface ScriptedToolCallsTurn extends ScriptedTurnOptions {
  tool_calls: ScriptedToolCall[];
  content?: string;
}

/**
 * One failed attempt: the call fails with this message (after `delay_ms`, if given). `status`
 * (an HTTP status such as 429 or 503) marks the failure transient, so a caller that retries
 * gets the next turn; without it the error is final.
 */
export interface ScriptedErrorTurn {
  error: string;
  status?: number;
  delay_ms?: number;
}

/**
 * One answer of the scripted model. The script is read as positions: each position is any error
 * turns followed by one answer (content or tool calls). The number of AI messages in a call's
 * input picks the position (so a resumed process continues the script); within a position, each
 * attempt of this model instance takes the next turn, the last one repeating.
 */
export type ScriptedTurn = ScriptedContentTurn | ScriptedToolCallsTurn | ScriptedErrorTurn;

/** One problem found in a script; `turn` is the 0-based index, `path` the field inside it. */
export interface ScriptProblem {
  turn: number | null;
  path: string;
  message: string;
}

// setTimeout fires at once for anything above this, so a longer delay would silently be none
const MAX_DELAY_MS = 2_147_483_647;

const usageSchema = z.strictObject({
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
});

const turnOptions = {
  delay_ms: z.number().int().min(0).max(MAX_DELAY_MS).optional(),
  usage: usageSchema.optional(),
  finish_reason: z.string().min(1).optional(),
};

const toolCallId = z.string().min(1).optional();

const toolCallSchema = z.union([
  z.strictObject({ id: toolCallId, name: z.string(), args: z.record(z.string(), z.unknown()) }),
  z.strictObject({ id: toolCallId, name: z.string(), args_json: z.string() }),
]);

const contentTurnSchema = z.strictObject({ content: z.string(), ...turnOptions });
const toolCallsTurnSchema = z.strictObject({
  tool_calls: z.array(z.unknown()).min(1, { error: "expected at least one tool call" }),
  content: z.string().optional(),
  ...turnOptions,
});
const errorTurnSchema = z.strictObject({ error: z.string().min(1), status: z.number().int().min(400).max(599).optional(), delay_ms: turnOptions.delay_ms });

/**
 * Validates a parsed script and returns its turns. Throws one `ModelError` with code
 * `SCRIPT_INVALID` listing every problem (`details.problems`), each naming the turn index and
 * field, e.g. `turn 2: tool_calls[0].args: expected an object`. `source` (a file path) is
 * only used in the message.
 */
export function parseScript(value: unknown, source?: string): ScriptedTurn[] {
  const where = source === undefined ? "" : ` in ${source}`;
  if (!Array.isArray(value)) {
    throw new ModelError("SCRIPT_INVALID", `Invalid scripted model script${where}: expected a JSON array of turns, got ${describe(value)}`, {
      details: { source, problems: [{ turn: null, path: "", message: "expected a JSON array of turns" }] },
    });
  }
  const problems = value.flatMap((turn, index) => checkTurn(turn, index));
  problems.push(...duplicateIds(value, problems));
  if (problems.length > 0) {
    const lines = problems.map((p) => `  turn ${p.turn}: ${p.path === "" ? "" : `${p.path}: `}${p.message}`);
    const heading = `Invalid scripted model script${where} (${problems.length} problem${problems.length === 1 ? "" : "s"}):`;
    throw new ModelError("SCRIPT_INVALID", [heading, ...lines].join("\n"), { details: { source, problems } });
  }
  return value as ScriptedTurn[];
}

function checkTurn(turn: unknown, index: number): ScriptProblem[] {
  if (typeof turn !== "object" || turn === null || Array.isArray(turn)) {
    return [{ turn: index, path: "", message: `expected an object, got ${describe(turn)}` }];
  }
  if ("error" in turn) {
    if ("content" in turn || "tool_calls" in turn) {
      return [{ turn: index, path: "", message: 'an error turn cannot also have "content" or "tool_calls"' }];
    }
    return issues(errorTurnSchema, turn, index, "");
  }
  if ("tool_calls" in turn) {
    const problems = issues(toolCallsTurnSchema, turn, index, "");
    const calls = (turn as { tool_calls: unknown }).tool_calls;
    if (Array.isArray(calls)) calls.forEach((call, i) => problems.push(...checkToolCall(call, index, `tool_calls[${i}]`)));
    return problems;
  }
  if ("content" in turn) return issues(contentTurnSchema, turn, index, "");
  return [{ turn: index, path: "", message: 'expected "content", "tool_calls" or "error"' }];
}

function checkToolCall(call: unknown, turn: number, path: string): ScriptProblem[] {
  if (typeof call !== "object" || call === null || Array.isArray(call)) {
    return [{ turn, path, message: `expected an object, got ${describe(call)}` }];
  }
  const hasArgs = "args" in call;
  const hasJson = "args_json" in call;
  if (hasArgs === hasJson) return [{ turn, path, message: 'expected exactly one of "args" (an object) or "args_json" (a string)' }];
  const schema = hasArgs ? toolCallSchema.options[0] : toolCallSchema.options[1];
  return issues(schema, call, turn, path);
}

function issues(schema: z.ZodType, value: unknown, turn: number, prefix: string): ScriptProblem[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  return result.error.issues
    // tool calls are checked one by one, with better messages than the array's element schema
    .filter((issue) => !(issue.path[0] === "tool_calls" && issue.path.length > 1))
    .map((issue) => ({ turn, path: joinPath(prefix, issue.path), message: explain(issue) }));
}

function explain(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") return `expected ${issue.expected === "record" ? "an object" : issue.expected}`;
  if (issue.code === "unrecognized_keys") return `unknown key${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  return issue.message;
}

function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Tool-call ids must be unique across the script, or results could not be paired with calls. */
function duplicateIds(turns: unknown[], earlier: ScriptProblem[]): ScriptProblem[] {
  if (earlier.length > 0) return [];
  const seen = new Map<string, number>();
  const problems: ScriptProblem[] = [];
  (turns as ScriptedTurn[]).forEach((turn, index) => {
    if (!("tool_calls" in turn)) return;
    turn.tool_calls.forEach((call, i) => {
      const id = call.id ?? defaultToolCallId(index, i);
      const first = seen.get(id);
      if (first === undefined) seen.set(id, index);
      else problems.push({ turn: index, path: `tool_calls[${i}].id`, message: `duplicate tool call id ${JSON.stringify(id)} (first used in turn ${first})` });
    });
  });
  return problems;
}

/** The id a scripted tool call gets when the script gives none: `call_<turn>_<i>`. */
export function defaultToolCallId(turn: number, index: number): string {
  return `call_${turn}_${index}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
