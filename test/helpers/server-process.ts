import { spawn, type ChildProcess } from "node:child_process";
import { BUILT_CLI, CHILD_NODE_FLAGS, REPO_ROOT as ROOT } from "../setup/build-outputs.js";
const LISTENING = /^devmind (?:serve|dev): listening on (http:\/\/\S+) /m;

/** A `devmind serve` child process. */
export interface ServeProcess {
  url: string;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code once it exited (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<number | null>;
}

/**
 * Starts the built `devmind serve ARGS` (or `options.command`, e.g. `dev`, in `options.cwd`) with
 * exactly `env` (plus PATH) and resolves once it printed its URL; rejects if it exits first or
 * does not listen within `timeoutMs` (then it is killed). The caller stops it.
 */
export function spawnServe(args: string[], env: Record<string, string>, timeoutMs = 60_000, options: { command?: "serve" | "dev"; cwd?: string } = {}): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, [...CHILD_NODE_FLAGS, BUILT_CLI, options.command ?? "serve", ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const stop = async (stopTimeoutMs = 30_000): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not listen within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    const onData = (): void => {
      const match = LISTENING.exec(stdout);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout?.removeListener("data", onData);
      resolve({ url: match[1] as string, pid: child.pid as number, stdout: () => stdout, stderr: () => stderr, stop });
    };
    child.stdout?.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${String(code)}) before listening; stderr: ${stderr}`));
    });
  });
}
