import { CONFORMANCE } from "./conformance-constants.js";

/** Thrown when the test file does not hold the one line the script may change. */
export class ApiUrlLineMissingError extends Error {
  constructor(file: string) {
    super(`${file}: the line ${JSON.stringify(CONFORMANCE.apiUrlLine)} was not found exactly once; the official test file changed, so the script refuses to guess`);
    this.name = "ApiUrlLineMissingError";
  }
}

/**
 * The official test file with only its `const API_URL = "http://localhost:2024";` line pointing at
 * `port` (the tests never run on 2024 here, which other sessions may use). Every other byte stays,
 * so what runs is the official check. Throws ApiUrlLineMissingError unless the line occurs exactly
 * once (whole line, surrounding whitespace allowed).
 */
export function rewriteApiUrl(source: string, port: number, file = "api.test.mts"): string {
  const lines = source.split("\n");
  const matches = lines.flatMap((line, index) => (line.trim() === CONFORMANCE.apiUrlLine ? [index] : []));
  if (matches.length !== 1) throw new ApiUrlLineMissingError(file);
  const index = matches[0] as number;
  lines[index] = (lines[index] as string).replace("http://localhost:2024", `http://localhost:${port}`);
  return lines.join("\n");
}
