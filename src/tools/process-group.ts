import { spawn } from "node:child_process";
import { ToolFailure } from "./tool-failure.js";

/** What `runInProcessGroup` runs and how it bounds it. */
export interface ProcessGroupOptions {
  /** Text for `/bin/sh -c`. */
  command: string;
  /** Working directory (already confined by the caller). */
  cwd: string;
  /** The whole environment of the command: nothing is inherited. */
  env: Record<string, string>;
  /** After this long the group gets SIGTERM (then SIGKILL) and the outcome says `timedOut`. */
  timeoutMs: number;
  /** Aborting it kills the group the same way and rejects with the signal's reason. */
  signal: AbortSignal;
  /** Bytes kept of stdout and of stderr each; more is counted in `*Dropped`. */
  maxBytes: number;
  /** SIGTERM -> SIGKILL delay. */
  killGraceMs: number;
  /** Once the shell exited, how long its pipes may stay open (held by a detached grandchild). */
  closeWaitMs: number;
}

/** How a command ended. `exitCode` is null when a signal ended the shell (`signal` says which). */
export interface ProcessGroupOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: Buffer;
  stderr: Buffer;
  stdoutDropped: number;
  stderrDropped: number;
}

/**
 * Runs `/bin/sh -c command` as the leader of a new process group and ends the whole group —
 * grandchildren included — on timeout, on abort, and once the shell itself exits (so nothing a
 * command started in the background outlives the call).
 *
 * Why a group: killing only the shell leaves `sleep 100 &` or a pipeline's other members running
 * with the call long "finished". `detached: true` makes the shell a group leader, and
 * `process.kill(-pid)` signals every member: SIGTERM first, SIGKILL `killGraceMs` later. Output
 * is captured up to `maxBytes` per stream (the rest is drained and counted, so a chatty command
 * never blocks on a full pipe), stdin is closed. Every wait is bounded.
 *
 * @throws ToolFailure TOOL_FAILED when the shell cannot be started; the abort reason on abort.
 */
export function runInProcessGroup(options: ProcessGroupOptions): Promise<ProcessGroupOutcome> {
  options.signal.throwIfAborted();
  return new Promise<ProcessGroupOutcome>((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", options.command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    const out = capture(options.maxBytes);
    const err = capture(options.maxBytes);
    child.stdout.on("data", out.add);
    child.stderr.on("data", err.add);
    let timedOut = false;
    let killed = false;
    let settled = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let closeTimer: ReturnType<typeof setTimeout> | undefined;

    const killGroup = (): void => {
      if (killed || child.pid === undefined) return;
      killed = true;
      signalGroup(child.pid, "SIGTERM");
      const pid = child.pid;
      setTimeout(() => signalGroup(pid, "SIGKILL"), options.killGraceMs).unref();
    };
    const cleanup = (): void => {
      settled = true;
      clearTimeout(timer);
      if (closeTimer !== undefined) clearTimeout(closeTimer);
      options.signal.removeEventListener("abort", onAbort);
    };
    const finish = (): void => {
      if (settled) return;
      cleanup();
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut,
        stdout: out.bytes(),
        stderr: err.bytes(),
        stdoutDropped: out.dropped(),
        stderrDropped: err.dropped(),
      });
    };
    const onAbort = (): void => {
      killGroup();
      if (settled) return;
      cleanup();
      child.stdout.destroy();
      child.stderr.destroy();
      reject(options.signal.reason);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    options.signal.addEventListener("abort", onAbort, { once: true });

    child.once("error", (error) => {
      killGroup();
      if (settled) return;
      cleanup();
      reject(new ToolFailure("TOOL_FAILED", `could not start /bin/sh: ${(error as NodeJS.ErrnoException).code ?? error.message}`, { cause: error }));
    });
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      // whatever the shell left running in its group ends with it
      killGroup();
      closeTimer = setTimeout(finish, options.closeWaitMs);
    });
    child.once("close", finish);
  });
}

/** Signals every process of group `pid`; a group already gone is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nobody left in the group
  }
}

/** Keeps the first `maxBytes` of a stream and counts the rest. */
function capture(maxBytes: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    add: (chunk: Buffer): void => {
      const room = maxBytes - kept;
      if (room <= 0) {
        dropped += chunk.length;
        return;
      }
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      chunks.push(part);
      kept += part.length;
      dropped += chunk.length - part.length;
    },
    bytes: (): Buffer => Buffer.concat(chunks),
    dropped: (): number => dropped,
  };
}
