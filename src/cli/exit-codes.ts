import { DevmindError } from "../errors.js";

/** Exit codes of the `devmind` CLI (CONTRACT section 7). */
export const EXIT = {
  success: 0,
  runFailed: 1,
  usage: 2,
  awaitingApproval: 3,
  cancelled: 4,
} as const;

/**
 * Prints an error for a person (one line, the code in brackets) and returns the exit code:
 * 2 for user errors (bad config, locked data directory, bad input), 1 for everything else.
 */
export function reportError(error: unknown, write: (line: string) => void = (line) => process.stderr.write(line)): number {
  if (error instanceof DevmindError) {
    write(`devmind: ${error.message} [${error.code}]\n`);
    return error.kind === "user" ? EXIT.usage : EXIT.runFailed;
  }
  write(`devmind: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT.runFailed;
}
