/**
 * Arguments folded to one short line for the timeline and the approval prompt:
 * `{path: "a.txt", content: "…long…"}` -> `path="a.txt", content="# Summary of the d…"`. Each value
 * is JSON with newlines escaped; long strings are cut first, then the whole line.
 */
export function foldArgs(args: unknown, maxChars: number): string {
  if (args === undefined || args === null) return "";
  if (typeof args !== "object" || Array.isArray(args)) return cut(JSON.stringify(args) ?? "", maxChars);
  const entries = Object.entries(args as Record<string, unknown>);
  const perValue = Math.max(12, Math.floor(maxChars / Math.max(1, entries.length)) - 4);
  const text = entries.map(([key, value]) => `${key}=${cut(JSON.stringify(value) ?? "undefined", perValue)}`).join(", ");
  return cut(text, maxChars);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}

/**
 * A graph's values folded for a person, one line per top-level key (`topic: "durable runs"`),
 * each at most `maxChars`: long JSON is cut, a long list says how many items it has, and a list
 * of LangChain messages (as plain JSON, `{type, content, tool_calls?}`) is shown by its count and
 * its last message. A value that is not an object is one line. Nothing for `{}`, null or undefined.
 */
export function foldValues(values: unknown, maxChars: number): string[] {
  if (values === undefined || values === null) return [];
  if (typeof values !== "object" || Array.isArray(values)) return [foldValue(values, maxChars)];
  return Object.entries(values as Record<string, unknown>).map(([key, value]) => `${key}: ${foldValue(value, Math.max(12, maxChars - key.length - 2))}`);
}

function foldValue(value: unknown, max: number): string {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isMessage)) {
      const last = value.at(-1) as PlainMessage;
      return cut(`${value.length} message${value.length === 1 ? "" : "s"}, last ${String(last.type)}: ${messageText(last)}`, max);
    }
    const text = JSON.stringify(value);
    const count = ` (${value.length} items)`;
    return text.length > max ? `${cut(text, Math.max(12, max - count.length))}${count}` : text;
  }
  return cut(JSON.stringify(value) ?? "undefined", max);
}

interface PlainMessage {
  type: unknown;
  content: unknown;
  tool_calls?: unknown;
}

function isMessage(value: unknown): value is PlainMessage {
  return value !== null && typeof value === "object" && typeof (value as { type?: unknown }).type === "string" && "content" in value;
}

/** A message's text (its content, or the tools it calls when it has none), as JSON on one line. */
function messageText(message: PlainMessage): string {
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as { name?: unknown }[]).map((call) => String(call.name)) : [];
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  if ((content === "" || content === "[]") && calls.length > 0) return `calls ${calls.join(", ")}`;
  return JSON.stringify(content) ?? "";
}
