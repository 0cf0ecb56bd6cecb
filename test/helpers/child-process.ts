import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { CHILD_NODE_FLAGS, REPO_ROOT, builtFixture } from "../setup/build-outputs.js";

/** How a child ended. `timedOut` means we killed it for running past its bound. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** A running fixture program and its collected output. */
export interface FixtureChild {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves once the process has exited and been reaped. */
  readonly exited: Promise<ChildExit>;
  stdout(): string;
  stderr(): string;
}

const live = new Set<FixtureChild>();

/**
 * Runs the fixture program `script` (`test/fixtures/NAME.ts`, relative to the repository root or
 * absolute) as `node <its compiled .js> ...args` from the repository root; the global setup
 * compiled it (test/setup/build-outputs.ts). The child is killed with SIGKILL if it runs longer
 * than `timeoutMs`, so no test waits on a child forever. `prefix`: a command that execs the rest
 * (e.g. `ip netns exec <ns>`, which keeps the pid: the child is still node itself).
 */
export function spawnFixture(script: string, args: string[], timeoutMs: number, prefix: readonly string[] = []): FixtureChild {
  const program = builtFixture(script);
  if (!existsSync(program)) throw new Error(`${program} is missing: fixtures are compiled by the integration tests' global setup`);
  // its real path: a fixture starts its main only when argv[1] is its own module's path, which
  // node reports resolved (a node_modules that is a symlink, as in a git worktree, differs)
  const argv = [process.execPath, ...CHILD_NODE_FLAGS, realpathSync(program), ...args];
  const [command, ...rest] = [...prefix, ...argv] as [string, ...string[]];
  const child = spawn(command, rest, {
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
  const handle: FixtureChild = { process: child, pid: child.pid, exited, stdout: () => stdout, stderr: () => stderr };
  live.add(handle);
  return handle;
}

/** Waits until the child's stdout contains `line` as a whole line; rejects on exit or timeout. */
export function waitForLine(child: FixtureChild, line: string, timeoutMs: number): Promise<void> {
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
