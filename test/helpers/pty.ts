import { cliCommandLine, spawnCli, type CliChild } from "./cli.js";

/**
 * Runs the CLI from source inside a pseudo-terminal (util-linux `script`), so stdin and stdout
 * are TTYs as for a person at a terminal: the spinner, the streamed answer and the approval
 * prompt are on. Type with `write` (end a line with "\r"), read everything the terminal showed
 * with `stdout()`. `script -e` exits with the CLI's exit code.
 */
export function spawnInPty(args: string[], env: Record<string, string>, options: { cwd: string; timeoutMs?: number }): CliChild {
  return spawnCli([], { TERM: "xterm", ...env }, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs ?? 240_000,
    command: ["script", ["-qfec", cliCommandLine(args), "/dev/null"]],
  });
}
