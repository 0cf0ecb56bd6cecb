/** Thrown when the test file does not hold the one line the script may change. */
export class ApiUrlLineMissingError extends Error {
  constructor(file: string, found: number) {
    super(`${file}: a line \`const API_URL = "http://localhost:PORT";\` was found ${found} times, not exactly once; the official test file changed, so the script refuses to guess`);
    this.name = "ApiUrlLineMissingError";
  }
}

/** The one line rewritten: `const API_URL = "http://localhost:PORT";` (api.test.mts has 2024, auth.test.mts 2025). */
const API_URL_LINE = /^const API_URL = "http:\/\/localhost:(\d+)";$/;

/**
 * The official test file with only its `const API_URL = "http://localhost:NNNN";` line pointing at
 * `port` (the tests never run on their own port here, which other sessions may use). Every other
 * byte stays, so what runs is the official check. Throws ApiUrlLineMissingError unless the line
 * occurs exactly once (whole line, surrounding whitespace allowed).
 */
export function rewriteApiUrl(source: string, port: number, file = "api.test.mts"): string {
  const lines = source.split("\n");
  const matches = lines.flatMap((line, index) => (API_URL_LINE.test(line.trim()) ? [index] : []));
  if (matches.length !== 1) throw new ApiUrlLineMissingError(file, matches.length);
  const index = matches[0] as number;
  const line = lines[index] as string;
  const official = (API_URL_LINE.exec(line.trim()) as RegExpExecArray)[1] as string;
  lines[index] = line.replace(`http://localhost:${official}`, `http://localhost:${port}`);
  return lines.join("\n");
}
