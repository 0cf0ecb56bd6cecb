import { spawn } from "node:child_process";
import { BUILT_CLI, CHILD_NODE_FLAGS, REPO_ROOT as ROOT } from "../setup/build-outputs.js";

/** Result of one CLI invocation. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built devmind CLI (`node dist/src/cli/main.js`, built by the global setup) with
 * exactly `env` (plus PATH), in `cwd`, killing it after `timeoutMs`.
 */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, BUILT_CLI, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 180_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The command line that runs the built CLI, for wrappers such as `script -c` (quoted for sh). */
export function cliCommandLine(args: string[]): string {
  return [process.execPath, ...CHILD_NODE_FLAGS, BUILT_CLI, ...args].map(shellQuote).join(" ");
}

/** Quotes one word for `sh -c`. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A CLI process still running: its output so far, waits on it, and its end. */
export interface CliChild {
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves when `test(stdout)` holds; rejects if the process ends first or after `timeoutMs`. */
  waitFor(test: (stdout: string) => boolean, timeoutMs?: number): Promise<void>;
  write(text: string): void;
  /** Closes its stdin (end of input). */
  endInput(): void;
  kill(signal: NodeJS.Signals): void;
  readonly exited: Promise<CliResult>;
}

const running = new Set<CliChild>();

/**
 * Starts the built CLI like `runCli`, but returns at once so a test can watch its output,
 * type into its stdin (a pipe), or signal it. Killed with SIGKILL after `timeoutMs`.
 */
export function spawnCli(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number; command?: [string, string[]] } = {}): CliChild {
  const [file, argv] = options.command ?? [process.execPath, [...CHILD_NODE_FLAGS, BUILT_CLI, ...args]];
  const child = spawn(file, argv, { cwd: options.cwd ?? ROOT, env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const watchers = new Set<() => void>();
  let closed = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const watcher of [...watchers]) watcher();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 240_000);
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      closed = true;
      running.delete(handle);
      for (const watcher of [...watchers]) watcher();
      resolve({ code, stdout, stderr });
    });
  });
  const handle: CliChild = {
    pid: child.pid ?? 0,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor(test, timeoutMs = 180_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (test(stdout)) finish();
          else if (closed) finish(new Error(`CLI exited (${child.exitCode}) before the awaited output; stdout:\n${stdout}\nstderr:\n${stderr}`));
        };
        const timeout = setTimeout(() => finish(new Error(`awaited output not seen within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`)), timeoutMs);
        function finish(error?: Error): void {
          clearTimeout(timeout);
          watchers.delete(check);
          if (error === undefined) resolve();
          else reject(error);
        }
        watchers.add(check);
        check();
      });
    },
    write: (text) => void child.stdin.write(text),
    endInput: () => void child.stdin.end(),
    kill: (signal) => void child.kill(signal),
    exited,
  };
  running.add(handle);
  return handle;
}

/** SIGKILLs every CLI child still running and waits (bounded) for each to end. */
export async function killCliChildren(timeoutMs = 10_000): Promise<void> {
  const children = [...running];
  for (const child of children) child.kill("SIGKILL");
  await Promise.race([Promise.allSettled(children.map((c) => c.exited)), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
}
