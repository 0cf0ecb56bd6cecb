/**
 * `/health` answers for the deployment, not the process (issue 37, PostgreSQL): a server with
 * `--workers 0` (it executes nothing itself) and a worker of its own (another runtime, another
 * pool: another process as far as the database can tell) on a database whose tablespace is a
 * small tmpfs, in a PostgreSQL cluster the test starts for it. The disk fills while runs are queued: the worker's writes are refused, and the
 * server's `/health` says `degraded` (refusing_writes) from then on — sampled every 250 ms while
 * the disk stays full, every sample degraded — and `ok` once space is back and the runs finish.
 * The server's 503s during an outage are logged once (`request.unavailable`), not per request.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer } from "../../src/server/start-server.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { createFaultDatabase, createSmallDisk, fillDisk, injectDiskFull } from "../helpers/fault-database.js";
import { captureLog } from "../helpers/log-lines.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[health-deployment] cleanup failed: ${String(error)}`);
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * How long the test samples `/health` while the disk stays full, and how often. The full
 * tablespace is in a cluster of the test's own (`createSmallDisk`): no other file's session meets it.
 */
const SAMPLE_MS = 8_000;
const SAMPLE_EVERY_MS = 250;

interface Process {
  db: Database;
  runtime: Runtime;
}

async function open(url: string, workspace: string, wrap?: (db: Database) => Database): Promise<Process> {
  const opened = await openDatabase({ url, schema: "devmind", maxConnections: 4, connectionTimeoutMs: 2_000 });
  cleanups.push(() => opened.close());
  const db = wrap?.(opened) ?? opened;
  const config = loadConfig({ DEVMIND_LEASE_MS: "5000", DEVMIND_WORKSPACE: workspace });
  const runtime = createRuntime({ db, model: new ScriptedChatModel([{ content: "done", delay_ms: 200 }]), config });
  cleanups.push(() => runtime.close());
  return { db, runtime };
}

describe.runIf(TEST_DATABASE_URL !== undefined)("/health answers for the deployment (PostgreSQL)", () => {
  it("a full tablespace seen by a separate worker: the --workers 0 server's /health is degraded within seconds, stays degraded while full, ok once space is back", async (context) => {
    const made = await createSmallDisk(40);
    if (made.kind !== "disk") {
      console.warn(`[health-deployment] full disk skipped: ${made.kind === "skip" ? made.why : "no tmpfs here (needs root)"}`);
      context.skip();
      return;
    }
    const disk = made.disk;
    cleanups.push(() => disk.remove());
    const fault = await createFaultDatabase({ tablespace: disk.tablespace, serverUrl: disk.serverUrl });
    cleanups.push(() => fault.drop());
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-health-")));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const serverSide = await open(fault.url, workspace);
    await migrate(serverSide.db);
    const workerSide = await open(fault.url, workspace);
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace });
    const server = await startServer({ runtime: serverSide.runtime, config, host: "127.0.0.1", port: 0, workers: 0 });
    cleanups.push(() => server.close());
    const health = async (): Promise<{ status: string; database: string }> => (await (await fetch(`${server.url}/health`)).json()) as { status: string; database: string };
    expect(await health()).toMatchObject({ status: "ok", database: "ok" });

    const runs = await Promise.all(Array.from({ length: 6 }, (_, index) => serverSide.runtime.runs.create({ input: { messages: [`run ${index}`] } })));
    const free = await fillDisk(fault.url);
    let freed = false;
    cleanups.push(() => (freed ? undefined : free()));
    const worker = workerSide.runtime.worker({ concurrency: 2 });
    await worker.start();
    cleanups.push(() => worker.stop());
    await until(() => worker.health().state === "storage_failing", 60_000, "the worker to see its writes refused");
    // the server executes nothing and its own probe fits: it knows from the worker
    await until(async () => (await health()).status === "degraded", 30_000, "the server's /health to turn degraded");

    const samples: string[] = [];
    const sampleEnds = Date.now() + SAMPLE_MS;
    while (Date.now() < sampleEnds) {
      const answer = await health();
      samples.push(`${answer.status}/${answer.database}`);
      await sleep(SAMPLE_EVERY_MS);
    }
    const degraded = samples.filter((sample) => sample === "degraded/refusing_writes").length;
    console.log(`health-deployment samples: degraded ${degraded} / all ${samples.length} while the tablespace stayed full`);
    expect(samples.length).toBeGreaterThan(10);
    expect(samples.filter((sample) => sample !== "degraded/refusing_writes")).toEqual([]);

    await free();
    freed = true;
    await until(async () => (await Promise.all(runs.map((run) => serverSide.runtime.runs.get(run.run_id)))).every((run) => run.status === "success"), 120_000, "every run to succeed once space is back");
    let last: unknown = null;
    await until(async () => {
      const answer = await health();
      last = answer;
      return answer.status === "ok";
    }, 30_000, "the server's /health to be ok again").catch((error: unknown) => {
      throw new Error(`${String(error)}: last ${JSON.stringify(last)}`);
    });
  }, 300_000);

  it("503s of one outage are logged once at level error, not per request", async () => {
    const fault = await createFaultDatabase();
    cleanups.push(() => fault.drop());
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-health-")));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    let injected: ReturnType<typeof injectDiskFull> | undefined;
    const side = await open(fault.url, workspace, (db) => {
      injected = injectDiskFull(db);
      return injected.db;
    });
    await migrate(side.db);
    const log = captureLog();
    const server = await startServer({ runtime: side.runtime, config: loadConfig({ DEVMIND_WORKSPACE: workspace }), host: "127.0.0.1", port: 0, workers: 0, logger: log.logger });
    cleanups.push(() => server.close());
    injected?.setFull(true);
    const statuses: number[] = [];
    for (let index = 0; index < 12; index += 1) {
      const response = await fetch(`${server.url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual(statuses.map(() => 503));
    const errors = log.lines().filter((line) => line["level"] === 50 || line["level"] === "error");
    expect(errors.map((line) => [line["event"], line["code"]])).toEqual([["request.unavailable", "DATABASE_WRITE_FAILED"]]);
  }, 60_000);
});
