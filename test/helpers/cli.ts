import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
/** tsx's loader by absolute URL, so children may run in any working directory. */
export const TSX_LOADER = import.meta.resolve("tsx");

/** Result of one CLI invocation. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the devmind CLI from source (node + tsx) with exactly `env` (plus PATH), in `cwd`,
 * killing it after `timeoutMs`.
 */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
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
