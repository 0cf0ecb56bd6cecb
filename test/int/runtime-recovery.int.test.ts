/**
 * Recovery of runs across processes: the tool ledger across a SIGKILL, fencing of a worker whose
 * lease was taken over, graceful drain on SIGTERM, cancel reaching an in-flight tool, and NOTIFY
 * waking an idle worker. Multi-process cases run on PostgreSQL only (an embedded data directory
 * admits one process at a time); sequential ones also on PGlite's data directory.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { loadConfig } from "../../src/config.js";
import { RUNS_CHANNEL } from "../../src/constants.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { LeaseLostError } from "../../src/errors.js";
import { buildAgentGraph } from "../../src/graph/build-agent-graph.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { EventStore } from "../../src/runtime/events/event-store.js";
import type { EventRecord } from "../helpers/events.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { ToolLedger } from "../../src/runtime/ledger/tool-ledger.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { markers, recoveryTools, type RuntimeWorkerOptions } from "../fixtures/runtime-worker.js";
import { pairing, shape } from "../helpers/agent.js";
import { killLiveChildren, spawnFixture, waitForLine, type FixtureChild } from "../helpers/child-process.js";
import { BACKENDS, TEST_DATABASE_URL, describeOn, dropSchema, freshSchemaName, openBackend } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";

const FIXTURE = "test/fixtures/runtime-worker.ts";
/** Bound of every child process. */
const CHILD_LIMIT_MS = 60_000;

// ---- cleanup: children first (they hold the databases), then runtimes, databases, schemas, dirs

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await killLiveChildren();
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[runtime-recovery] cleanup failed: ${String(error)}`);
    }
  }
});

function tempRoot(): { root: string; workspace: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "devmind-recovery-")));
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  return { root, workspace };
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** Where a test's database lives: a PostgreSQL schema, or an embedded data directory. */
interface Place {
  backend: "pglite" | "postgres";
  schema: string;
  dataDir?: string;
}

function placeFor(backend: "pglite" | "postgres", root: string): Place {
  const schema = freshSchemaName("rec");
  return backend === "postgres" ? { backend, schema } : { backend, schema, dataDir: seedDataDir(join(root, "data")) };
}

/** PostgreSQL schemas whose drop is registered. */
const schemasToDrop = new Set<string>();

/** Opens (and migrates) the place's database; closed at cleanup, and a PostgreSQL schema dropped after that. */
async function openPlace(place: Place): Promise<Database> {
  if (place.backend === "postgres" && !schemasToDrop.has(place.schema)) {
    schemasToDrop.add(place.schema);
    // registered before the close below, so it runs after it (cleanups run in reverse)
    cleanups.push(async () => {
      schemasToDrop.delete(place.schema);
      const owner = await openDatabase({ url: TEST_DATABASE_URL, schema: place.schema, maxConnections: 1 });
      try {
        await dropSchema(owner, place.schema);
      } finally {
        await owner.close();
      }
    });
  }
  const db =
    place.backend === "postgres"
      ? await openDatabase({ url: TEST_DATABASE_URL, schema: place.schema, maxConnections: 4 })
      : await openDatabase({ dataDir: place.dataDir, schema: place.schema });
  cleanups.push(() => db.close());
  await migrate(db);
  return db;
}

/** An in-memory PGlite or a fresh PostgreSQL schema, migrated, for single-process cases. */
async function openShared(backend: "pglite" | "postgres"): Promise<Database> {
  const db = await openBackend(backend, freshSchemaName("rec"));
  await migrate(db);
  cleanups.push(async () => {
    if (backend === "postgres") await dropSchema(db, db.schema);
    await db.close();
  });
  return db;
}

function makeRuntime(db: Database, workspace: string, script: ScriptedTurn[], leaseMs: number): Runtime {
  const runtime = createRuntime({
    db,
    model: new ScriptedChatModel(script),
    tools: [...builtinTools({ workspace }), ...recoveryTools()],
    config: loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: String(leaseMs), DEVMIND_MODEL_MAX_RETRIES: "0" }),
  });
  cleanups.push(() => runtime.close());
  return runtime;
}

function spawnChild(place: Place, options: Omit<RuntimeWorkerOptions, "schema" | "url" | "dataDir">): FixtureChild {
  const full: RuntimeWorkerOptions = {
    ...(place.backend === "postgres" ? { url: TEST_DATABASE_URL } : { dataDir: place.dataDir }),
    schema: place.schema,
    ...options,
  };
  return spawnFixture(FIXTURE, [JSON.stringify(full)], CHILD_LIMIT_MS);
}

async function eventsOf(db: Database, runId: string): Promise<EventRecord[]> {
  return new EventStore(db).read(runId);
}

/** Seqs are 1..n: strictly increasing, no gaps, no duplicates. */
function expectDenseSeqs(events: readonly EventRecord[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

/** The thread's messages as the graph sees them (messages is a delta channel: read through getState). */
async function threadMessages(db: Database, threadId: string): Promise<BaseMessage[]> {
  const graph = buildAgentGraph({ model: new ScriptedChatModel([{ content: "unused" }]), tools: recoveryTools(), checkpointer: new PostgresCheckpointSaver(db) });
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  return (state.values as { messages?: BaseMessage[] }).messages ?? [];
}

/** Checkpoints of a thread that share a parent: a fork, i.e. two writers of one step. */
async function forks(db: Database, threadId: string): Promise<number> {
  const result = await db.query<{ forks: number }>(
    `SELECT count(*)::integer AS forks FROM (
       SELECT parent_checkpoint_id FROM "${db.schema}".checkpoints
        WHERE thread_id = $1 AND checkpoint_ns = '' AND parent_checkpoint_id IS NOT NULL
        GROUP BY parent_checkpoint_id HAVING count(*) > 1) AS f`,
    [threadId],
  );
  return result.rows[0]?.forks ?? -1;
}

async function ledgerRows(db: Database, runId: string): Promise<{ tool_call_id: string; status: string; attempts: number; lease_epoch: number }[]> {
  const result = await db.query<{ tool_call_id: string; status: string; attempts: number; lease_epoch: string }>(
    `SELECT tool_call_id, status, attempts, lease_epoch::text FROM "${db.schema}".tool_ledger WHERE run_id = $1 ORDER BY tool_call_id`,
    [runId],
  );
  return result.rows.map((row) => ({ ...row, lease_epoch: Number(row.lease_epoch) }));
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : [];
}

/** The pid in a lease owner `host:pid:…`. */
function ownerPid(owner: string | null | undefined): number | null {
  const match = /^[^:]*:(\d+):/.exec(owner ?? "");
  return match?.[1] === undefined ? null : Number(match[1]);
}

const SIDE_EFFECT_CALL = "se";

describe.each(BACKENDS)("runtime recovery on %s", (backend) => {
  describe("the tool ledger across a SIGKILL mid-call", () => {
    const cases = [
      { tool: "side_effect_then_hang", idempotent: false },
      { tool: "idempotent_side_effect_then_hang", idempotent: true },
    ] as const;

    it.each(cases)("$tool: killed after its side effect, continued by another process once the lease expires", async ({ tool, idempotent }) => {
      const { root, workspace } = tempRoot();
      const place = placeFor(backend, root);
      const leaseMs = 1_500;
      const script: ScriptedTurn[] = [{ tool_calls: [{ id: SIDE_EFFECT_CALL, name: tool, args: { path: "log.txt", line: "once" } }] }, { content: "done" }];
      const file = join(workspace, "log.txt");

      // create the run (on PGlite the data directory is closed again before a child opens it)
      let db = await openPlace(place);
      const created = await makeRuntime(db, workspace, script, leaseMs).runs.create({ input: { messages: ["append a line once"] } });
      if (backend === "pglite") await db.close();

      const first = spawnChild(place, { workspace, leaseMs, script, mode: "execute", runId: created.run_id });
      await until("the side effect of the first process", () => existsSync(markers.done(file, first.pid)), 45_000);
      // PostgreSQL, not idempotent: the process that continues the run is a worker, already idle
      // when the first one dies (started now: the run is claimed, so it waits for the lease)
      const standby = backend === "postgres" && !idempotent ? spawnChild(place, { workspace, leaseMs, script, mode: "worker", concurrency: 1 }) : undefined;
      if (standby !== undefined) await waitForLine(standby, "ready", 45_000);
      expect(lines(file)).toEqual(["once"]);
      first.process.kill("SIGKILL");
      expect((await first.exited).signal).toBe("SIGKILL");
      const killedAt = Date.now();
      // lets a re-run of the idempotent tool finish instead of hanging
      writeFileSync(markers.release(file), "go");

      // another process continues the run once the lease expired. PostgreSQL: the standby worker
      // process (its reaper re-queues the run, a slot claims it) for one case, and for the other
      // this process re-queues it and an "execute" process runs it. PGlite (one process at a
      // time): this process's worker, on the data directory the killed child left behind.
      let continuedBy: number;
      // a worker continuing a dead process's run says recovery; runs.execute (someone asking) says manual
      let resumeReason = "recovery";
      let done: RunRecord;
      if (standby !== undefined) {
        done = await until(
          "the run to finish in the standby worker",
          async () => {
            const run = await new RunStore(db).get(created.run_id);
            return ["success", "error", "timeout", "interrupted"].includes(run.status) ? run : undefined;
          },
          30_000,
        );
        standby.process.kill("SIGTERM");
        const exit = await standby.exited;
        expect(exit.code).toBe(0);
        expect(exit.stdout.split("\n")).toContain("drained");
        continuedBy = standby.pid;
      } else if (backend === "postgres") {
        const store = new RunStore(db);
        await until("the lease to expire", async () => (await store.requeueExpired({ maxAttempts: 3 })).requeued.includes(created.run_id), leaseMs + 5_000);
        const second = spawnChild(place, { workspace, leaseMs, script, mode: "execute", runId: created.run_id });
        const exit = await second.exited;
        expect(exit.code, exit.stderr).toBe(0);
        done = JSON.parse(exit.stdout.trim().split("\n").pop() ?? "{}") as RunRecord;
        expect(await store.get(created.run_id)).toEqual(done);
        continuedBy = second.pid;
        resumeReason = "manual";
      } else {
        db = await openPlace(place);
        const runtime = makeRuntime(db, workspace, script, leaseMs);
        const worker = runtime.worker({ concurrency: 1 });
        await worker.start();
        done = await runtime.runs.wait(created.run_id, { timeoutMs: 30_000 });
        await worker.stop();
        continuedBy = process.pid;
      }

      expect(done).toMatchObject({ status: "success", stop_reason: "completed", answer: "done", attempt: 2, tool_calls: 1, error: null });
      const events = await eventsOf(db, created.run_id);
      expectDenseSeqs(events);
      const resumed = events.filter((e) => e.type === "run.resumed");
      expect(resumed).toMatchObject([{ reason: resumeReason, attempt: 2 }]);
      expect(ownerPid(resumed[0]?.["worker"] as string)).toBe(continuedBy);
      if (standby !== undefined) {
        // an idle worker elsewhere takes over about when the dead one's lease lapses
        const takeoverMs = Date.parse(resumed[0]?.at ?? "") - killedAt;
        console.info(`[runtime-recovery] SIGKILL -> run.resumed in the standby worker: ${takeoverMs} ms (lease ${leaseMs} ms)`);
        expect(takeoverMs).toBeLessThan(leaseMs + 3_000);
      }
      expect(events.filter((e) => e.type === "run.started")).toMatchObject([{ attempt: 1 }]);
      expect(events.filter((e) => e.type === "run.succeeded")).toHaveLength(1);

      const finished = events.filter((e) => e.type === "tool.call.finished");
      const started = events.filter((e) => e.type === "tool.call.started");
      const messages = await threadMessages(db, created.thread_id);
      expect(shape(messages)).toEqual(["human", "ai", "tool", "ai"]);
      const [pair] = pairing(messages);
      if (idempotent) {
        // re-run by design: the side effect happened twice, the call's result is the re-run's
        expect(lines(file)).toEqual(["once", "once"]);
        expect(existsSync(markers.done(file, continuedBy))).toBe(true);
        // the killed process's start event may not have been stored before the kill; the ledger's
        // two attempts below prove both starts
        expect(started.length).toBeGreaterThanOrEqual(1);
        expect(new Set(started.map((e) => e["tool_call_id"]))).toEqual(new Set([SIDE_EFFECT_CALL]));
        expect(finished).toMatchObject([{ tool_call_id: SIDE_EFFECT_CALL, ok: true, error_code: null }]);
        expect(pair).toMatchObject({ id: SIDE_EFFECT_CALL, envelope: { ok: true, data: { appended: "once", pid: continuedBy } } });
        expect(await ledgerRows(db, created.run_id)).toEqual([{ tool_call_id: SIDE_EFFECT_CALL, status: "succeeded", attempts: 2, lease_epoch: 2 }]);
      } else {
        // never run again: exactly one line, and the model was told the outcome is unknown
        expect(lines(file)).toEqual(["once"]);
        expect(existsSync(markers.done(file, continuedBy))).toBe(false);
        expect(started.map((e) => e["tool_call_id"])).toEqual([SIDE_EFFECT_CALL]);
        expect(finished).toMatchObject([{ tool_call_id: SIDE_EFFECT_CALL, ok: false, error_code: "TOOL_OUTCOME_UNKNOWN" }]);
        expect(pair).toMatchObject({ id: SIDE_EFFECT_CALL, envelope: { ok: false, error: { code: "TOOL_OUTCOME_UNKNOWN" } } });
        expect(await ledgerRows(db, created.run_id)).toEqual([{ tool_call_id: SIDE_EFFECT_CALL, status: "failed", attempts: 2, lease_epoch: 2 }]);
        expect(done.unknown_outcomes).toEqual([{ tool_call_id: SIDE_EFFECT_CALL, tool: finished[0]?.["tool"] }]);
      }
      if (idempotent) expect(done.unknown_outcomes).toEqual([]);
      // the answer came from the model's call made after the tool message
      expect(messages[3]?.content).toBe("done");
      expect(await forks(db, created.thread_id)).toBe(0);
    }, 120_000);
  });

  it("fencing: a worker whose lease was taken over mid-call is refused its next write and stops; the run finishes once under the new owner", async () => {
    const { workspace } = tempRoot();
    const db = await openShared(backend);
    const call = { id: SIDE_EFFECT_CALL, name: "side_effect_then_hang", args: { path: "fence.txt", line: "A" } };
    const file = join(workspace, "fence.txt");
    // A's lease is long: its heartbeat (every lease/3) cannot renew it while the test expires it by hand
    const a = makeRuntime(db, workspace, [{ tool_calls: [call] }, { content: "finished by A" }], 60_000);
    const b = makeRuntime(db, workspace, [{ tool_calls: [call] }, { content: "finished by B", delay_ms: 3_000 }], 60_000);
    const completes: { epoch: number; error: unknown }[] = [];
    const original = ToolLedger.prototype.complete;
    vi.spyOn(ToolLedger.prototype, "complete").mockImplementation(async function (this: ToolLedger, fence, toolCallId, outcome) {
      try {
        await original.call(this, fence, toolCallId, outcome);
        completes.push({ epoch: fence.epoch, error: null });
      } catch (error) {
        completes.push({ epoch: fence.epoch, error });
        throw error;
      }
    });

    const created = await a.runs.create({ input: { messages: ["append A"] } });
    const executingA = a.runs.execute(created.run_id);
    await until("A's call to be in flight", () => existsSync(markers.done(file, process.pid)), 20_000);
    // its tool.call.started event is stored asynchronously: wait for it, so A's next write is the ledger's
    const beforeTakeover = await until(
      "A's tool.call.started event",
      async () => {
        const events = await eventsOf(db, created.run_id);
        return events.some((e) => e.type === "tool.call.started") ? events : undefined;
      },
      10_000,
    );

    // LangGraph saves the steps before the tools step while the tool runs: let A's saves land (they
    // were issued while A held the lease), so B continues from the tools step
    const checkpoints = async (): Promise<number> =>
      (await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${db.schema}".checkpoints WHERE thread_id = $1`, [created.thread_id])).rows[0]?.n ?? -1;
    for (let stable = 0, last = await checkpoints(); stable < 3; ) {
      await sleep(150);
      const now = await checkpoints();
      stable = now === last ? stable + 1 : 0;
      last = now;
    }

    // the lease lapses by hand; the reaper's statement re-queues the run, B claims it (epoch 2)
    await db.query(`UPDATE "${db.schema}".runs SET lease_expires_at = now() - interval '1 second' WHERE run_id = $1`, [created.run_id]);
    // the reaper skips a run row locked by a save still landing: ask until it is free
    const requeued = await until(
      "the reaper to re-queue A's run",
      async () => {
        const result = await new RunStore(db).requeueExpired({ maxAttempts: 3 });
        return result.requeued.length + result.failed.length + result.cancelled.length > 0 ? result : undefined;
      },
      10_000,
    );
    expect(requeued).toEqual({ requeued: [created.run_id], failed: [], cancelled: [] });
    const executingB = b.runs.execute(created.run_id);
    // B answered the call (not idempotent, found started: outcome unknown) and is in its model call
    await until("B's model call", async () => (await eventsOf(db, created.run_id)).some((e) => e.type === "model.started" && e["round"] === 2), 20_000).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; run ${JSON.stringify(await new RunStore(db).get(created.run_id))}; events ${JSON.stringify(await eventsOf(db, created.run_id))}`);
    });
    expect((await new RunStore(db).get(created.run_id)).lease?.epoch).toBe(2);

    // A's tool returns now, while B holds the lease: A's ledger write is refused and A stops
    writeFileSync(markers.release(file), "go");
    const t0 = Date.now();
    const fromA = await executingA;
    const stoppedMs = Date.now() - t0;
    expect(stoppedMs).toBeLessThan(5_000);
    expect(completes.filter((c) => c.epoch === 1)).toHaveLength(1);
    expect(completes.find((c) => c.epoch === 1)?.error).toBeInstanceOf(LeaseLostError);
    expect(fromA.status).toBe("running"); // B's, still in its (3 s) model call
    expect(fromA.lease?.epoch).toBe(2);

    const done = await executingB;
    expect(done).toMatchObject({ status: "success", answer: "finished by B", attempt: 2, tool_calls: 1 });
    expect(await new RunStore(db).get(created.run_id)).toMatchObject({ status: "success", answer: "finished by B" });

    const events = await eventsOf(db, created.run_id);
    expectDenseSeqs(events);
    // everything after the takeover is B's, once each: nothing of A's landed
    expect(events.slice(beforeTakeover.length).map((e) => e.type).filter((type) => !type.startsWith("node."))).toEqual(["run.resumed", "tool.call.finished", "model.started", "model.finished", "run.succeeded"]);
    // B's tasks: the tools task it re-ran (answered from the ledger), then the rest of the run
    expect(events.slice(beforeTakeover.length).filter((e) => e.type === "node.finished").map((e) => e["node"])).toEqual(["tools", "guard", "model", "guard"]);
    expect(events.find((e) => e.type === "tool.call.finished")).toMatchObject({ tool_call_id: SIDE_EFFECT_CALL, error_code: "TOOL_OUTCOME_UNKNOWN" });
    for (const type of ["run.started", "run.resumed", "tool.call.started", "tool.call.finished", "run.succeeded"]) {
      expect(events.filter((e) => e.type === type), type).toHaveLength(1);
    }
    expect(lines(file)).toEqual(["A"]);
    expect(await ledgerRows(db, created.run_id)).toEqual([{ tool_call_id: SIDE_EFFECT_CALL, status: "failed", attempts: 2, lease_epoch: 2 }]);
    expect(await forks(db, created.thread_id)).toBe(0);
    const messages = await threadMessages(db, created.thread_id);
    expect(shape(messages)).toEqual(["human", "ai", "tool", "ai"]);
    expect(pairing(messages)).toMatchObject([{ id: SIDE_EFFECT_CALL, envelope: { ok: false, error: { code: "TOOL_OUTCOME_UNKNOWN" } } }]);
  }, 60_000);

  it("fencing by epoch: a worker whose heartbeat finds its lease moved stops at once, aborts its in-flight tool and writes nothing more", async () => {
    const { workspace } = tempRoot();
    const db = await openShared(backend);
    const file = join(workspace, "epoch.txt");
    // a short lease: the heartbeat (every lease/3) notices the takeover within half a second
    const runtime = makeRuntime(db, workspace, [{ tool_calls: [{ id: SIDE_EFFECT_CALL, name: "side_effect_then_hang", args: { path: "epoch.txt", line: "x" } }] }, { content: "never" }], 1_500);
    const created = await runtime.runs.create({ input: { messages: ["hang"] } });
    const executing = runtime.runs.execute(created.run_id);
    await until("the call to be in flight", () => existsSync(markers.done(file, process.pid)), 20_000);
    const before = await until(
      "its tool.call.started event",
      async () => {
        const events = await eventsOf(db, created.run_id);
        return events.some((e) => e.type === "tool.call.started") ? events : undefined;
      },
      10_000,
    );
    const checkpoints = async (): Promise<number> =>
      (await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${db.schema}".checkpoints WHERE thread_id = $1`, [created.thread_id])).rows[0]?.n ?? -1;
    // LangGraph saves a step's checkpoint while the step runs: let a save already under way land
    // (it was issued while the lease was held, so it may), then take the lease
    let checkpointsBefore = await checkpoints();
    for (let stable = 0; stable < 3; ) {
      await sleep(150);
      const now = await checkpoints();
      stable = now === checkpointsBefore ? stable + 1 : 0;
      checkpointsBefore = now;
    }

    // another owner took the lease (what a claim does to the row), without this worker noticing yet
    await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = lease_epoch + 1, lease_owner = 'someone-else' WHERE run_id = $1`, [created.run_id]);
    const t0 = Date.now();
    const fromA = await executing;
    const stoppedMs = Date.now() - t0;
    expect(stoppedMs).toBeLessThan(3_000);
    // the tool in flight learns it through its signal instead of running on unowned
    await until("the in-flight tool to be aborted", () => existsSync(markers.aborted(file, process.pid)), 3_000);
    expect(fromA).toMatchObject({ status: "running", lease: { owner: "someone-else", epoch: 2 } });
    await sleep(300);
    expect(await eventsOf(db, created.run_id)).toEqual(before);
    expect(await checkpoints()).toBe(checkpointsBefore);
    expect(await ledgerRows(db, created.run_id)).toEqual([{ tool_call_id: SIDE_EFFECT_CALL, status: "started", attempts: 1, lease_epoch: 1 }]);
    expect(await new RunStore(db).get(created.run_id)).toMatchObject({ status: "running", attempt: 1, lease: { owner: "someone-else", epoch: 2 } });
  }, 30_000);

  it("cancel of a running run reaches its in-flight tool through the signal", async () => {
    const { workspace } = tempRoot();
    const db = await openShared(backend);
    const file = join(workspace, "cancel.txt");
    const runtime = makeRuntime(db, workspace, [{ tool_calls: [{ id: SIDE_EFFECT_CALL, name: "side_effect_then_hang", args: { path: "cancel.txt", line: "x" } }] }, { content: "never" }], 5_000);
    const created = await runtime.runs.create({ input: { messages: ["hang"] } });
    const executing = runtime.runs.execute(created.run_id);
    await until("the call to be in flight", () => existsSync(markers.done(file, process.pid)), 20_000);
    const t0 = Date.now();
    expect((await runtime.runs.cancel(created.run_id)).status).toBe("running");
    const done = await executing;
    const cancelMs = Date.now() - t0;
    expect(done).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    expect(cancelMs).toBeLessThan(3_000);
    expect(existsSync(markers.aborted(file, process.pid))).toBe(true);
    const events = await eventsOf(db, created.run_id);
    expectDenseSeqs(events);
    expect(events.filter((e) => e.type === "tool.call.finished")).toMatchObject([{ tool_call_id: SIDE_EFFECT_CALL, ok: false }]);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["run.cancel_requested", "run.cancelled"]));
    expect(events.filter((e) => e.type === "run.cancelled")).toHaveLength(1);
    // the thread stays valid: the call has its answer
    expect(pairing(await threadMessages(db, created.thread_id))).toHaveLength(1);
  }, 30_000);

  describeOn(backend, "postgres")("across worker processes", () => {
    it("cancel reaches a tool in flight in another process", async () => {
      const { root, workspace } = tempRoot();
      const place = placeFor(backend, root);
      const db = await openPlace(place);
      const file = join(workspace, "cancel.txt");
      const script: ScriptedTurn[] = [{ tool_calls: [{ id: SIDE_EFFECT_CALL, name: "side_effect_then_hang", args: { path: "cancel.txt", line: "x" } }] }, { content: "never" }];
      const worker = spawnChild(place, { workspace, leaseMs: 10_000, script, mode: "worker", concurrency: 1 });
      await waitForLine(worker, "ready", 45_000);
      const runtime = makeRuntime(db, workspace, script, 10_000);
      const created = await runtime.runs.create({ input: { messages: ["hang"] } });
      await until("the call to be in flight in the worker", () => existsSync(markers.done(file, worker.pid)), 20_000);
      const t0 = Date.now();
      await runtime.runs.cancel(created.run_id);
      const done = await runtime.runs.wait(created.run_id, { timeoutMs: 10_000 });
      const cancelMs = Date.now() - t0;
      expect(done).toMatchObject({ status: "interrupted", stop_reason: "cancelled", attempt: 1 });
      expect(cancelMs).toBeLessThan(3_000);
      expect(existsSync(markers.aborted(file, worker.pid))).toBe(true);
      worker.process.kill("SIGTERM");
      expect((await worker.exited).code).toBe(0);
    }, 90_000);

    it("SIGTERM drains a worker at the next step boundary; another worker continues the run at once", async () => {
      const { root, workspace } = tempRoot();
      const place = placeFor(backend, root);
      const db = await openPlace(place);
      const leaseMs = 15_000;
      const append = (id: string, content: string): ScriptedTurn => ({ tool_calls: [{ id, name: "append_file", args: { path: "drain.txt", content } }], delay_ms: 1_500 });
      const script: ScriptedTurn[] = [append("a1", "one\n"), append("a2", "two\n"), append("a3", "three\n"), { content: "done", delay_ms: 1_500 }];
      const workers = [0, 1].map(() => spawnChild(place, { workspace, leaseMs, script, mode: "worker", concurrency: 1 }));
      await Promise.all(workers.map((w) => waitForLine(w, "ready", 45_000)));
      const runtime = makeRuntime(db, workspace, script, leaseMs);
      const created = await runtime.runs.create({ input: { messages: ["append three lines"] } });
      const store = new RunStore(db);
      const claimedBy = await until("a worker to claim the run", async () => ownerPid((await store.get(created.run_id)).lease?.owner) ?? undefined, 10_000);
      const first = workers.find((w) => w.pid === claimedBy);
      const other = workers.find((w) => w.pid !== claimedBy);
      if (first === undefined || other === undefined) throw new Error(`run claimed by unknown pid ${claimedBy}`);
      // mid-run: the first call is done, the second round's model call is under way
      await until("the first call to finish", async () => (await eventsOf(db, created.run_id)).some((e) => e.type === "tool.call.finished"), 20_000);

      // what workers hear from now on: the drained worker announces the run it released
      const announced: string[] = [];
      const unlisten = await db.listen(RUNS_CHANNEL, (payload) => announced.push(payload));
      cleanups.push(() => unlisten());
      const t0 = Date.now();
      first.process.kill("SIGTERM");
      const exit = await first.exited;
      const drainMs = Date.now() - t0;
      expect(exit.code).toBe(0);
      expect(exit.stdout.split("\n")).toContain("drained");
      expect(drainMs).toBeLessThan(8_000);

      const resumed = await until(
        "the other worker to continue the run",
        async () => (await eventsOf(db, created.run_id)).find((e) => e.type === "run.resumed"),
        leaseMs,
      );
      expect(resumed).toMatchObject({ reason: "recovery", attempt: 2 });
      expect(ownerPid(resumed["worker"] as string)).toBe(other.pid);
      // released and announced (NOTIFY), not expired: from the drained worker's last event to the
      // other's first (database clock), far under the lease. Tens of ms when idle; the bound is loose
      // for loaded machines, the announcement is what shows the other worker was woken.
      expect(announced).toContain(created.run_id);
      const lastOfFirst = (await eventsOf(db, created.run_id)).find((e) => e.seq === resumed.seq - 1);
      const handoverMs = Date.parse(resumed.at) - Date.parse(lastOfFirst?.at ?? "");
      expect(handoverMs).toBeLessThan(leaseMs / 5);

      const done = await runtime.runs.wait(created.run_id, { timeoutMs: 30_000 });
      expect(done).toMatchObject({ status: "success", answer: "done", attempt: 2, model_rounds: 4, tool_calls: 3 });
      expect(lines(join(workspace, "drain.txt"))).toEqual(["one", "two", "three"]);
      const events = await eventsOf(db, created.run_id);
      expectDenseSeqs(events);
      expect(events.filter((e) => e.type === "tool.call.started").map((e) => e["tool_call_id"])).toEqual(["a1", "a2", "a3"]);
      expect(events.filter((e) => e.type === "tool.call.finished").map((e) => [e["tool_call_id"], e["ok"]])).toEqual([["a1", true], ["a2", true], ["a3", true]]);
      expect(events.filter((e) => e.type === "run.succeeded")).toHaveLength(1);
      const messages = await threadMessages(db, created.thread_id);
      expect(pairing(messages).map((p) => p.id)).toEqual(["a1", "a2", "a3"]);
      expect(await forks(db, created.thread_id)).toBe(0);
      console.info(`[runtime-recovery] drain: worker exited ${drainMs} ms after SIGTERM; the other worker resumed ${handoverMs} ms after its last event (after ${lastOfFirst?.type}; lease ${leaseMs} ms)`);
      other.process.kill("SIGTERM");
      expect((await other.exited).code).toBe(0);
    }, 120_000);

    it("NOTIFY wakes an idle worker in another process at once", async () => {
      const { root, workspace } = tempRoot();
      const place = placeFor(backend, root);
      const db = await openPlace(place);
      const script: ScriptedTurn[] = [{ content: "hi" }];
      const worker = spawnChild(place, { workspace, leaseMs: 10_000, script, mode: "worker", concurrency: 1 });
      await waitForLine(worker, "ready", 45_000);
      // another Database instance (and process) than the worker's
      const runtime = makeRuntime(db, workspace, script, 10_000);
      const latencies: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const created = await runtime.runs.create({ input: { messages: [`run ${i}`] } });
        // bounds, not the measure (the latencies below are): the first run also loads the worker's
        // graph, seconds on a loaded machine
        const started = await until("the worker to start the run", async () => (await eventsOf(db, created.run_id)).find((e) => e.type === "run.started"), 30_000);
        expect(ownerPid(started["worker"] as string)).toBe(worker.pid);
        await until("the run to finish", async () => (await eventsOf(db, created.run_id)).some((e) => e.type === "run.succeeded"), 30_000);
        // the first run warms the worker up. After a finished run the worker looks once, finds
        // nothing and sleeps a full idle poll (1 s); the next run is created 50 ms into that sleep,
        // so without the notification it would start about 950 ms after its creation
        if (i > 0) latencies.push(Date.parse(started.at) - Date.parse(created.created_at));
        await sleep(50);
      }
      console.info(`[runtime-recovery] notify: created -> run.started ${latencies.join(", ")} ms`);
      for (const latency of latencies) expect(latency).toBeLessThan(800);
      worker.process.kill("SIGTERM");
      expect((await worker.exited).code).toBe(0);
    }, 90_000);
  });
});

