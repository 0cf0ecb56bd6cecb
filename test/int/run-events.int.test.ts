import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notify } from "../../src/db/channels.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { LeaseLostError } from "../../src/errors.js";
import { EventStore, isRunEvent, type NewRunEvent, type StoredRunEvent } from "../../src/runtime/events/event-store.js";
import type { Fence } from "../../src/runtime/queue/fence.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { REDACTED } from "../../src/secret-redaction.js";
import { BACKENDS, freshMigratedSchema, itOn, openBackend } from "../helpers/databases.js";
import { rejection } from "../helpers/assertions.js";

/** Longest a test waits for something that should happen within milliseconds. */
const WAIT_MS = 5_000;

/** Inserts a run row directly (columns per migration 0002): running with a lease at `epoch`. */
async function insertRun(db: Database, epoch = 1): Promise<{ runId: string; threadId: string; fence: Fence }> {
  const runId = randomUUID();
  const threadId = `thread-${runId.slice(0, 8)}`;
  await db.query(
    `INSERT INTO "${db.schema}".runs (run_id, thread_id, status, input, lease_owner, lease_epoch, lease_expires_at)
     VALUES ($1, $2, 'running', '{"messages": []}', 'worker-test', $3, now() + interval '1 minute')`,
    [runId, threadId, epoch],
  );
  return { runId, threadId, fence: { runId, epoch } };
}

async function storedCount(db: Database, runId: string): Promise<number> {
  const result = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".run_events WHERE run_id = $1`, [runId]);
  return result.rows[0]?.n ?? -1;
}


/** Pulls `count` events from `iterator`, failing after WAIT_MS instead of hanging. */
async function take(iterator: AsyncIterator<StoredRunEvent>, count: number): Promise<StoredRunEvent[]> {
  const taken: StoredRunEvent[] = [];
  const deadline = Date.now() + WAIT_MS;
  while (taken.length < count) {
    const left = deadline - Date.now();
    const next = await Promise.race([iterator.next(), sleep(Math.max(left, 0)).then(() => "timeout" as const)]);
    if (next === "timeout") throw new Error(`timed out after ${WAIT_MS} ms with ${taken.length} of ${count} events`);
    if (next.done === true) throw new Error(`iteration ended after ${taken.length} of ${count} events`);
    taken.push(next.value);
  }
  return taken;
}

/** Resolves true when `iterator` ends within WAIT_MS (yielding nothing more), false otherwise. */
async function ends(iterator: AsyncIterator<StoredRunEvent>): Promise<boolean> {
  const next = await Promise.race([iterator.next(), sleep(WAIT_MS).then(() => "timeout" as const)]);
  return next !== "timeout" && next.done === true;
}

async function waitUntil(check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${WAIT_MS} ms`);
    await sleep(10);
  }
}

const channelName = (): string => `t_${randomBytes(6).toString("hex")}`;

// complete events of the union, as the runtime writes them
const STARTED = { type: "run.started", attempt: 1, worker: "w-1" } as const;
const MODEL_STARTED = { type: "model.started", round: 1 } as const;
const MODEL_FINISHED = { type: "model.finished", round: 1, duration_ms: 3, tool_calls: 1, usage: { input_tokens: 1, output_tokens: 1 }, finish_reason: "tool_calls" } as const;
const CALL_STARTED = { type: "tool.call.started", tool_call_id: "c1", tool: "add", args: { a: 1 } } as const;
const CALL_FINISHED = { type: "tool.call.finished", tool_call_id: "c1", tool: "add", ok: true, error_code: null, duration_ms: 1, truncated: false } as const;
const custom = (data: unknown): NewRunEvent => ({ type: "custom", ns: [], data });

describe.each(BACKENDS)("EventStore on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let events: EventStore;
  /** Another view of the data: on PostgreSQL its own pool and listener, as another process has. */
  let other: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    events = new EventStore(db);
    other = backend === "postgres" ? await openBackend("postgres", db.schema) : withSchema(owner, db.schema);
  });
  afterAll(async () => {
    await other?.close();
    await drop?.();
    await owner?.close();
  });

  it("appends in one batch with consecutive seqs and reads them back in order with their envelope", async () => {
    const { runId, threadId } = await insertRun(db);
    const first = await events.append(runId, [{ type: "run.created" }, STARTED]);
    expect(first.map((event) => [event.seq, event.type])).toEqual([
      [1, "run.created"],
      [2, "run.started"],
    ]);
    expect(first[1]).toMatchObject({ run_id: runId, thread_id: threadId, attempt: 1, worker: "w-1" });
    expect(new Date(first[0]!.at).toISOString()).toBe(first[0]!.at);
    await events.append(runId, [MODEL_STARTED]);
    const all = await events.read(runId);
    expect(all.map((event) => event.seq)).toEqual([1, 2, 3]);
    // the envelope comes first; jsonb keeps the event's own fields in its own order
    expect(Object.keys(all[1]!).slice(0, 5)).toEqual(["run_id", "thread_id", "seq", "type", "at"]);
    expect(Object.keys(all[1]!).slice(5).sort()).toEqual(["attempt", "worker"]);
    expect(all[2]).toEqual({ run_id: runId, thread_id: threadId, seq: 3, type: "model.started", at: all[2]!.at, round: 1 });
    expect((await events.read(runId, { after: 1, limit: 1 })).map((event) => event.seq)).toEqual([2]);
    expect(await events.read(runId, { after: 3 })).toEqual([]);
    expect(await events.append(runId, [])).toEqual([]);
  });

  it("gives racing appenders distinct consecutive seqs, each batch contiguous", async () => {
    const { runId } = await insertRun(db);
    const batches = await Promise.all(
      Array.from({ length: 8 }, (_, writer) =>
        (writer % 2 === 0 ? events : new EventStore(other)).append(
          runId,
          [0, 1, 2].map((index) => custom({ writer, index })),
        ),
      ),
    );
    for (const batch of batches) {
      expect(batch.map((event) => event.seq)).toEqual([batch[0]!.seq, batch[0]!.seq + 1, batch[0]!.seq + 2]);
      expect(batch.map((event) => (event.type === "custom" ? (event.data as { index: number }).index : null))).toEqual([0, 1, 2]);
    }
    const stored = await events.read(runId);
    expect(stored.map((event) => event.seq)).toEqual(Array.from({ length: 24 }, (_, index) => index + 1));
  });

  it("refuses unknown runs and malformed events, writing nothing", async () => {
    expect((await rejection(events.append(randomUUID(), [{ type: "run.created" }]))).code).toBe("RUN_NOT_FOUND");
    expect((await rejection(events.read(randomUUID()))).code).toBe("RUN_NOT_FOUND");
    expect((await rejection(events.read("not-a-uuid"))).code).toBe("RUN_NOT_FOUND");
    const { runId } = await insertRun(db);
    // what the types refuse is refused at run time too (for callers outside the type system)
    const bad: unknown[][] = [
      [{ type: "Run Created" }],
      [{ type: "run.created" }, { type: "" }],
      [{ type: "run.someday" }],
      [{ type: "model.delta", round: 1, text: "live only" }],
      [{ ...STARTED, seq: 9 }],
      [[1, 2]],
      [null],
      [custom({ big: 10n })],
    ];
    for (const batch of bad) {
      expect((await rejection(events.append(runId, batch as never))).code).toBe("RUN_INPUT_INVALID");
    }
    expect((await rejection(events.read(runId, { after: -1 }))).code).toBe("RUN_INPUT_INVALID");
    expect(await storedCount(db, runId)).toBe(0);
  });

  it("writes fenced events only while the lease is held at that epoch", async () => {
    const { runId, fence } = await insertRun(db, 4);
    expect((await events.append(runId, [STARTED], fence)).map((event) => event.seq)).toEqual([1]);
    await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = lease_epoch + 1 WHERE run_id = $1`, [runId]);
    const lost = await rejection(events.append(runId, [MODEL_STARTED, MODEL_FINISHED], fence));
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect(lost.code).toBe("LEASE_LOST");
    expect(await storedCount(db, runId)).toBe(1);
    const current = { runId, epoch: 5 };
    expect((await events.append(runId, [MODEL_STARTED], current)).map((event) => event.seq)).toEqual([2]);
    await db.query(`UPDATE "${db.schema}".runs SET status = 'interrupted', lease_owner = NULL WHERE run_id = $1`, [runId]);
    expect((await rejection(events.append(runId, [{ type: "run.interrupted" }], current))).code).toBe("LEASE_LOST");
    expect((await rejection(events.append(randomUUID(), [STARTED], { runId: randomUUID(), epoch: 1 }))).code).toBe("RUN_INPUT_INVALID");
    expect(await storedCount(db, runId)).toBe(2);
  });

  it("appendWith stores a status change and its event together, or neither", async () => {
    const { runId } = await insertRun(db, 1);
    const store = new RunStore(db);
    const outcome = { status: "success", stopReason: "completed", answer: "ok", counts: { modelRounds: 1, toolCalls: 0, usage: { input_tokens: 1, output_tokens: 1 }, activeMsDelta: 1 }, error: null } as const;
    const status = async (): Promise<string | undefined> =>
      (await db.query<{ status: string }>(`SELECT status FROM "${db.schema}".runs WHERE run_id = $1`, [runId])).rows[0]?.status;
    // a stale epoch: the write is refused, and no event is stored
    expect(await events.appendWith(runId, [{ type: "run.succeeded", answer: "stale" }], (tx) => store.finish(runId, 7, outcome, { tx }))).toBe(false);
    expect(await storedCount(db, runId)).toBe(0);
    // the event cannot be stored: the status change is rolled back with it
    const bad = await rejection(events.appendWith(runId, [{ type: "Not A Type" } as never], (tx) => store.finish(runId, 1, outcome, { tx })));
    expect(bad.code).toBe("RUN_INPUT_INVALID");
    expect(await status()).toBe("running");
    expect(await storedCount(db, runId)).toBe(0);
    // both, in one commit
    expect(await events.appendWith(runId, [{ type: "run.succeeded", answer: "ok" }], (tx) => store.finish(runId, 1, outcome, { tx }))).toBe(true);
    expect(await status()).toBe("success");
    expect(await events.read(runId)).toMatchObject([{ seq: 1, type: "run.succeeded", answer: "ok" }]);
  });

  it("redacts secrets before anything is stored", async () => {
    const { runId } = await insertRun(db);
    const [stored] = await events.append(runId, [
      {
        type: "tool.call.started",
        tool_call_id: "c1",
        tool: "run_command",
        args: {
          command: "curl -H 'Authorization: Bearer abcdef0123456789xyz' https://x",
          api_key: "plain-value",
          env: { OPENAI_API_KEY: "sk-abcdefghijklmnopqrstuvwx" },
          note: "the key is sk-proj-ABCDEFGHIJKLMNOPQRST",
          usage: { input_tokens: 5 },
        },
      },
    ]);
    expect(stored).toMatchObject({
      tool: "run_command",
      args: {
        command: `curl -H 'Authorization: Bearer ${REDACTED}' https://x`,
        api_key: REDACTED,
        env: { OPENAI_API_KEY: REDACTED },
        note: `the key is ${REDACTED}`,
        usage: { input_tokens: 5 },
      },
    });
    const raw = await db.query<{ data: string }>(`SELECT data::text AS data FROM "${db.schema}".run_events WHERE run_id = $1`, [runId]);
    const text = raw.rows.map((row) => row.data).join("\n");
    for (const secret of ["abcdef0123456789xyz", "plain-value", "sk-abcdefghij", "sk-proj-ABCD"]) expect(text).not.toContain(secret);
  });

  it("follows stored events, then live ones appended through another connection, each once", async () => {
    const { runId } = await insertRun(db);
    await events.append(runId, [{ type: "run.created" }, STARTED]);
    const controller = new AbortController();
    // a poll far beyond the test's waits: only a notification can deliver the live events in time
    const iterator = events.follow(runId, { signal: controller.signal, pollMs: 60_000 })[Symbol.asyncIterator]();
    expect((await take(iterator, 2)).map((event) => event.seq)).toEqual([1, 2]);
    const writer = new EventStore(other);
    const pending = take(iterator, 4);
    await writer.append(runId, [MODEL_STARTED]);
    await sleep(20);
    await writer.append(runId, [MODEL_FINISHED, CALL_STARTED]);
    await writer.append(runId, [CALL_FINISHED]);
    expect((await pending).map((event) => [event.seq, event.type])).toEqual([
      [3, "model.started"],
      [4, "model.finished"],
      [5, "tool.call.started"],
      [6, "tool.call.finished"],
    ]);
    controller.abort();
    expect(await ends(iterator)).toBe(true);
  });

  it("delivers every event of racing appenders exactly once and in seq order", async () => {
    const { runId } = await insertRun(db);
    const controller = new AbortController();
    const iterator = events.follow(runId, { signal: controller.signal, pollMs: 60_000 })[Symbol.asyncIterator]();
    const received = take(iterator, 40);
    await Promise.all(
      Array.from({ length: 10 }, (_, writer) =>
        new EventStore(writer % 2 === 0 ? db : other).append(
          runId,
          [0, 1, 2, 3].map((index) => custom({ writer, index })),
        ),
      ),
    );
    expect((await received).map((event) => event.seq)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
    controller.abort();
    expect(await ends(iterator)).toBe(true);
  });

  it("starts after `after`, and ends promptly when aborted while waiting", async () => {
    const { runId } = await insertRun(db);
    await events.append(runId, [{ type: "run.created" }, STARTED, MODEL_STARTED]);
    const controller = new AbortController();
    const iterator = events.follow(runId, { after: 2, signal: controller.signal, pollMs: 60_000 })[Symbol.asyncIterator]();
    expect((await take(iterator, 1)).map((event) => event.seq)).toEqual([3]);
    const next = iterator.next();
    await sleep(50);
    const started = Date.now();
    controller.abort();
    expect((await next).done).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    const aborted = events.follow(runId, { signal: controller.signal })[Symbol.asyncIterator]();
    expect((await aborted.next()).done).toBe(true);
  });

  it("ends once isDone() is true and everything stored by then was yielded", async () => {
    const { runId } = await insertRun(db);
    await events.append(runId, [STARTED]);
    let done = false;
    const iterator = events.follow(runId, { isDone: () => done, pollMs: 60_000 })[Symbol.asyncIterator]();
    expect((await take(iterator, 1)).map((event) => event.seq)).toEqual([1]);
    const writer = new EventStore(other);
    await writer.append(runId, [MODEL_STARTED]);
    expect((await take(iterator, 1)).map((event) => event.type)).toEqual(["model.started"]);
    await writer.append(runId, [{ type: "run.succeeded", answer: "42" }, { type: "run.cancelled" }]);
    done = true;
    expect((await take(iterator, 2)).map((event) => event.type)).toEqual(["run.succeeded", "run.cancelled"]);
    expect(await ends(iterator)).toBe(true);

    // already done: drains what is stored, then ends without waiting for a poll
    const drained: number[] = [];
    for await (const event of events.follow(runId, { isDone: async () => true, pollMs: 60_000 })) drained.push(event.seq);
    expect(drained).toEqual([1, 2, 3, 4]);
  });

  it("falls back to polling when no notification arrives", async () => {
    const { runId } = await insertRun(db);
    const controller = new AbortController();
    const iterator = events.follow(runId, { signal: controller.signal, pollMs: 50 })[Symbol.asyncIterator]();
    const pending = take(iterator, 1);
    // written without the notifying statement, as if the notification had been lost
    await db.query(`INSERT INTO "${db.schema}".run_events (run_id, seq, type) VALUES ($1, 1, 'run.started')`, [runId]);
    expect((await pending).map((event) => event.type)).toEqual(["run.started"]);
    controller.abort();
    expect(await ends(iterator)).toBe(true);
  });

  it("reads a type it does not know (a newer version's) as stored, told apart from the known ones", async () => {
    const { runId, threadId } = await insertRun(db);
    await events.append(runId, [STARTED]);
    await db.query(`INSERT INTO "${db.schema}".run_events (run_id, seq, type, data) VALUES ($1, 2, 'run.paused_for_review', '{"by": "alice"}')`, [runId]);
    const [known, foreign] = await events.read(runId);
    expect(isRunEvent(known!)).toBe(true);
    expect(isRunEvent(foreign!)).toBe(false);
    expect(foreign).toEqual({ run_id: runId, thread_id: threadId, seq: 2, type: "run.paused_for_review", at: foreign!.at, by: "alice" });
  });

  it("reports an unknown run when following", async () => {
    const iterator = events.follow(randomUUID(), { pollMs: 50 })[Symbol.asyncIterator]();
    expect((await rejection(iterator.next())).code).toBe("RUN_NOT_FOUND");
  });
});

describe.each(BACKENDS)("listen seam on %s", (backend) => {
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner?.close();
  });

  it("delivers notifications to every subscription until it unlistens, also through schema views", async () => {
    const channel = channelName();
    const seen: string[] = [];
    const view = withSchema(owner, "some_view");
    const callback = (payload: string): void => void seen.push(payload);
    const first = await owner.listen(channel, callback);
    const second = await view.listen(channel, callback);
    await notify(owner, channel, "one");
    await waitUntil(() => seen.length === 2);
    expect(seen).toEqual(["one", "one"]);
    await second();
    await second();
    await notify(view, channel, "two");
    await waitUntil(() => seen.length === 3);
    await first();
    await notify(owner, channel, "three");
    await sleep(100);
    expect(seen).toEqual(["one", "one", "two"]);
  });

  it("delivers a notification sent in a transaction only on commit", async () => {
    const channel = channelName();
    const seen: string[] = [];
    const unlisten = await owner.listen(channel, (payload) => void seen.push(payload));
    await expect(
      owner.transaction(async (tx) => {
        await notify(tx, channel, "rolled-back");
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await owner.transaction((tx) => notify(tx, channel, "committed"));
    await waitUntil(() => seen.length === 1);
    await sleep(50);
    expect(seen).toEqual(["committed"]);
    await unlisten();
  });

  it("refuses channel names that are not plain identifiers", async () => {
    for (const bad of ['x"; DROP TABLE y; --', "Upper", "", "a".repeat(64)]) {
      await expect(owner.listen(bad, () => undefined)).rejects.toThrow(/invalid notification channel/);
      await expect(notify(owner, bad, "p")).rejects.toThrow(/invalid notification channel/);
    }
  });

  itOn(backend, "postgres")("carries notifications between separate Database instances (processes)", async () => {
    const sender = await openBackend("postgres");
    try {
      const channel = channelName();
      const seen: string[] = [];
      const unlisten = await owner.listen(channel, (payload) => void seen.push(payload));
      await notify(sender, channel, "from-elsewhere");
      await waitUntil(() => seen.length === 1);
      expect(seen).toEqual(["from-elsewhere"]);
      await unlisten();
    } finally {
      await sender.close();
    }
  });

  itOn(backend, "postgres")("reconnects and listens again after its connection is killed", async () => {
    const listener = await openBackend("postgres");
    try {
      const channel = channelName();
      const seen: string[] = [];
      await listener.listen(channel, (payload) => void seen.push(payload));
      // the listening backend is the one whose last statement was our LISTEN
      const killed = await owner.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'devmind-listen' AND query = $1`,
        [`LISTEN "${channel}"`],
      );
      expect(killed.rows).toEqual([{ ok: true }]);
      // notifications sent while it reconnects may be lost; keep sending until one arrives
      const deadline = Date.now() + WAIT_MS;
      while (seen.length === 0 && Date.now() < deadline) {
        await notify(owner, channel, "after-reconnect");
        await sleep(50);
      }
      expect(seen[0]).toBe("after-reconnect");
    } finally {
      await listener.close();
    }
    await expect(listener.listen(channelName(), () => undefined)).rejects.toThrow(/closed/);
  });
});
