import { agentRunHooks } from "../../src/graph/agent-run-hooks.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { assistantIdFor } from "../../src/graphs/assistant-id.js";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { DevmindError, RunConflictError } from "../../src/errors.js";
import type { RunCounts, RunInput, RunRecord } from "../../src/runtime/queue/run-record.js";
import { RUNS_CHANNEL } from "../../src/constants.js";
import { RUN_EVENTS_CHANNEL } from "../../src/runtime/events/event-sql.js";
import { EventStore } from "../../src/runtime/events/event-store.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { BACKENDS, TEST_DATABASE_URL, describeOn, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { rejection } from "../helpers/assertions.js";

const INPUT: RunInput = { messages: [{ role: "user", content: "hello" }] };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LEASE = { owner: "worker-1", leaseMs: 60_000 };

function counts(modelRounds: number, toolCalls: number, activeMsDelta: number, tokens = 10): RunCounts {
  return { modelRounds, toolCalls, usage: { input_tokens: tokens, output_tokens: tokens + 1 }, activeMsDelta };
}

const SUCCESS = { status: "success", stopReason: "completed", answer: "done", counts: counts(1, 0, 5), error: null } as const;


describe.each(BACKENDS)("RunStore on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let store: RunStore;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    store = new RunStore(db);
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  // claimNext looks at the whole table: every test starts from an empty queue
  beforeEach(async () => {
    await db.query(`TRUNCATE "${db.schema}".runs CASCADE`);
  });

  const rowCount = async (): Promise<number> => {
    const result = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".runs`);
    return result.rows[0]?.n ?? -1;
  };
  const expireLease = async (runId: string): Promise<void> => {
    await db.query(`UPDATE "${db.schema}".runs SET lease_expires_at = now() - interval '1 second' WHERE run_id = $1`, [runId]);
  };
  const storedEpoch = async (runId: string): Promise<number> => {
    const result = await db.query<{ epoch: number }>(`SELECT lease_epoch::int AS epoch FROM "${db.schema}".runs WHERE run_id = $1`, [runId]);
    return result.rows[0]?.epoch ?? -1;
  };

  describe("records", () => {
    it("create returns a pending run with defaults, and get reads back the same record", async () => {
      const run = await store.create({ input: INPUT });
      expect(run).toEqual({
        run_id: expect.stringMatching(UUID),
        thread_id: expect.stringMatching(UUID),
        status: "pending",
        stop_reason: null,
        answer: null,
        model_rounds: 0,
        tool_calls: 0,
        usage: { input_tokens: 0, output_tokens: 0 },
        attempt: 0,
        created_at: expect.stringMatching(ISO),
        updated_at: run.created_at,
        finished_at: null,
        error: null,
        graph_id: "agent",
        assistant_id: assistantIdFor("agent"),
        input: INPUT,
        limits: {},
        config: {},
        context: null,
        interrupts: null,
        metadata: {},
        not_before: null,
        interrupt_before: null,
        interrupt_after: null,
        checkpoint_id: null,
        stream_mode: null,
        lease: null,
        cancel_requested: false,
        active_ms: 0,
        unknown_outcomes: [],
        waiting: false,
        resumes_run: null,
      } satisfies RunRecord);
      expect(run.thread_id).not.toBe(run.run_id);
      expect(Math.abs(Date.parse(run.created_at) - Date.now())).toBeLessThan(60_000);
      expect(await store.get(run.run_id)).toEqual(run);
    });

    it("create stores the thread id, the limits and string messages as given", async () => {
      const input: RunInput = { messages: ["summarise", { role: "assistant", content: "ok" }] };
      const run = await store.create({ threadId: "thread/ä 1", input, limits: { maxModelRounds: 2, modelMaxRetries: 0 } });
      expect(run).toMatchObject({ thread_id: "thread/ä 1", input, limits: { maxModelRounds: 2, modelMaxRetries: 0 } });
      expect((await store.get(run.run_id)).limits).toEqual({ maxModelRounds: 2, modelMaxRetries: 0 });
    });

    it("create refuses bad input, limits, thread ids and multitask with RUN_INPUT_INVALID and stores nothing", async () => {
      // the input check is the graph's own (its run hooks): here the built-in agent's, as the runtime wires it
      // (null is no input: the agent's run continues its thread from the checkpoint, see agent-start)
      const checked = new RunStore(db, undefined, () => agentRunHooks(async () => new ToolRegistry([], { workspace: ".", defaultTimeoutMs: 1_000, maxOutputChars: 1_000 })));
      const badInputs: unknown[] = [
        "hello",
        [],
        {},
        { messages: [] },
        { messages: "hello" },
        { messages: [42] },
        { messages: [null] },
        { messages: [{ role: "robot", content: "x" }] },
        { messages: ["nul \u0000 inside"] },
      ];
      for (const input of badInputs) {
        const error = await rejection(checked.create({ input: input as RunInput }));
        expect(error.code, JSON.stringify(input)).toBe("RUN_INPUT_INVALID");
      }
      // without a graph check any JSON input is a run's input, as LangGraph takes it; only what JSON cannot hold is refused
      expect((await rejection(store.create({ input: { text: "nul \u0000 inside" } as never }))).code).toBe("RUN_INPUT_INVALID");
      const badLimits: unknown[] = [[], "x", { bogus: 1 }, { maxModelRounds: 0 }, { maxModelRounds: 1.5 }, { maxTokens: "10" }, { modelMaxRetries: -1 }];
      for (const limits of badLimits) {
        const error = await rejection(store.create({ input: INPUT, limits: limits as never }));
        expect(error.code, JSON.stringify(limits)).toBe("RUN_INPUT_INVALID");
      }
      for (const threadId of ["", "x".repeat(257), "a\u0000b"]) {
        expect((await rejection(store.create({ threadId, input: INPUT }))).code).toBe("RUN_INPUT_INVALID");
      }
      expect((await rejection(store.create({ input: INPUT, multitask: "sometimes" as never }))).code).toBe("RUN_INPUT_INVALID");
      expect(await rowCount()).toBe(0);
      // no input is not bad input: the agent's run then continues its thread from the checkpoint
      expect((await store.create({ input: null as never })).input).toBeNull();
    });

    it("answers RUN_NOT_FOUND for ids that are not uuids or are unknown, never a database error", async () => {
      await store.create({ input: INPUT });
      const bad = ["nope", "", "'; DROP TABLE runs; --", "123", `${randomUUID()}x`, randomUUID(), randomUUID().toUpperCase()];
      for (const id of bad) {
        for (const call of [
          () => store.get(id),
          () => store.requestCancel(id),
          () => store.isCancelRequested(id),
          () => store.claim(id, { ...LEASE }),
          () => store.list({ before: id }),
        ]) {
          const error = await rejection(call());
          expect(error.code, id).toBe("RUN_NOT_FOUND");
        }
      }
      expect((await rejection(store.heartbeat("nope", 1, 1000))).code).toBe("RUN_NOT_FOUND");
      expect(await store.heartbeat(randomUUID(), 1, 1000)).toBe(false);
      expect(await store.finish(randomUUID(), 1, SUCCESS)).toBe(false);
      expect(await rowCount()).toBe(1);
    });

    it("list returns runs newest first, filters by status and thread, and pages with a keyset cursor", async () => {
      const created: RunRecord[] = [];
      for (let i = 0; i < 7; i += 1) {
        created.push(await store.create({ threadId: i % 2 === 0 ? "even" : "odd", input: INPUT, multitask: "enqueue" }));
      }
      const newestFirst = created.map((r) => r.run_id).reverse();
      expect((await store.list()).map((r) => r.run_id)).toEqual(newestFirst);

      const pages: string[][] = [];
      let before: string | undefined;
      for (let i = 0; i < 10; i += 1) {
        const page = await store.list({ limit: 3, before });
        pages.push(page.map((r) => r.run_id));
        if (page.length < 3) break;
        before = page[page.length - 1]?.run_id;
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(newestFirst);
      // a cursor on the oldest run is a valid, empty last page
      expect(await store.list({ before: created[0]?.run_id })).toEqual([]);

      expect((await store.list({ threadId: "odd" })).map((r) => r.run_id)).toEqual(newestFirst.filter((_, i) => i % 2 === 1));
      const claimed = await store.claimNext(LEASE);
      expect(claimed?.run.run_id).toBe(created[0]?.run_id);
      expect((await store.list({ status: "running" })).map((r) => r.run_id)).toEqual([created[0]?.run_id]);
      expect((await store.list({ status: "pending", threadId: "even", limit: 2 })).map((r) => r.run_id)).toEqual([created[6]?.run_id, created[4]?.run_id]);
      expect(await store.list({ status: "success" })).toEqual([]);
      expect(await store.list({ threadId: "nobody" })).toEqual([]);

      for (const limit of [0, 501, 1.5]) expect((await rejection(store.list({ limit }))).code).toBe("RUN_INPUT_INVALID");
      expect((await rejection(store.list({ status: "done" as never }))).code).toBe("RUN_INPUT_INVALID");
    });

    it("rejects a second active run on a thread unless asked to enqueue it", async () => {
      const first = await store.create({ threadId: "t", input: INPUT });
      const error = await rejection(store.create({ threadId: "t", input: INPUT }));
      expect(error).toBeInstanceOf(RunConflictError);
      expect(error.code).toBe("RUN_CONFLICT");
      expect(error.message).toContain(first.run_id);
      expect(error.message).toContain('multitask "enqueue"');
      expect(error.details).toMatchObject({ threadId: "t", activeRunId: first.run_id, activeStatus: "pending" });

      const queued = await store.create({ threadId: "t", input: INPUT, multitask: "enqueue" });
      expect(queued.status).toBe("pending");
      expect(await rowCount()).toBe(2);

      // a running run blocks "reject" too; one that ended (at an interrupt too) does not
      const a = await store.claimNext(LEASE);
      expect(a?.run.run_id).toBe(first.run_id);
      expect((await rejection(store.create({ threadId: "t", input: INPUT }))).details).toMatchObject({ activeRunId: first.run_id, activeStatus: "running" });
      expect(await store.endAtInterrupt(first.run_id, a!.epoch, counts(1, 1, 3))).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
      expect((await rejection(store.create({ threadId: "t", input: INPUT }))).details).toMatchObject({ activeRunId: queued.run_id, activeStatus: "pending" });
      const b = await store.claimNext(LEASE);
      expect(b?.run.run_id).toBe(queued.run_id);
      expect(await store.finish(queued.run_id, b!.epoch, SUCCESS)).toBe(true);
      const later = await store.create({ threadId: "t", input: INPUT });
      expect(later).toMatchObject({ status: "pending", waiting: false, resumes_run: null });
      // a newer run on the thread: it no longer waits on the interrupted one
      expect((await store.get(first.run_id)).waiting).toBe(false);
      expect(await rowCount()).toBe(3);
    });

    it("lets exactly one of five concurrent creates on one thread through with multitask reject", async () => {
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => store.create({ threadId: "race", input: INPUT })));
      const ok = results.filter((r) => r.status === "fulfilled");
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(4);
      for (const r of refused) expect((r.reason as DevmindError).code).toBe("RUN_CONFLICT");
      expect(await rowCount()).toBe(1);
    });
  });

  describe("queue", () => {
    it("claimNext takes the oldest claimable run and never starts a thread's queued run while another is active", async () => {
      const a = await store.create({ threadId: "t1", input: INPUT });
      const b = await store.create({ threadId: "t2", input: INPUT });
      const a2 = await store.create({ threadId: "t1", input: INPUT, multitask: "enqueue" });

      const first = await store.claimNext({ owner: "w1", leaseMs: 60_000 });
      expect(first?.epoch).toBe(1);
      expect(first?.run).toMatchObject({ run_id: a.run_id, status: "running", attempt: 1, lease: { owner: "w1", epoch: 1, expires_at: expect.stringMatching(ISO) } });
      expect(Date.parse(first!.run.lease!.expires_at) - Date.parse(first!.run.updated_at)).toBe(60_000);
      const second = await store.claimNext({ owner: "w2", leaseMs: 60_000 });
      expect(second?.run).toMatchObject({ run_id: b.run_id, status: "running", attempt: 1, lease: { owner: "w2", epoch: 1 } });
      expect(await store.claimNext(LEASE)).toBeNull();

      // a run that ends at an interrupt ends (success, stop reason interrupt): the thread's queued run starts
      expect(await store.endAtInterrupt(a.run_id, 1, counts(2, 1, 40), { interrupts: [{ id: "i1", value: "ask", ns: [] }], checkpointId: "cp-1" })).toMatchObject({
        status: "success",
        stop_reason: "interrupt",
        waiting: true,
        interrupts: [{ id: "i1", value: "ask", ns: [] }],
        lease: null,
        attempt: 1,
        model_rounds: 2,
        tool_calls: 1,
        active_ms: 40,
        finished_at: expect.stringMatching(ISO),
      });
      expect(await store.interruptCheckpoint(a.run_id)).toBe("cp-1");
      expect((await rejection(store.claim(a.run_id, LEASE))).message).toContain("already finished with status success");

      const third = await store.claimNext({ owner: "w3", leaseMs: 60_000 });
      expect(third?.run).toMatchObject({ run_id: a2.run_id, attempt: 1, lease: { owner: "w3", epoch: 1 } });
      expect(await store.claimNext(LEASE)).toBeNull();
      expect(await store.finish(a2.run_id, 1, { ...SUCCESS, counts: counts(3, 1, 60, 100) })).toBe(true);
      expect(await store.get(a2.run_id)).toMatchObject({
        status: "success",
        stop_reason: "completed",
        answer: "done",
        model_rounds: 3,
        tool_calls: 1,
        usage: { input_tokens: 100, output_tokens: 101 },
        active_ms: 60,
        attempt: 1,
        lease: null,
        error: null,
        interrupts: null,
        finished_at: expect.stringMatching(ISO),
      });
    });

    it("concurrent claimNext calls on one database never return the same run", async () => {
      for (let i = 0; i < 6; i += 1) await store.create({ threadId: `c${i}`, input: INPUT });
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.claimNext({ owner: `w${i}`, leaseMs: 60_000 })));
      const ids = results.flatMap((r) => (r === null ? [] : [r.run.run_id]));
      expect(ids).toHaveLength(6);
      expect(new Set(ids).size).toBe(6);
      expect(results.filter((r) => r === null)).toHaveLength(2);
    });

    it("claim takes one pending run, and otherwise says why not", async () => {
      const run = await store.create({ threadId: "c", input: INPUT });
      const claimed = await store.claim(run.run_id, LEASE);
      expect(claimed).toMatchObject({ epoch: 1, run: { status: "running", attempt: 1 } });
      let error = await rejection(store.claim(run.run_id, LEASE));
      expect(error.code).toBe("RUN_CONFLICT");
      expect(error.message).toContain("already running");

      expect(await store.endAtInterrupt(run.run_id, 1, counts(1, 1, 1))).not.toBeNull();
      error = await rejection(store.claim(run.run_id, LEASE));
      expect(error.message).toContain("already finished with status success");

      // FIFO per thread: a queued run cannot jump ahead of the one before it, nor start beside a running one
      const q1 = await store.create({ threadId: "q", input: INPUT });
      const q2 = await store.create({ threadId: "q", input: INPUT, multitask: "enqueue" });
      error = await rejection(store.claim(q2.run_id, LEASE));
      expect(error.message).toContain(`run ${q1.run_id} is queued ahead`);
      expect(error.details).toMatchObject({ blockerId: q1.run_id, blockerStatus: "pending" });
      await store.claim(q1.run_id, LEASE);
      error = await rejection(store.claim(q2.run_id, LEASE));
      expect(error.details).toMatchObject({ blockerId: q1.run_id, blockerStatus: "running" });
      expect((await store.get(q2.run_id)).status).toBe("pending");

      expect((await rejection(store.claim(q2.run_id, { owner: "", leaseMs: 1000 }))).code).toBe("RUN_INPUT_INVALID");
      expect((await rejection(store.claim(q2.run_id, { owner: "w", leaseMs: 0 }))).code).toBe("RUN_INPUT_INVALID");
    });

    it("heartbeat extends the lease, and release gives the run back keeping its attempt", async () => {
      const run = await store.create({ input: INPUT });
      const claimed = await store.claimNext({ owner: "w1", leaseMs: 1_000 });
      const before = Date.parse(claimed!.run.lease!.expires_at);
      expect(await store.heartbeat(run.run_id, 1, 120_000)).toBe(true);
      const renewed = await store.get(run.run_id);
      expect(Date.parse(renewed.lease!.expires_at) - before).toBeGreaterThanOrEqual(119_000);
      expect(renewed).toMatchObject({ status: "running", attempt: 1, lease: { owner: "w1", epoch: 1 } });

      expect(await store.release(run.run_id, 1, counts(2, 2, 30))).toBe(true);
      expect(await store.get(run.run_id)).toMatchObject({ status: "pending", attempt: 1, lease: null, model_rounds: 2, tool_calls: 2, active_ms: 30, finished_at: null });
      expect(await storedEpoch(run.run_id)).toBe(1);
      expect(await store.heartbeat(run.run_id, 1, 1_000)).toBe(false);
      expect(await store.release(run.run_id, 1)).toBe(false);

      const again = await store.claimNext({ owner: "w2", leaseMs: 1_000 });
      expect(again).toMatchObject({ epoch: 2, run: { run_id: run.run_id, attempt: 2, lease: { owner: "w2", epoch: 2 } } });
      // a release without counts keeps the stored ones
      expect(await store.release(run.run_id, 2)).toBe(true);
      expect(await store.get(run.run_id)).toMatchObject({ status: "pending", attempt: 2, model_rounds: 2, active_ms: 30 });
    });

    it("fences a worker whose lease expired and was taken over: its heartbeat, interrupt, release and finish change nothing", async () => {
      const run = await store.create({ input: INPUT });
      const stale = await store.claimNext({ owner: "stalled", leaseMs: 60_000 });
      expect(stale?.epoch).toBe(1);
      await expireLease(run.run_id);
      expect(await store.requeueExpired({ maxAttempts: 3 })).toEqual({ requeued: [run.run_id], failed: [], cancelled: [] });
      expect(await store.get(run.run_id)).toMatchObject({ status: "pending", attempt: 1, lease: null, finished_at: null, stop_reason: null });

      const fresh = await store.claimNext({ owner: "healthy", leaseMs: 60_000 });
      expect(fresh).toMatchObject({ epoch: 2, run: { attempt: 2, lease: { owner: "healthy", epoch: 2 } } });
      const snapshot = await store.get(run.run_id);
      expect(await store.heartbeat(run.run_id, 1, 60_000)).toBe(false);
      expect(await store.endAtInterrupt(run.run_id, 1, counts(9, 9, 9))).toBeNull();
      expect(await store.release(run.run_id, 1, counts(9, 9, 9))).toBe(false);
      expect(await store.finish(run.run_id, 1, { ...SUCCESS, answer: "stale", counts: counts(9, 9, 9) })).toBe(false);
      expect(await store.get(run.run_id)).toEqual(snapshot);

      expect(await store.heartbeat(run.run_id, 2, 60_000)).toBe(true);
      expect(await store.finish(run.run_id, 2, SUCCESS)).toBe(true);
      expect(await store.get(run.run_id)).toMatchObject({ status: "success", answer: "done", attempt: 2 });
      // finished: even the current epoch cannot write any more
      expect(await store.finish(run.run_id, 2, { ...SUCCESS, answer: "twice" })).toBe(false);
      expect(await store.heartbeat(run.run_id, 2, 60_000)).toBe(false);
      expect((await store.get(run.run_id)).answer).toBe("done");
    });

    it("requeueExpired leaves live leases alone and ends a run as max_attempts once it was claimed maxAttempts times", async () => {
      const run = await store.create({ input: INPUT });
      const other = await store.create({ input: INPUT });
      await store.claimNext(LEASE);
      await store.claimNext(LEASE);
      expect(await store.requeueExpired({ maxAttempts: 2 })).toEqual({ requeued: [], failed: [], cancelled: [] });

      await expireLease(run.run_id);
      expect(await store.requeueExpired({ maxAttempts: 2 })).toEqual({ requeued: [run.run_id], failed: [], cancelled: [] });
      expect((await store.get(other.run_id)).status).toBe("running");
      const second = await store.claimNext(LEASE);
      expect(second).toMatchObject({ epoch: 2, run: { run_id: run.run_id, attempt: 2 } });
      await expireLease(run.run_id);
      expect(await store.requeueExpired({ maxAttempts: 2 })).toEqual({ requeued: [], failed: [run.run_id], cancelled: [] });
      const failed = await store.get(run.run_id);
      expect(failed).toMatchObject({
        status: "error",
        stop_reason: "max_attempts",
        attempt: 2,
        lease: null,
        finished_at: expect.stringMatching(ISO),
        error: { code: "MAX_ATTEMPTS", message: expect.stringContaining("attempt 2 of 2") },
      });
      expect(await store.claimNext(LEASE)).toBeNull();
      expect(await store.heartbeat(run.run_id, 2, 1_000)).toBe(false);
      expect((await rejection(store.requeueExpired({ maxAttempts: 0 }))).code).toBe("RUN_INPUT_INVALID");
    });

    it("requeueExpired stores the final event of a run it ends and wakes workers of every process", async () => {
      const exhausted = await store.create({ input: INPUT });
      const cancelled = await store.create({ input: INPUT });
      const requeued = await store.create({ input: INPUT });
      const events = new EventStore(db);
      await events.append(exhausted.run_id, [{ type: "run.created" }]);
      for (let i = 0; i < 3; i += 1) await store.claimNext(LEASE);
      await store.requestCancel(cancelled.run_id);
      // the third one was claimed once only: with maxAttempts 2 it goes back to the queue
      await db.query(`UPDATE "${db.schema}".runs SET attempt = 2 WHERE run_id = $1`, [exhausted.run_id]);
      for (const run of [exhausted, cancelled, requeued]) await expireLease(run.run_id);
      const woken: string[] = [];
      const announced: string[] = [];
      const unlistenRuns = await db.listen(RUNS_CHANNEL, (payload) => woken.push(payload));
      const unlistenEvents = await db.listen(RUN_EVENTS_CHANNEL, (payload) => announced.push(payload));
      try {
        const outcome = await store.requeueExpired({ maxAttempts: 2 });
        expect(outcome).toEqual({ requeued: [requeued.run_id], failed: [exhausted.run_id], cancelled: [cancelled.run_id] });
        const exhaustedEvents = await events.read(exhausted.run_id);
        expect(exhaustedEvents.map((e) => [e.seq, e.type])).toEqual([[1, "run.created"], [2, "run.failed"]]);
        expect(exhaustedEvents[1]).toMatchObject({ stop_reason: "max_attempts", code: "MAX_ATTEMPTS", message: expect.stringContaining("attempt 2 of 2") });
        expect((await events.read(cancelled.run_id)).map((e) => [e.seq, e.type])).toEqual([[1, "run.cancelled"]]);
        expect(await events.read(requeued.run_id)).toEqual([]);
        // channels are per database, not per schema: files running at the same time on the test
        // server notify them too, so only this test's runs are compared
        const mine = new Set([exhausted.run_id, cancelled.run_id, requeued.run_id]);
        const sorted = (ids: string[]): string[] => [...new Set(ids)].filter((id) => mine.has(id)).sort();
        await vi.waitFor(() => {
          expect(sorted(woken)).toEqual(sorted([exhausted.run_id, cancelled.run_id, requeued.run_id]));
          expect(sorted(announced)).toEqual(sorted([exhausted.run_id, cancelled.run_id]));
        });
      } finally {
        await unlistenRuns();
        await unlistenEvents();
      }
    });

    it("finish checks that the status matches the stop reason and changes nothing otherwise", async () => {
      await store.create({ input: INPUT });
      const claimed = await store.claimNext(LEASE);
      const id = claimed!.run.run_id;
      const bad = [
        { ...SUCCESS, status: "success" as const, stopReason: "deadline" as const },
        { ...SUCCESS, status: "error" as const, stopReason: "completed" as const },
        { ...SUCCESS, status: "error" as const, stopReason: "exploded" as never },
        { ...SUCCESS, status: "running" as never },
        { ...SUCCESS, counts: counts(-1, 0, 0) },
      ];
      for (const outcome of bad) expect((await rejection(store.finish(id, 1, outcome))).code).toBe("RUN_INPUT_INVALID");
      expect((await store.get(id)).status).toBe("running");
      const error = { code: "MODEL_FAILED", message: "upstream said no" };
      expect(await store.finish(id, 1, { status: "error", stopReason: "model_failed", answer: null, counts: counts(1, 0, 7), error })).toBe(true);
      expect(await store.get(id)).toMatchObject({ status: "error", stop_reason: "model_failed", answer: null, error, active_ms: 7 });
    });

    it("keeps the stream modes a run was created with and the class name of the error it failed with", async () => {
      const plain = await store.create({ input: INPUT });
      expect(plain.stream_mode).toBeNull();
      const run = await store.create({ input: INPUT, multitask: "enqueue", threadId: plain.thread_id, streamMode: ["values", "custom"] });
      expect((await store.get(run.run_id)).stream_mode).toEqual(["values", "custom"]);
      expect((await rejection(store.create({ input: INPUT, streamMode: [""] }))).code).toBe("RUN_INPUT_INVALID");
      await store.delete(plain.run_id);
      const claimed = await store.claimNext(LEASE);
      expect(claimed?.run.run_id).toBe(run.run_id);
      const error = { code: "GRAPH_FAILED", message: "CustomError: Boo!", name: "CustomError" };
      expect(await store.finish(run.run_id, 1, { status: "error", stopReason: "internal_error", answer: null, counts: counts(0, 0, 1), error })).toBe(true);
      expect((await store.get(run.run_id)).error).toEqual(error);
    });

    it("the database itself refuses a second running run, or a second waited-on run, on one thread", async () => {
      const first = await store.create({ threadId: "u", input: INPUT });
      const second = await store.create({ threadId: "u", input: INPUT, multitask: "enqueue" });
      await store.claimNext(LEASE);
      const makeRunning = db.query(`UPDATE "${db.schema}".runs SET status = 'running', lease_owner = 'rogue' WHERE run_id = $1`, [second.run_id]);
      await expect(makeRunning).rejects.toMatchObject({ code: "23505" });
      // a run its thread waits on has ended (success); two at once on one thread are refused
      const makeWaiting = (runId: string) => db.query(`UPDATE "${db.schema}".runs SET status = 'success', stop_reason = 'interrupt', waiting = true WHERE run_id = $1`, [runId]);
      const third = await store.create({ threadId: "u", input: INPUT, multitask: "enqueue" });
      await expect(makeWaiting(second.run_id)).resolves.toBeDefined();
      await expect(makeWaiting(third.run_id)).rejects.toMatchObject({ code: "23505" });
      await expect(db.query(`UPDATE "${db.schema}".runs SET waiting = true WHERE run_id = $1`, [first.run_id])).rejects.toMatchObject({ code: "23514" });
      await db.query(`UPDATE "${db.schema}".runs SET status = 'pending', stop_reason = NULL, waiting = false WHERE run_id = $1`, [second.run_id]);
      expect((await store.get(first.run_id)).status).toBe("running");
      expect((await store.get(second.run_id)).status).toBe("pending");
    });
  });

  describe("cancel", () => {
    it("requestCancel interrupts queued runs at once, flags running ones, and refuses twice or after the end", async () => {
      const pending = await store.create({ input: INPUT });
      expect(await store.isCancelRequested(pending.run_id)).toBe(false);
      const cancelled = await store.requestCancel(pending.run_id);
      expect(cancelled).toMatchObject({ status: "interrupted", stop_reason: "cancelled", cancel_requested: true, finished_at: expect.stringMatching(ISO), lease: null });
      expect(await store.isCancelRequested(pending.run_id)).toBe(true);
      let error = await rejection(store.requestCancel(pending.run_id));
      expect(error.code).toBe("RUN_CONFLICT");
      expect(error.message).toContain("already finished with status interrupted");

      // a run that ended at an interrupt is finished: nothing to cancel (its thread waits; a new run resumes it)
      await store.create({ threadId: "i", input: INPUT });
      const waiting = await store.claimNext(LEASE);
      await store.endAtInterrupt(waiting!.run.run_id, waiting!.epoch, counts(1, 1, 1));
      error = await rejection(store.requestCancel(waiting!.run.run_id));
      expect(error.message).toContain("already finished with status success");
      expect(await store.get(waiting!.run.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true, cancel_requested: false });

      await store.create({ threadId: "r", input: INPUT });
      const running = await store.claimNext(LEASE);
      const id = running!.run.run_id;
      expect(await store.requestCancel(id)).toMatchObject({ status: "running", cancel_requested: true, finished_at: null, lease: { epoch: 1 } });
      expect(await store.isCancelRequested(id)).toBe(true);
      error = await rejection(store.requestCancel(id));
      expect(error.message).toContain("already cancelled");
      expect(await store.finish(id, 1, { status: "interrupted", stopReason: "cancelled", answer: "partial", counts: counts(1, 0, 2), error: null })).toBe(true);
      expect(await store.get(id)).toMatchObject({ status: "interrupted", stop_reason: "cancelled", answer: "partial" });

      await store.create({ threadId: "s", input: INPUT });
      const succeeded = await store.claimNext(LEASE);
      await store.finish(succeeded!.run.run_id, 1, SUCCESS);
      error = await rejection(store.requestCancel(succeeded!.run.run_id));
      expect(error.message).toContain("already finished with status success");
      expect((await store.get(succeeded!.run.run_id)).cancel_requested).toBe(false);
    });

    it("a queued run of a thread starts once the run ahead of it is cancelled", async () => {
      const first = await store.create({ threadId: "k", input: INPUT });
      const second = await store.create({ threadId: "k", input: INPUT, multitask: "enqueue" });
      await store.requestCancel(first.run_id);
      expect((await store.claimNext(LEASE))?.run.run_id).toBe(second.run_id);
    });

    it("requeueExpired ends a cancel-requested run whose lease lapsed as interrupted instead of running it again", async () => {
      const run = await store.create({ input: INPUT });
      await store.claimNext(LEASE);
      await store.requestCancel(run.run_id);
      await expireLease(run.run_id);
      expect(await store.requeueExpired({ maxAttempts: 3 })).toEqual({ requeued: [], failed: [], cancelled: [run.run_id] });
      expect(await store.get(run.run_id)).toMatchObject({ status: "interrupted", stop_reason: "cancelled", error: null, lease: null, finished_at: expect.stringMatching(ISO) });
      expect(await store.claimNext(LEASE)).toBeNull();
    });
  });

  describeOn(backend, "postgres")("separate pools (PostgreSQL)", () => {
    let pools: Database[] = [];
    beforeAll(async () => {
      pools = [
        await openDatabase({ url: TEST_DATABASE_URL, schema: db.schema, maxConnections: 4 }),
        await openDatabase({ url: TEST_DATABASE_URL, schema: db.schema, maxConnections: 4 }),
      ];
    });
    afterAll(async () => {
      for (const pool of pools) await pool.close();
    });

    it("two workers claiming at once never take the same run, nor two runs of one thread", async () => {
      for (let i = 0; i < 30; i += 1) await store.create({ threadId: `p${i}`, input: INPUT });
      for (let i = 0; i < 5; i += 1) await store.create({ threadId: "shared", input: INPUT, multitask: "enqueue" });
      const worker = async (pool: Database, name: string): Promise<string[]> => {
        const workerStore = new RunStore(pool);
        const got: string[] = [];
        for (let i = 0; i < 60; i += 1) {
          const claimed = await workerStore.claimNext({ owner: name, leaseMs: 60_000 });
          if (claimed === null) break;
          got.push(claimed.run.run_id);
        }
        return got;
      };
      const [a, b] = await Promise.all([worker(pools[0]!, "a"), worker(pools[1]!, "b")]);
      const all = [...a!, ...b!];
      expect(all).toHaveLength(31);
      expect(new Set(all).size).toBe(31);
      const running = await store.list({ status: "running", limit: 500 });
      expect(running).toHaveLength(31);
      expect(running.filter((r) => r.thread_id === "shared")).toHaveLength(1);
      expect(running.every((r) => r.attempt === 1 && r.lease?.epoch === 1)).toBe(true);
    });

    it("concurrent creates on one thread from two pools: exactly one succeeds", async () => {
      const stores = pools.map((pool) => new RunStore(pool));
      const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => stores[i % 2]!.create({ threadId: "two-pools", input: INPUT })));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await rowCount()).toBe(1);
    });

    it("claimNext that loses a same-thread race on the unique index moves on to the next run", async () => {
      const blocked = await store.create({ threadId: "hot", input: INPUT });
      const next = await store.create({ threadId: "cold", input: INPUT });
      const claimer = new RunStore(pools[0]!);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
      // another session makes a run of the same thread running, and has not committed yet
      const rival = pools[1]!.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO "${db.schema}".runs (run_id, thread_id, status, input, lease_owner, lease_epoch, lease_expires_at, created_at)
           VALUES ($1, 'hot', 'running', '{"messages": ["x"]}', 'rival', 1, now() + interval '1 minute', now() + interval '1 hour')`,
          [randomUUID()],
        );
        inserted();
        await gate;
      });
      await insertedSignal;
      const claiming = claimer.claimNext({ owner: "w", leaseMs: 60_000 });
      // wait (bounded) until the claim is blocked on the rival's index entry, then commit the rival
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const waiting = await owner.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%"${db.schema}".runs%`],
        );
        if ((waiting.rows[0]?.n ?? 0) > 0) break;
        await sleep(20);
      }
      expect(Date.now()).toBeLessThan(deadline);
      release();
      await rival;
      const claimed = await claiming;
      expect(claimed?.run.run_id).toBe(next.run_id);
      expect((await store.get(blocked.run_id)).status).toBe("pending");
    });
  });
});
