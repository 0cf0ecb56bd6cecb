import { DevmindError } from "../errors.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { redactText } from "../secret-redaction.js";
import { cliName } from "./cli-name.js";

/** Exit codes of the `devmind` CLI (CONTRACT section 7). */
export const EXIT = {
  success: 0,
  runFailed: 1,
  usage: 2,
  awaitingApproval: 3,
  cancelled: 4,
} as const;

/**
 * The exit code a command that ran or continued a run ends with (CONTRACT section 7): 0 success,
 * 1 error or timeout, 3 the run ended at an interrupt (its thread waits for an approval or a
 * value), 4 cancelled (status `interrupted`). `pending` / `running` (the run continues
 * elsewhere, e.g. after `--detach`) are 0: the command did what it was asked. A run with calls
 * whose outcome is unknown (`unknown_outcomes`) keeps its status's code — 0 for a success: the
 * run did finish, the model was told (TOOL_OUTCOME_UNKNOWN) and answered knowing it; the CLI
 * prints a warning naming the calls, and `--json`'s result carries them for scripts to check.
 */
export function exitForRun(run: Pick<RunRecord, "status" | "stop_reason">): number {
  if (run.status === "success") return run.stop_reason === "interrupt" ? EXIT.awaitingApproval : EXIT.success;
  if (run.status === "error" || run.status === "timeout") return EXIT.runFailed;
  if (run.status === "interrupted") return EXIT.cancelled;
  return EXIT.success;
}

/** A hint printed under an error with this code, pointing at the command that helps (the real run id when known). */
const HINTS: Partial<Record<string, (details: Record<string, unknown>) => string>> = {
  RUN_NOT_FOUND: () => "`devmind runs` lists recent runs",
  RUN_CONFLICT: (details) => (typeof details["runId"] === "string" ? `\`${cliName()} show ${details["runId"]}\` shows where the run is` : "`devmind runs` lists recent runs and their status"),
  DATABASE_LOCKED: () => "the embedded database serves one process; set DATABASE_URL=postgres://… to run several",
};

/**
 * Prints an error for a person (one line, the code in brackets) and returns the exit code:
 * 2 for user errors (bad config, locked data directory, bad input), 1 for everything else.
 * Every line goes through `redact` (the process's redactor: configured secret values and secret
 * patterns), so an error quoting a key or the database password never prints it.
 */
export function reportError(error: unknown, write: (line: string) => void = (line) => process.stderr.write(line), redact: (text: string) => string = redactText): number {
  const out = (line: string): void => write(redact(line));
  if (error instanceof DevmindError) {
    out(`devmind: ${error.message} [${error.code}]\n`);
    const hint = HINTS[error.code];
    if (hint !== undefined && error.kind === "user") out(`hint: ${hint(error.details)}\n`);
    return error.kind === "user" ? EXIT.usage : EXIT.runFailed;
  }
  out(`devmind: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.runFailed;
}
