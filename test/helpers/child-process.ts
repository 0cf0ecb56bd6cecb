import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root; children run from here so `--import tsx` resolves. */
const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** How a child ended. `timedOut` means we killed it for running past its bound. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** A running TypeScript child process and its collected output. */
export interface TsxChild {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves once the process has exited and been reaped. */
  readonly exited: Promise<ChildExit>;
  stdout(): string;
  stderr(): string;
}

const live = new Set<TsxChild>();

/**
 * Runs `node --import tsx <script> ...args` from the repository root. The child is killed with
 * SIGKILL if it runs longer than `timeoutMs`, so no test waits on a child forever.
 */
export function spawnTsx(script: string, args: string[], timeoutMs: number): TsxChild {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${script}`);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const exited = new Promise<ChildExit>((resolve, reject) => {
    child.once("error", reject);
    // `close` comes after `exit` and after the output streams end, so nothing is lost
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      live.delete(handle);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
  const handle: TsxChild = { process: child, pid: child.pid, exited, stdout: () => stdout, stderr: () => stderr };
  live.add(handle);
  return handle;
}

/** Waits until the child's stdout contains `line` as a whole line; rejects on exit or timeout. */
export function waitForLine(child: TsxChild, line: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const has = (): boolean => child.stdout().split("\n").includes(line);
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      child.process.stdout?.removeListener("data", onData);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (): void => {
      if (has()) finish();
    };
    const timer = setTimeout(
      () => finish(new Error(`child ${child.pid} did not print ${JSON.stringify(line)} within ${timeoutMs} ms; stderr: ${child.stderr()}`)),
      timeoutMs,
    );
    child.process.stdout?.on("data", onData);
    void child.exited.then((exit) => {
      if (!has()) finish(new Error(`child ${child.pid} exited (${exit.code ?? exit.signal}) before printing ${JSON.stringify(line)}; stderr: ${exit.stderr}`));
    });
    if (has()) finish();
  });
}

/** SIGKILLs every child still running and waits (bounded) until each is reaped. */
export async function killLiveChildren(timeoutMs = 10_000): Promise<void> {
  const children = [...live];
  for (const child of children) child.process.kill("SIGKILL");
  await Promise.race([
    Promise.allSettled(children.map((child) => child.exited)),
    new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
  ]);
}
