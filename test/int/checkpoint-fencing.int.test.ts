import { randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fenceConfigurable } from "../../src/checkpoint/fence-config.js";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, TEST_DATABASE_URL, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitForBlockedStatement } from "../helpers/waits.js";

async function runningRun(db: Database, epoch: number): Promise<string> {
  const runId = randomUUID();
  await db.query(
    `INSERT INTO "${db.schema}".runs (run_id, thread_id, status, input, lease_owner, lease_epoch, lease_expires_at)
     VALUES ($1, $2, 'running', '{"messages": []}', 'worker-a', $3, now() + interval '1 minute')`,
    [runId, `thread-${runId}`, epoch],
  );
  return runId;
}

async function count(db: Database, table: string, threadId: string): Promise<number> {
  const result = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".${table} WHERE thread_id = $1`, [threadId]);
  return result.rows[0]?.n ?? -1;
}

describe.each(BACKENDS)("fenced checkpoint writes on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  it("write while the lease is held, and write nothing once it moved", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const runId = await runningRun(db, 1);
    const threadId = `fenced-${runId}`;
    const base = { configurable: { thread_id: threadId, checkpoint_ns: "", ...fenceConfigurable({ runId, epoch: 1 }) } };
    const first = await saver.put(base, { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { a: 1, b: 2 }, channel_versions: { a: 1, b: 1 } }, { source: "loop", step: 0, parents: {} }, { a: 1, b: 1 });
    await saver.putWrites({ ...first, configurable: { ...first.configurable, ...fenceConfigurable({ runId, epoch: 1 }) } }, [["a", 5]], "task");
    expect(await count(db, "checkpoints", threadId)).toBe(1);
    expect(await count(db, "checkpoint_writes", threadId)).toBe(1);

    await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = 2, lease_owner = 'worker-b' WHERE run_id = $1`, [runId]);
    const stale = { configurable: { ...first.configurable, ...fenceConfigurable({ runId, epoch: 1 }) } };
    await expect(
      saver.put(stale, { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { a: 9 }, channel_versions: { a: 2 } }, { source: "loop", step: 1, parents: {} }, { a: 2 }),
    ).rejects.toMatchObject({ code: "LEASE_LOST" });
    await expect(saver.putWrites(stale, [["a", 6]], "task-2")).rejects.toMatchObject({ code: "LEASE_LOST" });
    await expect(saver.putWrites(stale, [["__error__", "x"]], "task-3")).rejects.toMatchObject({ code: "LEASE_LOST" });
    await expect(saver.putWrites(stale, Array.from({ length: 6 }, (_, i): [string, unknown] => [`c${i}`, i]), "task-4")).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await count(db, "checkpoints", threadId)).toBe(1);
    expect(await count(db, "checkpoint_blobs", threadId)).toBe(2);
    expect(await count(db, "checkpoint_writes", threadId)).toBe(1);

    const current = { configurable: { ...first.configurable, ...fenceConfigurable({ runId, epoch: 2 }) } };
    await saver.putWrites(current, [["a", 7]], "task-5");
    expect(await count(db, "checkpoint_writes", threadId)).toBe(2);
  });

  it("stops a graph whose lease is taken over mid-run, keeping what was written before", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const runId = await runningRun(db, 7);
    const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode("one", () => ({ log: ["one"] }))
      .addNode("takeover", async () => {
        await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = lease_epoch + 1 WHERE run_id = $1`, [runId]);
        return { log: ["after takeover"] };
      })
      .addNode("three", () => ({ log: ["three"] }))
      .addEdge(START, "one")
      .addEdge("one", "takeover")
      .addEdge("takeover", "three")
      .addEdge("three", END)
      .compile({ checkpointer: saver });
    const threadId = `graph-${runId}`;
    await expect(
      graph.invoke({ log: [] }, { configurable: { thread_id: threadId, ...fenceConfigurable({ runId, epoch: 7 }) }, durability: "sync" } as never),
    ).rejects.toMatchObject({ code: "LEASE_LOST" });
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    expect(state.values.log).toEqual(["one"]);
  });

  it("answers a delta write under a lease at once and commits it with the next checkpoint; a failed store fails that checkpoint", async () => {
    let statements = 0;
    let failNextWrite: Error | null = null;
    const probe = new Proxy(db, {
      get(target, key, receiver) {
        if (key === "query")
          return (sql: Parameters<Database["query"]>[0], values?: readonly unknown[]) => {
            statements += 1;
            const name = typeof sql === "string" ? sql : sql.name;
            if (failNextWrite !== null && /writes/.test(name)) {
              const error = failNextWrite;
              failNextWrite = null;
              return Promise.reject(error);
            }
            return target.query(sql, values);
          };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const saver = new PostgresCheckpointSaver(probe);
    // LangGraph names its delta channels in each checkpoint's metadata
    const metadata = (step: number) => ({ source: "loop" as const, step, parents: {}, counters_since_delta_snapshot: { messages: [step, 0] as [number, number] } });
    for (const outcome of ["stored", "refused"] as const) {
      const runId = await runningRun(db, 1);
      const threadId = `delta-${runId}`;
      const fence = fenceConfigurable({ runId, epoch: 1 });
      const first = await saver.put({ configurable: { thread_id: threadId, checkpoint_ns: "", ...fence } }, { ...emptyCheckpoint(), id: uuid6(-1) }, metadata(0), {});
      const at0 = { configurable: { ...first.configurable, ...fence } };
      statements = 0;
      if (outcome === "refused") failNextWrite = Object.assign(new Error("could not extend file: No space left on device"), { code: "53100" });
      // answered before it is stored (LangGraph waits for it before its next put)
      await saver.putWrites(at0, [["messages", [{ role: "ai", content: "hi" }]]], "task-model", "~model");
      expect(statements).toBe(0);
      if (outcome === "stored") {
        // the chain's next put, at once: the write and the checkpoint in one statement
        await saver.put(at0, { ...emptyCheckpoint(), id: uuid6(-1) }, metadata(1), {});
        expect(statements).toBe(1);
        expect(await count(db, "checkpoints", threadId)).toBe(2);
        expect(await count(db, "checkpoint_writes", threadId)).toBe(1);
      } else {
        // no put on this turn: stored alone, refused; the put that follows is refused with the same error
        await new Promise((resolve) => setTimeout(resolve, 50));
        await expect(saver.put(at0, { ...emptyCheckpoint(), id: uuid6(-1) }, metadata(1), {})).rejects.toMatchObject({ code: "53100" });
        expect(await count(db, "checkpoints", threadId)).toBe(1);
        expect(await count(db, "checkpoint_writes", threadId)).toBe(0);
        // a later attempt (another lease) re-runs the task and goes on from the same checkpoint
        await db.query(`UPDATE "${db.schema}".runs SET lease_epoch = 2 WHERE run_id = $1`, [runId]);
        const later = { configurable: { ...first.configurable, ...fenceConfigurable({ runId, epoch: 2 }) } };
        await saver.putWrites(later, [["messages", [{ role: "ai", content: "hi" }]]], "task-model", "~model");
        await saver.put(later, { ...emptyCheckpoint(), id: uuid6(-1) }, metadata(1), {});
        expect(await count(db, "checkpoints", threadId)).toBe(2);
        expect(await count(db, "checkpoint_writes", threadId)).toBe(1);
      }
    }
  });
});

describe.runIf(TEST_DATABASE_URL !== undefined)("fencing against a concurrent takeover on PostgreSQL", () => {
  it("makes a fenced write wait for an uncommitted takeover and then refuse", async () => {
    const owner = await openBackend("postgres");
    const { db, drop } = await freshMigratedSchema(owner);
    const other = await openDatabase({ url: TEST_DATABASE_URL, schema: db.schema, maxConnections: 2 });
    try {
      const runId = await runningRun(db, 1);
      const saver = new PostgresCheckpointSaver(db);
      let settled = false;
      let write: Promise<unknown> = Promise.resolve();
      await other.transaction(async (tx) => {
        await tx.query(`UPDATE "${db.schema}".runs SET lease_epoch = 2 WHERE run_id = $1`, [runId]);
        write = saver
          .put({ configurable: { thread_id: `race-${runId}`, ...fenceConfigurable({ runId, epoch: 1 }) } }, { ...emptyCheckpoint(), id: uuid6(-1) }, { source: "loop", step: 0, parents: {} }, {})
          .finally(() => (settled = true));
        write.catch(() => undefined);
        // the race happened: the fenced write is in flight, waiting on the run row the takeover holds
        expect(await waitForBlockedStatement(owner, db.schema, 20_000)).toBeGreaterThan(0);
        expect(settled).toBe(false);
      });
      await expect(write).rejects.toMatchObject({ code: "LEASE_LOST" });
      expect(await count(db, "checkpoints", `race-${runId}`)).toBe(0);
    } finally {
      await other.close();
      await drop();
      await owner.close();
    }
  });
});
