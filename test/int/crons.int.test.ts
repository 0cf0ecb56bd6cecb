import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import type { Worker } from "../../src/runtime/queue/worker.js";
import { rejection } from "../helpers/assertions.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });
const tick = new StateGraph(Counter)
  .addNode("bump", (state) => ({ count: state.count + 1 }))
  .addEdge(START, "bump")
  .addEdge("bump", END)
  .compile();
const other = new StateGraph(Counter)
  .addNode("bump", (state) => ({ count: state.count + 100 }))
  .addEdge(START, "bump")
  .addEdge("bump", END)
  .compile();

/** Once a year: after a claimed tick the cron is not due again during a test. */
const YEARLY = "0 0 1 1 *";
const WAIT_MS = 30_000;

describe.each(BACKENDS)("scheduled runs (crons) on %s", (backend) => {
  let owner: Database;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const fresh = async (): Promise<Database> => {
    const { db, drop } = await freshMigratedSchema(owner);
    cleanups.push(drop);
    return db;
  };
  const runtimeOn = (db: Database, graphs: Record<string, unknown> = { agent: false, tick }): Runtime => {
    const runtime = createRuntime({ db, graphs: graphs as never });
    cleanups.push(() => runtime.close());
    return runtime;
  };
  const startWorker = async (runtime: Runtime, concurrency = 2): Promise<Worker> => {
    const worker = runtime.worker({ concurrency });
    await worker.start();
    cleanups.push(() => worker.stop());
    return worker;
  };
  /** Makes crons due now, as if their tick had come `minutes` ago (a test clock: nobody sleeps). */
  const makeDue = async (db: Database, minutes: number, cronIds?: string[]): Promise<void> => {
    await db.query(
      `UPDATE "${db.schema}".crons SET next_run_at = now() - $1::integer * interval '1 minute' WHERE $2::uuid[] IS NULL OR cron_id = ANY($2::uuid[])`,
      [minutes, cronIds ?? null],
    );
  };
  const dueCount = async (db: Database): Promise<number> =>
    Number((await db.query(`SELECT count(*)::int AS n FROM "${db.schema}".crons WHERE next_run_at <= now()`)).rows[0]?.["n"]);
  /** Every run with the cron its run.created event names. */
  const cronRuns = async (db: Database): Promise<{ run_id: string; thread_id: string; cron_id: string | null }[]> => {
    const result = await db.query(
      `SELECT r.run_id::text AS run_id, r.thread_id, e.data->>'cron_id' AS cron_id FROM "${db.schema}".runs r
       JOIN "${db.schema}".run_events e ON e.run_id = r.run_id AND e.type = 'run.created' ORDER BY r.created_at`,
    );
    return result.rows as { run_id: string; thread_id: string; cron_id: string | null }[];
  };

  it("three workers racing for 50 due ticks create exactly 50 runs, one per cron", async () => {
    const db = await fresh();
    // three runtimes: on PostgreSQL each with its own connections (as three processes); on PGlite one process
    const dbs = backend === "postgres" ? [db, ...(await Promise.all([openBackend("postgres", db.schema), openBackend("postgres", db.schema)]))] : [db, db, db];
    for (const extra of dbs.slice(1)) if (extra !== db) cleanups.push(() => extra.close());
    const runtimes = dbs.map((each) => runtimeOn(each));
    const crons: Awaited<ReturnType<Runtime["crons"]["create"]>>[] = [];
    for (let index = 0; index < 50; index += 1) crons.push(await runtimes[index % 3]!.crons.create({ assistantId: "tick", schedule: YEARLY, input: { count: index } }));
    expect(await runtimes[0]!.crons.count({ assistantId: "tick" })).toBe(50);
    await makeDue(db, 1);
    expect(await dueCount(db)).toBe(50);
    await Promise.all(runtimes.map((runtime) => startWorker(runtime)));
    await waitUntil("every due cron claimed", async () => (await dueCount(db)) === 0, WAIT_MS);
    const runs = await cronRuns(db);
    expect(runs).toHaveLength(50);
    expect(new Set(runs.map((run) => run.cron_id))).toEqual(new Set(crons.map((cron) => cron.cron_id)));
    // stateless crons: every tick on a new thread
    expect(new Set(runs.map((run) => run.thread_id)).size).toBe(50);
    const last = await runtimes[1]!.crons.get(crons[7]!.cron_id);
    expect(last.last_run_id).toBe(runs.find((run) => run.cron_id === crons[7]!.cron_id)!.run_id);
    expect(new Date(last.next_run_date!).getTime()).toBeGreaterThan(Date.now());
    // each scheduled run is an ordinary run: it executes with its input
    const done = await runtimes[0]!.runs.wait(last.last_run_id!, { timeoutMs: WAIT_MS });
    expect(done.status).toBe("success");
  });

  it("a cron due while no worker ran fires once when a worker starts, not once per missed tick", async () => {
    const db = await fresh();
    const runtime = runtimeOn(db);
    const cron = await runtime.crons.create({ assistantId: "tick", schedule: "*/5 * * * *", timezone: "Europe/Paris", input: { count: 1 } });
    expect(new Date(cron.next_run_date!).getTime() - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    // 3 hours of downtime: 36 missed ticks
    await makeDue(db, 180);
    await startWorker(runtime);
    await waitUntil("the late tick claimed", async () => (await dueCount(db)) === 0, WAIT_MS);
    const runs = await cronRuns(db);
    expect(runs.map((run) => run.cron_id)).toEqual([cron.cron_id]);
    const after = await runtime.crons.get(cron.cron_id);
    const next = new Date(after.next_run_date!).getTime();
    // the next tick is the first future one on the schedule
    expect(next).toBeGreaterThan(Date.now() - 1_000);
    expect(next - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect(new Date(after.next_run_date!).getUTCMinutes() % 5).toBe(0);
  });

  it("respects end_time: no tick after it, and no next run date once past it", async () => {
    const db = await fresh();
    const runtime = runtimeOn(db);
    const past = await runtime.crons.create({ assistantId: "tick", schedule: "* * * * *", endTime: new Date(Date.now() - 60_000).toISOString(), input: null });
    expect(past.next_run_date).toBeNull();
    expect(past.end_time).not.toBeNull();
    const reopened = await runtime.crons.update(past.cron_id, { endTime: null });
    expect(reopened.next_run_date).not.toBeNull();
    const closing = await runtime.crons.create({ assistantId: "tick", schedule: "* * * * *", endTime: new Date(Date.now() + 3_600_000).toISOString(), input: null });
    expect(closing.next_run_date).not.toBeNull();
    // the due tick lies after end_time (the clock moved past it meanwhile): no run, no next tick
    await db.query(`UPDATE "${db.schema}".crons SET next_run_at = now() - interval '1 minute', end_time = now() - interval '2 minutes' WHERE cron_id = $1::uuid`, [closing.cron_id]);
    await db.query(`UPDATE "${db.schema}".crons SET enabled = false WHERE cron_id = $1::uuid`, [reopened.cron_id]);
    await startWorker(runtime);
    await waitUntil("the ended cron passed", async () => (await runtime.crons.get(closing.cron_id)).next_run_date === null, WAIT_MS);
    expect(await cronRuns(db)).toEqual([]);
    expect((await runtime.crons.get(closing.cron_id)).last_run_id).toBeNull();
  });

  it("a thread cron runs every tick on its thread; a stateless cron on a new thread each tick", async () => {
    const db = await fresh();
    const runtime = runtimeOn(db);
    const onThread = await runtime.crons.create({ assistantId: "tick", threadId: "nightly-thread", schedule: YEARLY, input: { count: 10 }, multitask: "enqueue", metadata: { kind: "thread" } });
    const stateless = await runtime.crons.create({ assistantId: "tick", schedule: YEARLY, input: { count: 20 }, metadata: { kind: "stateless" } });
    expect(onThread.thread_id).toBe("nightly-thread");
    expect(stateless.thread_id).toBeNull();
    expect(stateless.on_run_completed).toBe("keep");
    expect((await runtime.crons.search({ metadata: { kind: "thread" } })).map((cron) => cron.cron_id)).toEqual([onThread.cron_id]);
    expect((await runtime.crons.search({ threadId: "nightly-thread" })).map((cron) => cron.cron_id)).toEqual([onThread.cron_id]);
    await startWorker(runtime);
    for (let round = 1; round <= 2; round += 1) {
      await makeDue(db, 1);
      await waitUntil(`round ${round} claimed`, async () => (await dueCount(db)) === 0, WAIT_MS);
      const runs = await cronRuns(db);
      expect(runs).toHaveLength(2 * round);
      for (const run of runs) expect((await runtime.runs.wait(run.run_id, { timeoutMs: WAIT_MS })).status).toBe("success");
    }
    const runs = await cronRuns(db);
    const threadRuns = runs.filter((run) => run.cron_id === onThread.cron_id);
    const statelessRuns = runs.filter((run) => run.cron_id === stateless.cron_id);
    expect(threadRuns.map((run) => run.thread_id)).toEqual(["nightly-thread", "nightly-thread"]);
    expect(new Set(statelessRuns.map((run) => run.thread_id)).size).toBe(2);
    expect(statelessRuns.map((run) => run.thread_id)).not.toContain("nightly-thread");
    // the thread's state carries both ticks: 10 + 1, then the second tick's input 10 + 1 again on the same thread
    const state = await runtime.threads.state("nightly-thread");
    expect((state.values as { count: number }).count).toBe(11);
    expect((await runtime.threads.history("nightly-thread", { limit: 20 })).length).toBeGreaterThan(3);
  });

  it('on_run_completed "delete": a stateless tick\'s thread is deleted once its run ended and its webhook was delivered', async () => {
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const db = await fresh();
    const runtime = runtimeOn(db);
    const deleting = await runtime.crons.create({ assistantId: "tick", schedule: YEARLY, input: { count: 1 }, onRunCompleted: "delete", webhook: `${receiver.url}/cron` });
    const keeping = await runtime.crons.create({ assistantId: "tick", schedule: YEARLY, input: { count: 2 } });
    expect([deleting.on_run_completed, keeping.on_run_completed]).toEqual(["delete", "keep"]);
    expect(deleting.payload).toMatchObject({ webhook: `${receiver.url}/cron`, on_run_completed: "delete" });
    await rejection(runtime.crons.create({ assistantId: "tick", threadId: "t-1", schedule: YEARLY, input: null, onRunCompleted: "delete" })).then((error) =>
      expect([error.code, error.details["field"]]).toEqual(["RUN_INPUT_INVALID", "on_run_completed"]),
    );
    await rejection(runtime.crons.create({ assistantId: "tick", schedule: YEARLY, input: null, webhook: "http://10.9.9.9/" })).then((error) =>
      expect([error.code, error.details["field"]]).toEqual(["RUN_INPUT_INVALID", "webhook"]),
    );
    await makeDue(db, 1);
    await startWorker(runtime);
    const fired = await waitUntil("both ticks fired", async () => {
      const [a, b] = await Promise.all([runtime.crons.get(deleting.cron_id), runtime.crons.get(keeping.cron_id)]);
      return a.last_run_id !== null && b.last_run_id !== null ? { deleted: a.last_run_id, kept: b.last_run_id } : undefined;
    }, WAIT_MS);
    const kept = await runtime.runs.wait(fired.kept, { timeoutMs: WAIT_MS });
    expect(kept.status).toBe("success");
    // the deleting tick's run is gone with its thread, after the webhook carried it
    await waitUntil("the tick's thread deleted", async () => (await runtime.runs.get(fired.deleted).catch((error: { code?: string }) => error.code)) === "RUN_NOT_FOUND", WAIT_MS);
    expect(receiver.received.map((request) => [request.path, request.body["run_id"], request.body["status"]])).toEqual([["/cron", fired.deleted, "success"]]);
    const deletedThread = String(receiver.received[0]!.body["thread_id"]);
    expect(await rejection(runtime.threads.get(deletedThread)).then((error) => error.code)).toBe("THREAD_NOT_FOUND");
    expect((await runtime.threads.get(kept.thread_id)).thread_id).toBe(kept.thread_id);
    // the option can be switched back
    expect((await runtime.crons.update(deleting.cron_id, { onRunCompleted: "keep", webhook: null })).payload).toEqual({ input: { count: 1 }, multitask_strategy: "reject", on_run_completed: "keep" });
  });

  it("leaves a cron of a graph it has not loaded to workers that have it", async () => {
    const db = await fresh();
    const tickOnly = runtimeOn(db);
    const otherOnly = runtimeOn(db, { agent: false, other });
    const foreign = await otherOnly.crons.create({ assistantId: "other", schedule: YEARLY, input: { count: 1 } });
    const own = await tickOnly.crons.create({ assistantId: "tick", schedule: YEARLY, input: { count: 1 } });
    await rejection(tickOnly.crons.create({ assistantId: "other", schedule: YEARLY, input: null })).then((error) => expect(error.code).toBe("GRAPH_NOT_FOUND"));
    await makeDue(db, 1);
    await startWorker(tickOnly);
    await waitUntil("the tick cron claimed", async () => (await tickOnly.crons.get(own.cron_id)).last_run_id !== null, WAIT_MS);
    expect((await cronRuns(db)).map((run) => run.cron_id)).toEqual([own.cron_id]);
    expect(new Date((await tickOnly.crons.get(foreign.cron_id)).next_run_date!).getTime()).toBeLessThan(Date.now());
    await startWorker(otherOnly);
    await waitUntil("the other cron claimed", async () => (await dueCount(db)) === 0, WAIT_MS);
    const runs = await cronRuns(db);
    expect(runs.map((run) => run.cron_id).sort()).toEqual([own.cron_id, foreign.cron_id].sort());
    const foreignRun = await otherOnly.runs.get(runs.find((run) => run.cron_id === foreign.cron_id)!.run_id);
    expect(foreignRun.graph_id).toBe("other");
  });

  it("refuses bad schedules, time zones, end times and payloads naming the field; updates and deletes", async () => {
    const db = await fresh();
    const runtime = runtimeOn(db, { tick });
    const field = async (promise: Promise<unknown>): Promise<unknown> => {
      const error = await rejection(promise);
      expect(error.code).toBe("RUN_INPUT_INVALID");
      return error.details["field"];
    };
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "61 * * * *", input: null }))).toBe("schedule");
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "* * * *", input: null }))).toBe("schedule");
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "0 * * * * *", input: null }))).toBe("schedule");
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "* * * * *", timezone: "Mars/Olympus", input: null }))).toBe("timezone");
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "* * * * *", endTime: "tomorrow", input: null }))).toBe("end_time");
    expect(await field(runtime.crons.create({ schedule: "* * * * *", input: { nope: 1 } }))).toBe("input");
    expect(await field(runtime.crons.create({ assistantId: "tick", schedule: "* * * * *", input: null, config: { callbacks: [] } }))).toBe("config.callbacks");
    const cron = await runtime.crons.create({ assistantId: "tick", schedule: "0 9 * * 1-5", timezone: "America/New_York", input: { count: 1 }, metadata: { owner: "ops" } });
    // 09:00 in New York is 13:00 or 14:00 UTC
    expect([13, 14]).toContain(new Date(cron.next_run_date!).getUTCHours());
    expect(await field(runtime.crons.update(cron.cron_id, { schedule: "nope" }))).toBe("schedule");
    const updated = await runtime.crons.update(cron.cron_id, { schedule: "30 6 * * *", timezone: null, metadata: { team: "a" }, enabled: false });
    expect(updated).toMatchObject({ schedule: "30 6 * * *", timezone: null, enabled: false, metadata: { owner: "ops", team: "a" }, payload: { input: { count: 1 } } });
    expect(new Date(updated.next_run_date!).getUTCHours()).toBe(6);
    expect(await runtime.crons.count({ enabled: false })).toBe(1);
    expect(await runtime.crons.count({ enabled: true })).toBe(0);
    await runtime.crons.delete(cron.cron_id);
    expect((await rejection(runtime.crons.get(cron.cron_id))).code).toBe("NOT_FOUND");
    expect((await rejection(runtime.crons.delete(cron.cron_id))).code).toBe("NOT_FOUND");
    expect((await rejection(runtime.crons.get("not-a-uuid"))).code).toBe("NOT_FOUND");
  });
});
