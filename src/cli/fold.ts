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
