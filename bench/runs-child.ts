import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RunsWorkerOptions } from "./runs-worker.js";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
const WORKER_SCRIPT = "bench/runs-worker.ts";

/** A `bench/runs-worker.ts` child and its line protocol. */
export interface WorkerChild {
  readonly pid: number;
  /** Writes one command line (see bench/runs-worker.ts). */
  send(command: "start" | "drain" | "mem" | "cpu" | "stop"): void;
  /** The first stdout line (from now or already printed) starting with `prefix`; rejects on exit or after `timeoutMs`. */
  line(prefix: string, timeoutMs: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>;
}

const live = new Set<ChildProcess>();

/**
 * Starts a worker child (`node [--expose-gc] --import tsx bench/runs-worker.ts <json>`) from the
 * repository root. It is SIGKILLed after `boundMs` at the latest, so no bench waits on a child forever.
 */
export function spawnWorker(options: RunsWorkerOptions, settings: { exposeGc?: boolean; boundMs: number }): WorkerChild {
  const args = [...(settings.exposeGc === true ? ["--expose-gc"] : []), "--import", "tsx", WORKER_SCRIPT, JSON.stringify(options)];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error("runs bench: could not spawn a worker child");
  live.add(child);
  let stdout = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const wake of [...waiters]) wake();
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const bound = setTimeout(() => child.kill("SIGKILL"), settings.boundMs);
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => {
      gone = true;
      clearTimeout(bound);
      live.delete(child);
      for (const wake of [...waiters]) wake();
      resolve();
    });
  });
  let consumed = 0;
  return {
    pid: child.pid,
    send: (command) => void child.stdin?.write(`${command}\n`),
    line(prefix, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const lines = stdout.split("\n");
          for (let i = consumed; i < lines.length - 1; i += 1) {
            if (lines[i]?.startsWith(prefix) === true) {
              consumed = i + 1;
              finish();
              resolve(lines[i] as string);
              return;
            }
          }
          if (gone) {
            finish();
            reject(new Error(`runs bench: worker ${child.pid} exited before printing ${JSON.stringify(prefix)}; stderr: ${stderr.slice(-2_000)}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`runs bench: worker ${child.pid} did not print ${JSON.stringify(prefix)} within ${timeoutMs} ms; stderr: ${stderr.slice(-2_000)}`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    kill: (signal = "SIGKILL") => void child.kill(signal),
    exited,
  };
}

/** SIGKILLs every worker child still running (the bench's cleanup). */
export async function killAllWorkers(): Promise<void> {
  const children = [...live];
  for (const child of children) child.kill("SIGKILL");
  await Promise.race([
    Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once("close", resolve))))),
    new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
  ]);
}
