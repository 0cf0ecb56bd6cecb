/** Thrown when the test file's `beforeAll` is not the block the script knows how to point elsewhere. */
export class BeforeAllBlockError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}; the official test file changed, so the script refuses to guess`);
    this.name = "BeforeAllBlockError";
  }
}

/** The block's first line and last line, at column 0 (a top-level hook). */
const OPEN = "beforeAll(async () => {";
const CLOSE = "});";

/**
 * The official test file with only its top-level `beforeAll(async () => { ... });` block replaced
 * by one that sets `urlVariable` to `http://localhost:PORT` (the server under test) after the
 * block's own `keep` lines (e.g. `checkpointer = new MemorySaver();`, which a test reads later).
 * The original block started a server in the test process; every other line stays byte for byte
 * (its imports too, loaded and unused). `useServerHistory` (`--server-history`): the block's
 * `serverHistory` lines, after the URL, instead of the `keep` lines. Throws BeforeAllBlockError unless the file has exactly one
 * such block, the block assigns `urlVariable`, and it holds each `keep` line.
 */
export function rewriteBeforeAll(source: string, port: number, options: { urlVariable: string; keep: readonly string[]; serverHistory?: readonly string[] | undefined }, file = "stream-sdk.test.mts", useServerHistory = false): string {
  const lines = source.split("\n");
  const opens = lines.flatMap((line, index) => (line.trimEnd() === OPEN ? [index] : []));
  if (opens.length !== 1) throw new BeforeAllBlockError(file, `a top-level \`${OPEN}\` line was found ${opens.length} times, not exactly once`);
  const start = opens[0] as number;
  const end = lines.findIndex((line, index) => index > start && line.trimEnd() === CLOSE);
  if (end === -1) throw new BeforeAllBlockError(file, `the beforeAll block at line ${start + 1} has no top-level \`${CLOSE}\``);
  const body = lines.slice(start + 1, end).map((line) => line.trim());
  if (!body.some((line) => line.startsWith(`${options.urlVariable} = `))) {
    throw new BeforeAllBlockError(file, `the beforeAll block at line ${start + 1} does not set ${options.urlVariable}`);
  }
  for (const kept of options.keep) {
    if (!body.includes(kept)) throw new BeforeAllBlockError(file, `the beforeAll block at line ${start + 1} has no line \`${kept}\``);
  }
  const replacement = [
    OPEN,
    "  // npm run conformance: the server under test runs apart; this block replaced the one that started one here",
    ...(useServerHistory ? [] : options.keep.map((line) => `  ${line}`)),
    `  ${options.urlVariable} = "http://localhost:${port}";`,
    ...(useServerHistory ? (options.serverHistory ?? []).map((line) => `  ${line}`) : []),
    CLOSE,
  ];
  return [...lines.slice(0, start), ...replacement, ...lines.slice(end + 1)].join("\n");
}
