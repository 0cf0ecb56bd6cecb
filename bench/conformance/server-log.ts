/**
 * Lines of a server's log that show a server-side failure: devmind's `"event":"request.failed"`
 * (logged for every 5xx), a JSON `"status":5xx`, or an access-log style `--> METHOD /path 5xx`
 * (the official server's request log, coloured: ANSI codes are removed first). Pure: the caller
 * reads the file.
 */
export function serverErrorLines(logText: string): string[] {
  return logText
    .split("\n")
    .map(withoutAnsi)
    .filter((line) => SERVER_ERROR_PATTERNS.some((pattern) => pattern.test(line)));
}

/** The text without ANSI colour codes. */
export function withoutAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

const SERVER_ERROR_PATTERNS: readonly RegExp[] = [
  /request\.failed/,
  /"status"\s*:\s*5\d\d\b/,
  /\b(GET|POST|PUT|PATCH|DELETE)\s+\S+\s+5\d\d\b/,
];

/** The last `count` lines of a log (for a start failure). */
export function logTail(logText: string, count: number): string {
  const lines = logText.trimEnd().split("\n");
  return lines.slice(Math.max(0, lines.length - count)).join("\n");
}
