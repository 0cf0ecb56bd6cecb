/**
 * A worker child for `npm run bench -- runs`: a runtime with the scripted model on the bench's
 * schema, driven by lines on stdin so the parent controls what is timed.
 *
 *   node [--expose-gc] --import tsx bench/runs-worker.ts '<json RunsWorkerOptions>'
 *
 * Prints `ready` once the runtime is built. Then, one command per stdin line:
 * `start` starts a `runtime.worker()` (prints `started`); `drain` stops it at the next step
 * boundary (prints `drained`); `mem` runs the GC (when exposed) and prints
 * `mem {"rss":…,"heapUsed":…,"heapTotal":…,"external":…}`; `cpu` prints `cpu {"user":µs,"system":µs}`
 * (process.cpuUsage); `stop` drains and exits 0.
 */
import { createInterface } from "node:readline";
import { loadConfig } from "../src/config.js";
import { openDatabase } from "../src/db/open-database.js";
import { ScriptedChatModel } from "../src/model/scripted-model.js";
import type { ScriptedTurn } from "../src/model/scripted-turns.js";
import { createRuntime } from "../src/runtime/runtime.js";
import type { Worker } from "../src/runtime/queue/worker.js";

/** The command-line argument, as JSON. */
export interface RunsWorkerOptions {
  url: string;
  schema: string;
  workspace: string;
  script: ScriptedTurn[];
  concurrency: number;
  /** Extra configuration variables (DEVMIND_LEASE_MS, limits, …). */
  env: Record<string, string>;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as RunsWorkerOptions;
  const db = await openDatabase({ url: options.url, schema: options.schema, maxConnections: options.concurrency + 4 });
  const config = loadConfig({ DEVMIND_WORKSPACE: options.workspace, DEVMIND_MODEL_MAX_RETRIES: "0", ...options.env });
  const runtime = createRuntime({ db, model: new ScriptedChatModel(options.script), config });
  let worker: Worker | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  process.stdout.write("ready\n");
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "start") {
      worker ??= runtime.worker({ concurrency: options.concurrency });
      await worker.start();
      process.stdout.write("started\n");
    } else if (line === "drain") {
      await worker?.stop();
      worker = undefined;
      process.stdout.write("drained\n");
    } else if (line === "mem") {
      gc?.();
      gc?.();
      const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
      process.stdout.write(`mem ${JSON.stringify({ rss, heapUsed, heapTotal, external, gc: gc !== undefined })}\n`);
    } else if (line === "cpu") {
      const { user, system } = process.cpuUsage();
      process.stdout.write(`cpu ${JSON.stringify({ user, system })}\n`);
    } else if (line === "stop") {
      break;
    }
  }
  await runtime.close();
  await db.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
