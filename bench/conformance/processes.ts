import { spawn, type ChildProcess } from "node:child_process";
import { openSync, closeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** How a bounded command ended. */
export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, when not sent to a file. */
  output: string;
}

/** Options of `runBounded` and `startInGroup`. */
export interface SpawnOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Send stdout and stderr to this file (appended) instead of collecting them. */
  logFile?: string;
}

/**
 * Starts a command as the leader of its own process group (detached), so `stopGroup` ends it and
 * every child it started (npm's scripts, tsx's loader, the official server's worker) at once.
 */
export function startInGroup(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const fd = options.logFile === undefined ? undefined : openSync(options.logFile, "a");
  try {
    return spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ["ignore", fd ?? "pipe", fd ?? "pipe"],
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True while the process has not exited (exitCode and signalCode both unset). */
function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * SIGTERM to the child's whole process group, SIGKILL after `graceMs` if the leader is still
 * there, then SIGKILL to the group once more (children that outlived their leader). Never
 * signals anything but this group.
 */
export async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone
    }
  };
  if (running(child)) {
    signalGroup("SIGTERM");
    const deadline = Date.now() + graceMs;
    while (running(child) && Date.now() < deadline) await sleep(100);
  }
  signalGroup("SIGKILL");
}

/** Waits for the child's exit; resolves with its code and signal. */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (!running(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/**
 * Runs a command to its end or `timeoutMs`, whichever is first; on timeout its process group is
 * stopped and `timedOut` is set. Never rejects for a non-zero exit: the caller decides.
 */
export async function runBounded(command: string, args: readonly string[], options: SpawnOptions & { timeoutMs: number }): Promise<CommandResult> {
  const child = startInGroup(command, args, options);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stopGroup(child, 5_000);
  }, options.timeoutMs);
  try {
    const { code, signal } = await exited(child);
    return { code, signal, timedOut, output };
  } finally {
    clearTimeout(timer);
    // a finished leader may leave children behind (e.g. a watcher): end the group
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Throws with the command's tail output unless it exited 0 in time. */
export function assertSucceeded(what: string, result: CommandResult): void {
  if (result.code === 0 && !result.timedOut) return;
  const why = result.timedOut ? "timed out" : `exited ${result.code ?? result.signal}`;
  const tail = result.output.trimEnd().split("\n").slice(-30).join("\n");
  throw new Error(`${what} ${why}${tail === "" ? "" : `:\n${tail}`}`);
}
