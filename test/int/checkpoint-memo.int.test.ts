import { Annotation, Command, END, INTERRUPT, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { uuid6, type BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKPOINT_MEMO_KEY, CheckpointMemo } from "../../src/checkpoint/checkpoint-memo.js";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { checkpointSql } from "../../src/checkpoint/sql.js";
import type { TupleRow } from "../../src/checkpoint/tuple-rows.js";
import type { Database, Statement } from "../../src/db/types.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const State = Annotation.Root({
  path: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  note: Annotation<string>,
});

/** a -> b (asks for approval: an interrupt) -> c */
function graphOn(saver: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode("a", () => ({ path: ["a"], note: "from a" }))
    .addNode("b", () => ({ path: [`b:${String(interrupt("ok?"))}`] }))
    .addNode("c", () => ({ path: ["c"] }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile({ checkpointer: saver });
}

/** The tuple queries a database answered. */
function countingReads(db: Database): { db: Database; reads: () => number } {
  let reads = 0;
  const wrapped = Object.create(db) as Database;
  wrapped.query = (sql: string | Statement, values?: readonly unknown[]) => {
    if (typeof sql !== "string" && sql.name.startsWith("dm_get_tuple")) reads += 1;
    return db.query(sql, values);
  };
  return { db: wrapped, reads: () => reads };
}

describe.each(BACKENDS)("CheckpointMemo with the saver on %s", (backend) => {
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

  const latestRows = async (threadId: string): Promise<TupleRow[]> => (await db.query<TupleRow>(checkpointSql(db.schema).getTupleLatest, [threadId, ""])).rows;

  it("answers getState as the database does, without a read: a fresh thread, an interrupt, a resume", async () => {
    const counted = countingReads(db);
    const saver = new PostgresCheckpointSaver(counted.db);
    const plain = new PostgresCheckpointSaver(db);
    const threadId = uuid6(-1);
    const memo = new CheckpointMemo(threadId);
    memo.seed(await latestRows(threadId));
    const withMemo = { configurable: { thread_id: threadId, [CHECKPOINT_MEMO_KEY]: memo } };
    const graph = graphOn(saver);

    const before = counted.reads();
    await graph.invoke({ path: [] }, withMemo);
    const paused = await graph.getState(withMemo);
    // no read: the graph's start knew the thread empty, its state at the interrupt is the memo's
    expect(counted.reads() - before).toBe(0);
    const fromDb = await graphOn(plain).getState({ configurable: { thread_id: threadId } });
    expect(paused.values).toEqual(fromDb.values);
    expect(paused.next).toEqual(fromDb.next);
    expect(paused.config).toEqual(fromDb.config);
    expect(paused.metadata).toEqual(fromDb.metadata);
    expect(paused.tasks.map((task) => task.interrupts)).toEqual(fromDb.tasks.map((task) => task.interrupts));
    expect(paused.tasks[0]?.interrupts[0]?.value).toBe("ok?");
    const tupleFromMemo = await saver.getTuple(withMemo);
    const tupleFromDb = await plain.getTuple({ configurable: { thread_id: threadId } });
    expect(tupleFromMemo?.pendingWrites).toEqual(tupleFromDb?.pendingWrites);
    expect(tupleFromMemo?.pendingWrites?.some(([, channel]) => channel === INTERRUPT)).toBe(true);
    expect(tupleFromMemo?.checkpoint).toEqual(tupleFromDb?.checkpoint);

    // a later attempt seeded by its claim's read resumes without a read either
    const next = new CheckpointMemo(threadId);
    next.seed(await latestRows(threadId));
    const resumed = { configurable: { thread_id: threadId, [CHECKPOINT_MEMO_KEY]: next } };
    const again = counted.reads();
    await graph.invoke(new Command({ resume: "yes" }), resumed);
    const done = await graph.getState(resumed);
    expect(counted.reads() - again).toBe(0);
    expect(done.values).toEqual({ path: ["a", "b:yes", "c"], note: "from a" });
    const doneFromDb = await graphOn(plain).getState({ configurable: { thread_id: threadId } });
    expect(done.values).toEqual(doneFromDb.values);
    expect(done.config).toEqual(doneFromDb.config);
    expect(done.next).toEqual([]);
  });

  it("reads the database for what it does not know: another thread, a checkpoint id, a subgraph namespace, after forget()", async () => {
    const counted = countingReads(db);
    const saver = new PostgresCheckpointSaver(counted.db);
    const threadId = uuid6(-1);
    const memo = new CheckpointMemo(threadId);
    memo.seed([]);
    const other = uuid6(-1);
    const reads = counted.reads();
    await saver.getTuple({ configurable: { thread_id: other, [CHECKPOINT_MEMO_KEY]: memo } });
    await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "child:1", [CHECKPOINT_MEMO_KEY]: memo } });
    await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_id: uuid6(-1), [CHECKPOINT_MEMO_KEY]: memo } });
    expect(counted.reads() - reads).toBe(3);
    expect(await saver.getTuple({ configurable: { thread_id: threadId, [CHECKPOINT_MEMO_KEY]: memo } })).toBeUndefined();
    expect(counted.reads() - reads).toBe(3);
    memo.forget();
    await saver.getTuple({ configurable: { thread_id: threadId, [CHECKPOINT_MEMO_KEY]: memo } });
    expect(counted.reads() - reads).toBe(4);
  });

  it("forgets when a checkpoint is stored over one stored before (a replay)", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const threadId = uuid6(-1);
    const graph = graphOn(saver);
    await graph.invoke({ path: [] }, { configurable: { thread_id: threadId } });
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
    const memo = new CheckpointMemo(threadId);
    memo.seed(await latestRows(threadId));
    expect(memo.answers({ threadId, namespace: "" })).toBe(true);
    if (tuple === undefined) throw new Error("no checkpoint");
    // the same checkpoint again (its parent's config): stored in conflict mode
    await saver.put({ configurable: { ...tuple.parentConfig?.configurable, [CHECKPOINT_MEMO_KEY]: memo } }, tuple.checkpoint, tuple.metadata ?? { source: "loop", step: 0, parents: {} }, {});
    expect(memo.answers({ threadId, namespace: "" })).toBe(false);
  });

  it("matches an in-memory saver's state for the same graph", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const threadId = uuid6(-1);
    const memo = new CheckpointMemo(threadId);
    memo.seed([]);
    const config = { configurable: { thread_id: threadId, [CHECKPOINT_MEMO_KEY]: memo } };
    await graphOn(saver).invoke({ path: [] }, config);
    await graphOn(saver).invoke(new Command({ resume: "fine" }), config);
    const memory = new MemorySaver();
    const reference = graphOn(memory);
    const ref = { configurable: { thread_id: "ref" } };
    await reference.invoke({ path: [] }, ref);
    await reference.invoke(new Command({ resume: "fine" }), ref);
    expect((await graphOn(saver).getState(config)).values).toEqual((await reference.getState(ref)).values);
  });
});
