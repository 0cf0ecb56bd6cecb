import { parseArgs } from "node:util";

/** Variables naming the PostgreSQL server a bench uses, in order of preference. */
export const URL_VARIABLES = ["DEVMIND_BENCH_DATABASE_URL", "DEVMIND_TEST_DATABASE_URL", "DATABASE_URL"] as const;

/** Most rounds a bench accepts. */
export const MAX_ROUNDS = 50;

/** The first non-empty URL variable, or undefined. Benches read only the real environment. */
export function benchDatabaseUrl(): string | undefined {
  return URL_VARIABLES.map((name) => process.env[name]).find((value) => value !== undefined && value !== "");
}

/** What to print when no URL is configured, for the bench named `bench`. */
export function missingUrlMessage(bench: string): string {
  return (
    `${bench} bench: no PostgreSQL configured. Set DEVMIND_BENCH_DATABASE_URL (or DEVMIND_TEST_DATABASE_URL, or DATABASE_URL), ` +
    `e.g. DEVMIND_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench -- ${bench}`
  );
}

/** A URL safe to print: the password masked. */
export function printableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable URL)";
  }
}

/** `--rounds` as an integer from 1 to MAX_ROUNDS (default 3), or undefined when invalid. */
export function parseRounds(value: string | undefined): number | undefined {
  if (value === undefined) return 3;
  const rounds = Number(value);
  return Number.isInteger(rounds) && rounds >= 1 && rounds <= MAX_ROUNDS ? rounds : undefined;
}

/** What `parseBenchArgs` gives back: the options and rounds, or the exit code to return at once. */
export type ParsedBenchArgs = { exit: number } | { values: Record<string, string | boolean | undefined>; rounds: number };

/**
 * Parses a bench's arguments: `--rounds N` and `--help` for every bench, plus `options` (string or
 * boolean flags). Prints usage or the error and returns an exit code (0 help, 2 bad arguments)
 * when the bench should stop.
 */
export function parseBenchArgs(args: readonly string[], options: Record<string, { type: "string" | "boolean" }>, usage: string): ParsedBenchArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...args], options: { ...options, rounds: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    return { exit: 2 };
  }
  if (values["help"] === true) {
    console.log(usage);
    return { exit: 0 };
  }
  const raw = values["rounds"];
  const rounds = parseRounds(typeof raw === "string" ? raw : undefined);
  if (rounds === undefined) {
    console.error(`--rounds must be an integer from 1 to ${MAX_ROUNDS}, got ${JSON.stringify(raw)}\n${usage}`);
    return { exit: 2 };
  }
  return { values, rounds };
}
