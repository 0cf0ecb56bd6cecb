/**
 * Database faults on PostgreSQL, in one process: a connection dying inside a transaction, backends
 * killed while runs execute, a stall longer than the pool's connect timeout and the lease, a
 * database refusing writes, and an SDK stream across a backend kill. Each run does non-idempotent
 * side effects through a tool that records (run, call) pairs, so a duplicate would show.
 * Multi-process faults (devmind serve + devmind worker) are in db-faults-processes.int.test.ts.
 */
import { appendFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { createLogger } from "../../src/logger.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { retryDatabaseFaults } from "../../src/runtime/execution/backoff.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer } from "../../src/server/start-server.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { createFaultDatabase, createSmallDisk, fillDisk, injectDiskFull, type FaultDatabase } from "../helpers/fault-database.js";
import { startPgProxy } from "../helpers/pg-proxy.js";
import type { EventRecord } from "../helpers/events.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[db-faults] cleanup failed: ${String(error)}`);
    }
  }
});

/** Backend kills made while runs are running (at most), and how many must have landed so (at least). */
const KILLS_WHILE_RUNNING = 8;
const MIN_KILLS_WHILE_RUNNING = 4;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true (bounded); a check failing on the faulty database counts as false. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** The scripted model: two side-effecting calls (one step each), then an answer. */
const SCRIPT: ScriptedTurn[] = [
  { tool_calls: [{ name: "mark", args: { label: "first" } }], delay_ms: 150 },
  { tool_calls: [{ name: "mark", args: { label: "second" } }], delay_ms: 150 },
  { content: "done", delay_ms: 100 },
];

/** A log of side effects: one line `run_id label` per executed call (appended, not idempotent). */
function sideEffectLog(): { path: string; tool: ReturnType<typeof defineTool>; lines: () => string[] } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-faults-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "effects.log");
  const tool = defineTool({
    name: "mark",
    description: "Record a side effect.",
    schema: z.object({ label: z.string() }),
    sideEffect: "local",
    approval: false,
    idempotent: false,
    execute: async ({ label }, context) => {
      appendFileSync(path, `${context.runId} ${label}\n`);
      return { recorded: label };
    },
  });
  const lines = (): string[] => {
    try {
      return readFileSync(path, "utf8").split("\n").filter((line) => line !== "");
    } catch {
      return [];
    }
  };
  return { path, tool, lines };
}

/** Captured JSON log lines of a logger. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: () => { event?: string; msg?: string }[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    logger: createLogger({ level: "debug", destination }),
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as { event?: string; msg?: string }),
  };
}

interface Harness {
  config: ReturnType<typeof loadConfig>;
  fault: FaultDatabase;
  db: Database;
  runtime: Runtime;
  effects: ReturnType<typeof sideEffectLog>;
  log: ReturnType<typeof capturedLogger>;
  createRuns(count: number): Promise<RunRecord[]>;
}

async function harness(options: {
  leaseMs: number;
  url?: (url: string) => string;
  connectionTimeoutMs?: number;
  fault?: FaultDatabase | undefined;
  wrap?: ((db: Database) => Database) | undefined;
}): Promise<Harness> {
  const fault = options.fault ?? (await createFaultDatabase());
  if (options.fault === undefined) cleanups.push(() => fault.drop());
  const opened = await openDatabase({ url: options.url?.(fault.url) ?? fault.url, schema: "devmind", maxConnections: 6, connectionTimeoutMs: options.connectionTimeoutMs ?? 2_000 });
  cleanups.push(() => opened.close());
  const db = options.wrap?.(opened) ?? opened;
  await migrate(db);
  const effects = sideEffectLog();
  const log = capturedLogger();
  const config = loadConfig({ DEVMIND_LEASE_MS: String(options.leaseMs), DEVMIND_MAX_ATTEMPTS: "3", DEVMIND_WORKSPACE: join(tmpdir(), "devmind-faults-ws") });
  const runtime = createRuntime({ db, model: new ScriptedChatModel(SCRIPT), tools: [effects.tool], config, logger: log.logger });
  cleanups.push(() => runtime.close());
  return {
    config,
    fault,
    db,
    runtime,
    effects,
    log,
    async createRuns(count) {
      const runs: RunRecord[] = [];
      for (let index = 0; index < count; index += 1) runs.push(await runtime.runs.create({ input: { messages: [`task ${index}`] } }));
      return runs;
    },
  };
}

/** Every run success, each side effect at most once, and any missing one reported as unknown to the model. */
async function expectEffectivelyOnce(h: Harness, runs: RunRecord[]): Promise<RunRecord[]> {
  const finals = await retryDatabaseFaults(() => Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id))), { maxMs: 30_000 });
  expect(finals.map((run) => [run.status, run.stop_reason])).toEqual(runs.map(() => ["success", "completed"]));
  const lines = h.effects.lines();
  expect(new Set(lines).size).toBe(lines.length);
  for (const run of runs) {
    const events = await retryDatabaseFaults(async () => {
      const read: EventRecord[] = [];
      for await (const event of h.runtime.runs.events(run.run_id)) read.push(event);
      return read;
    }, { maxMs: 30_000 });
    const finished = events.filter((event) => event.type === "tool.call.finished");
    for (const label of ["first", "second"]) {
      const done = lines.includes(`${run.run_id} ${label}`);
      // a call whose effect is missing was never run; one reported unknown may or may not have run
      if (!done) expect(finished.some((event) => event["error_code"] === "TOOL_OUTCOME_UNKNOWN")).toBe(true);
    }
  }
  return finals;
}

// reported as skipped without PostgreSQL (a file with no suite at all would fail the run)
describe.runIf(TEST_DATABASE_URL !== undefined)("database faults in one process (PostgreSQL)", () => {
  it("a connection dying inside a transaction fails that transaction as DATABASE_UNREACHABLE; the broken client is destroyed and the pool goes on", async () => {
    const fault = await createFaultDatabase();
    cleanups.push(() => fault.drop());
    const db = await openDatabase({ url: fault.url, schema: "devmind", maxConnections: 1 });
    cleanups.push(() => db.close());
    const pids: number[] = [];
    for (const mode of ["between statements", "idle until commit"] as const) {
      const failure = await db
        .transaction(async (tx) => {
          const pid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid as number;
          pids.push(pid);
          await fault.killBackends();
          // the socket closes while no query runs: the client emits 'error' with no query to take it
          await sleep(300);
          if (mode === "between statements") await tx.query("SELECT 1");
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect((failure as { code?: string } | null)?.code).toBe("DATABASE_UNREACHABLE");
      // one connection in the pool: it answers from a new backend, so the dead client was not reused
      const pid = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      expect(pids).not.toContain(pid);
    }
  }, 120_000);

  it("backends killed again and again while 12 runs execute: every run succeeds, no side effect twice, no attempt spent", async () => {
    const h = await harness({ leaseMs: 10_000 });
    const runs = await h.createRuns(12);
    const worker = h.runtime.worker({ concurrency: 3 });
    await worker.start();
    let kills = 0;
    let killedWhileRunning = 0;
    await until(async () => (await h.runtime.runs.list({ status: "running" })).length > 0, 60_000, "a run to start");
    const deadline = Date.now() + 90_000;
    for (;;) {
      const statuses = await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id).then((r) => r.status).catch(() => "unknown")));
      if (statuses.every((status) => status === "success" || status === "error")) break;
      if (Date.now() > deadline) throw new Error(`runs did not finish: ${statuses.join(",")}`);
      const running = statuses.filter((status) => status === "running").length;
      // enough faults that hit running runs, then the rest finishes in peace (a storm that never
      // ends leaves no step time to finish on a loaded machine)
      if (killedWhileRunning < KILLS_WHILE_RUNNING) {
        const killed = await h.fault.killBackends();
        kills += 1;
        if (running > 0 && killed > 0) killedWhileRunning += 1;
      }
      await sleep(150 + Math.floor(Math.random() * 300));
    }
    await worker.stop();
    // the faults really hit running runs
    expect(killedWhileRunning).toBeGreaterThanOrEqual(MIN_KILLS_WHILE_RUNNING);
    const finals = await expectEffectivelyOnce(h, runs);
    expect(finals.map((run) => run.attempt)).toEqual(runs.map(() => 1));
    expect(h.log.lines().filter((line) => line.event === "run.error")).toEqual([]);
    expect(kills).toBeGreaterThan(0);
  }, 240_000);

  it("a stall past the pool's connect timeout and the lease: runs wait, continue under their lease, the log says so once", async () => {
    if (TEST_DATABASE_URL === undefined) return;
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const h = await harness({ leaseMs: 3_000, url: (url) => proxy.urlFor(url), connectionTimeoutMs: 1_000 });
    const runs = await h.createRuns(6);
    const worker = h.runtime.worker({ concurrency: 3 });
    await worker.start();
    const server = await startServer({ runtime: h.runtime, config: h.config, host: "127.0.0.1", port: 0, workers: 0 });
    cleanups.push(() => server.close());
    await until(async () => h.effects.lines().length >= 2, 60_000, "side effects before the stall");
    proxy.stall();
    proxy.dropAll();
    // longer than the connect timeout (1 s) and the lease (3 s)
    await until(() => worker.health().state === "unreachable", 20_000, "the worker to see the database away");
    await sleep(5_000);
    expect((await h.runtime.health({ timeoutMs: 500 })).status).toBe("down");
    const down = await fetch(`${server.url}/health`);
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("2");
    expect(await down.json()).toMatchObject({ ok: false, status: "down", database: "unreachable", error: "DATABASE_UNREACHABLE" });
    // a request that needs the database: 503 with Retry-After, never 500
    const read = await fetch(`${server.url}/runs?limit=1`);
    expect(read.status).toBe(503);
    expect(read.headers.get("retry-after")).toBe("2");
    proxy.resume();
    await until(async () => (await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)))).every((run) => run.status === "success"), 120_000, "every run to succeed");
    await worker.stop();
    const finals = await expectEffectivelyOnce(h, runs);
    // the database was away, not the workers: no attempt was spent on it
    expect(finals.map((run) => run.attempt)).toEqual(runs.map(() => 1));
    const events = h.log.lines().map((line) => line.event);
    expect(events.filter((event) => event === "database.unreachable")).toHaveLength(1);
    expect(events.filter((event) => event === "database.reachable")).toHaveLength(1);
    expect(worker.health().state).toBe("ok");
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ ok: true, status: "ok", database: "ok" });
  }, 240_000);

  it("a database refusing writes mid-run: the worker stops claiming, /health is degraded, runs stay queued or paused and finish once writes succeed", async () => {
    const h = await harness({ leaseMs: 3_000 });
    const runs = await h.createRuns(8);
    const worker = h.runtime.worker({ concurrency: 2 });
    await worker.start();
    await until(async () => h.effects.lines().length >= 1, 60_000, "a side effect before the failure");
    await h.fault.setReadOnly(true);
    await until(() => worker.health().state === "storage_failing", 90_000, "the worker to stop claiming");
    const health = await h.runtime.health();
    expect(health.status).toBe("degraded");
    expect(health.database).toMatchObject({ reachable: true, writable: false });
    // past several leases: nothing is failed, nothing is claimed
    await sleep(7_000);
    const statuses = (await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)))).map((run) => run.status);
    expect(statuses.filter((status) => status === "error")).toEqual([]);
    expect(statuses.every((status) => ["pending", "running", "success"].includes(status))).toBe(true);
    await h.fault.setReadOnly(false);
    await until(async () => (await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)))).every((run) => run.status === "success"), 120_000, "every run to succeed");
    await worker.stop();
    const finals = await expectEffectivelyOnce(h, runs);
    expect(Math.max(...finals.map((run) => run.attempt))).toBe(1);
    const events = h.log.lines().map((line) => line.event);
    expect(events.filter((event) => event === "database.storage_failing")).toHaveLength(1);
    expect(events.filter((event) => event === "database.storage_ok")).toHaveLength(1);
    expect((await h.runtime.health()).status).toBe("ok");
  }, 240_000);

  it("a full disk mid-run (a tablespace on a small tmpfs, in a cluster of its own): nothing fails, the queue is not drained, every run finishes once space is freed", async (context) => {
    const made = await createSmallDisk(40);
    if (made.kind === "skip") {
      console.warn(`[db-faults] full disk skipped: ${made.why}`);
      context.skip();
      return;
    }
    const disk = made.kind === "disk" ? made.disk : null;
    let fault: FaultDatabase | undefined;
    let injected: ReturnType<typeof injectDiskFull> | undefined;
    if (disk !== null) {
      cleanups.push(() => disk.remove());
      fault = await createFaultDatabase({ tablespace: disk.tablespace, serverUrl: disk.serverUrl });
      const created = fault;
      cleanups.push(() => created.drop());
    } else {
      console.warn("[db-faults] no tmpfs here (needs root): the full disk is injected at the database seam");
    }
    const h = await harness({
      leaseMs: 3_000,
      fault,
      wrap:
        disk === null
          ? (db) => {
              injected = injectDiskFull(db);
              return injected.db;
            }
          : undefined,
    });
    const runs = await h.createRuns(8);
    // the disk fills with every run queued: the worker claims runs, starts them, and their first
    // writes fail
    let free: () => Promise<void>;
    if (disk !== null) {
      free = await fillDisk(h.fault.url);
    } else {
      injected?.setFull(true);
      free = async () => injected?.setFull(false);
    }
    const worker = h.runtime.worker({ concurrency: 2 });
    await worker.start();
    await until(() => worker.health().state === "storage_failing", 60_000, "the worker to stop claiming");
    const health = await h.runtime.health();
    expect(health.status).toBe("degraded");
    expect(health.database.writable).toBe(false);
    await sleep(7_000);
    const during = await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)));
    expect(during.filter((run) => run.status === "error")).toEqual([]);
    expect(during.filter((run) => run.status === "pending").length).toBeGreaterThan(0);
    await free();
    await until(async () => (await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)))).every((run) => run.status === "success"), 120_000, "every run to succeed");
    await worker.stop();
    const finals = await expectEffectivelyOnce(h, runs);
    expect(Math.max(...finals.map((run) => run.attempt))).toBe(1);
    expect(h.log.lines().filter((line) => line.event === "database.storage_failing")).toHaveLength(1);
  }, 300_000);

  it("the SDK's joinStream across backend kills reaches the end of the run, without an error part, gaps or duplicates", async () => {
    const h = await harness({ leaseMs: 10_000 });
    const worker = h.runtime.worker({ concurrency: 1 });
    await worker.start();
    const server = await startServer({ runtime: h.runtime, config: h.config, host: "127.0.0.1", port: 0, workers: 0, heartbeatMs: 200 });
    cleanups.push(() => server.close());
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "go" }] } });
    const parts: { event: string; id?: string; data: unknown }[] = [];
    let killsDuring = 0;
    const killer = (async () => {
      for (let index = 0; index < 4; index += 1) {
        await sleep(250);
        if ((await h.fault.killBackends()) > 0) killsDuring += 1;
      }
    })();
    // devmind's own event stream, read at the same time as a raw SSE client would
    const rawEvents = (async () => {
      const response = await fetch(`${server.url}/runs/${run.run_id}/events`);
      const text = await response.text();
      return text
        .split("\n")
        .filter((line) => line.startsWith("event: "))
        .map((line) => line.slice("event: ".length));
    })();
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["values", "updates", "custom"] } as never)) {
      parts.push(part as never);
    }
    await killer;
    const eventTypes = await rawEvents;
    expect(eventTypes).not.toContain("error");
    expect(eventTypes.at(-1)).toBe("run.succeeded");
    // the test's own read may meet a connection the last kill broke: a 503-class fault, retried
    const storedEvents = await retryDatabaseFaults(async () => {
      const list: { type: string; seq: number }[] = [];
      for await (const event of h.runtime.runs.events(run.run_id)) list.push({ type: event.type, seq: event.seq });
      return list;
    }, { maxMs: 30_000 });
    const stored = storedEvents.map((event) => event.type);
    expect(eventTypes.filter((type) => type !== "model.delta")).toEqual(stored);
    expect(killsDuring).toBeGreaterThan(0);
    expect(parts.map((part) => part.event)).not.toContain("error");
    const last = [...parts].reverse().find((part) => part.event === "values");
    const messages = (last?.data as { messages?: { type: string; content: unknown }[] } | undefined)?.messages ?? [];
    expect(messages.at(-1)).toMatchObject({ type: "ai", content: "done" });
    const ids = parts.map((part) => part.id).filter((id): id is string => id !== undefined);
    expect(new Set(ids).size).toBe(ids.length);
    // the custom parts are the agent's stored step events, each once, none missing, in order
    const customSeqs = parts.filter((part) => part.event === "custom").map((part) => (part.data as { seq: number }).seq);
    const stepSeqs = storedEvents.filter((event) => event.type.startsWith("model.") || event.type.startsWith("tool.call.")).map((event) => event.seq);
    expect(stepSeqs.length).toBeGreaterThan(0);
    expect(customSeqs).toEqual(stepSeqs);
    expect((await retryDatabaseFaults(() => h.runtime.runs.get(run.run_id), { maxMs: 30_000 })).status).toBe("success");
    await worker.stop();
  }, 240_000);
});
