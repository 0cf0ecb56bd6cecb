import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { BaseCheckpointSaver, TASKS, emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import type { Database, Statement } from "../../src/db/types.js";
import { DevmindError } from "../../src/errors.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

/** Wraps a Database so a test can count the statements the saver sends. */
function counting(db: Database): { db: Database; statements: () => number; reset: () => void } {
  let count = 0;
  const wrapped: Database = {
    ...db,
    kind: db.kind,
    schema: db.schema,
    location: db.location,
    query: (sql: string | Statement, values?: readonly unknown[]) => {
      count += 1;
      return db.query(sql, values);
    },
    execScript: (sql) => db.execScript(sql),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
  } as Database;
  return { db: wrapped, statements: () => count, reset: () => void (count = 0) };
}

function checkpointWith(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: versions };
}

describe.each(BACKENDS)("PostgresCheckpointSaver on %s", (backend) => {
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

  it("sends exactly one statement per put, putWrites, getTuple and getDeltaChannelHistory", async () => {
    const probe = counting(db);
    const saver = new PostgresCheckpointSaver(probe.db);
    const thread = { configurable: { thread_id: uuid6(-1), checkpoint_ns: "" } };
    const many = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`ch${i}`, `value ${i}`]));
    const versions = Object.fromEntries(Object.keys(many).map((k) => [k, 1]));
    probe.reset();
    const config = await saver.put(thread, checkpointWith(many, versions), { source: "loop", step: 0, parents: {} }, versions);
    expect(probe.statements()).toBe(1);
    probe.reset();
    await saver.putWrites(config, [["ch0", "a"], ["ch1", "b"], ["ch2", "c"]], "task-1", "~path");
    expect(probe.statements()).toBe(1);
    probe.reset();
    const tuple = await saver.getTuple(config);
    expect(probe.statements()).toBe(1);
    expect(tuple?.checkpoint.channel_values).toEqual(many);
    expect(tuple?.pendingWrites).toEqual([["task-1", "ch0", "a"], ["task-1", "ch1", "b"], ["task-1", "ch2", "c"]]);
    const child = await saver.put(config, checkpointWith({}, versions), { source: "loop", step: 1, parents: {} }, {});
    probe.reset();
    const history = await saver.getDeltaChannelHistory({ config: child, channels: ["ch0", "ch1"] });
    expect(probe.statements()).toBe(1);
    expect(history["ch0"]).toEqual({ seed: "value 0", writes: [["task-1", "ch0", "a"]] });
  });

  it("stores a channel value once per version: unchanged channels cost no row", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const threadId = uuid6(-1);
    let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
    const big = "x".repeat(5000);
    for (let step = 0; step < 5; step += 1) {
      const versions = { big: 1, counter: step + 1 };
      const newVersions = step === 0 ? versions : { counter: step + 1 };
      config = await saver.put(config, checkpointWith({ big, counter: step }, versions), { source: "loop", step, parents: {} }, newVersions);
    }
    const rows = await db.query<{ channel: string; n: number }>(
      `SELECT channel, count(*)::int AS n FROM "${db.schema}".checkpoint_blobs WHERE thread_id = $1 GROUP BY channel ORDER BY channel`,
      [threadId],
    );
    expect(rows.rows).toEqual([
      { channel: "big", n: 1 },
      { channel: "counter", n: 5 },
    ]);
    const latest = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(latest?.checkpoint.channel_values).toEqual({ big, counter: 4 });
  });

  it("pages list with a keyset, newest first, across more rows than one page", async () => {
    const probe = counting(db);
    const saver = new PostgresCheckpointSaver(probe.db);
    const threadId = uuid6(-1);
    let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
    const ids: string[] = [];
    for (let step = 0; step < 120; step += 1) {
      const checkpoint = checkpointWith({ n: step }, { n: step + 1 });
      ids.push(checkpoint.id);
      config = await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, { n: step + 1 });
    }
    probe.reset();
    const listed: string[] = [];
    const steps: number[] = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } })) {
      listed.push(tuple.checkpoint.id);
      steps.push(tuple.checkpoint.channel_values["n"] as number);
    }
    expect(listed).toEqual([...ids].reverse());
    expect(steps).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    expect(probe.statements()).toBe(3);
    probe.reset();
    const limited = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } }, { limit: 7, before: { configurable: { checkpoint_id: ids[100] } } })) limited.push(tuple.checkpoint.id);
    expect(limited).toEqual(ids.slice(93, 100).reverse());
    expect(probe.statements()).toBe(1);
    const filtered = [];
    for await (const tuple of saver.list({ configurable: { thread_id: threadId } }, { filter: { step: 42 } })) filtered.push(tuple.metadata?.step);
    expect(filtered).toEqual([42]);
  });

  it("replaces a re-put checkpoint and keeps first values, with scalar and array statement shapes", async () => {
    const saver = new PostgresCheckpointSaver(db);
    for (const width of [1, 4, 5, 9]) {
      const values = Object.fromEntries(Array.from({ length: width }, (_, i) => [`c${i}`, { i, width }]));
      const versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
      const checkpoint = checkpointWith(values, versions);
      const thread = { configurable: { thread_id: uuid6(-1), checkpoint_ns: "" } };
      const config = await saver.put(thread, checkpoint, { source: "loop", step: 1, parents: {} }, versions);
      const changed = { ...checkpoint, channel_values: Object.fromEntries(Object.keys(values).map((k) => [k, "changed"])) };
      await saver.put(thread, changed, { source: "update", step: 2, parents: {} }, versions);
      const writes = Array.from({ length: width }, (_, i): [string, unknown] => [`c${i}`, `w${i}`]);
      await saver.putWrites(config, writes, "task");
      await saver.putWrites(config, writes.map(([c]) => [c, "again"] as [string, unknown]), "task");
      const tuple = await saver.getTuple(config);
      expect(tuple?.metadata).toEqual({ source: "update", step: 2, parents: {} });
      expect(tuple?.checkpoint.channel_values).toEqual(values);
      expect(tuple?.pendingWrites).toEqual(writes.map(([c, v]) => ["task", c, v]));
      const rows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".checkpoints WHERE thread_id = $1`, [thread.configurable.thread_id]);
      expect(rows.rows[0]?.n).toBe(1);
    }
  });

  it("returns pending writes in writesSortKey order: task path first", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const config = await saver.put({ configurable: { thread_id: uuid6(-1) } }, checkpointWith({}, {}), { source: "loop", step: 0, parents: {} }, {});
    await saver.putWrites(config, [["out", "z-late"]], "task-a", "~__pregel_push, 2");
    await saver.putWrites(config, [["out", "first-input"]], "task-z", "");
    await saver.putWrites(config, [["out", "b0"], ["out", "b1"]], "task-b", "~__pregel_push, 1");
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites?.map((w) => w[2])).toEqual(["first-input", "b0", "b1", "z-late"]);
  });

  it("replaces special writes (errors, interrupts) but never overwrites regular ones", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const config = await saver.put({ configurable: { thread_id: uuid6(-1) } }, checkpointWith({}, {}), { source: "loop", step: 0, parents: {} }, {});
    await saver.putWrites(config, [["out", "v1"]], "t1");
    await saver.putWrites(config, [["out", "v2"]], "t1");
    await saver.putWrites(config, [["__error__", "first error"]], "t2");
    await saver.putWrites(config, [["__error__", "second error"]], "t2");
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([["t1", "out", "v1"], ["t2", "__error__", "second error"]]);
  });

  it("round-trips binary values, NUL characters and metadata filters", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const values = { bin: bytes, text: "nul\u0000inside" };
    const config = await saver.put(
      { configurable: { thread_id: uuid6(-1) } },
      checkpointWith(values, { bin: 1, text: 1 }),
      { source: "input", step: -1, parents: {}, note: "a\u0000b" } as never,
      { bin: 1, text: 1 },
    );
    await saver.putWrites(config, [["bin", bytes]], "t");
    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values).toEqual(values);
    expect(tuple?.pendingWrites).toEqual([["t", "bin", bytes]]);
    expect((tuple?.metadata as Record<string, unknown>)["note"]).toBe("ab");
  });

  it("gives clear errors for a config without thread_id or checkpoint_id", async () => {
    const saver = new PostgresCheckpointSaver(db);
    const put = saver.put({ configurable: {} }, checkpointWith({}, {}), { source: "loop", step: 0, parents: {} }, {});
    await expect(put).rejects.toMatchObject({ code: "CHECKPOINT_CONFIG_INVALID", message: expect.stringContaining("thread_id") });
    const writes = saver.putWrites({ configurable: { thread_id: "t" } }, [["a", 1]], "task");
    await expect(writes).rejects.toBeInstanceOf(DevmindError);
    await expect(writes).rejects.toMatchObject({ code: "CHECKPOINT_CONFIG_INVALID", message: expect.stringContaining("checkpoint_id") });
    expect(await saver.getTuple({ configurable: {} })).toBeUndefined();
  });

  it("matches the base class walk for delta-channel history on a long chain", async () => {
    const saver = new PostgresCheckpointSaver(db);
    let config: RunnableConfig = { configurable: { thread_id: uuid6(-1), checkpoint_ns: "" } };
    for (let step = 0; step < 12; step += 1) {
      // like a DeltaChannel: versions move every step, a value (snapshot) is stored only sometimes
      const values: Record<string, unknown> = {};
      if (step === 0 || step === 6) values["a"] = [`seed-a${step}`];
      if (step === 5) values["b"] = ["seed-b"];
      const versions = { a: step + 1, ...(step >= 5 ? { b: step + 1 } : {}) };
      config = await saver.put(config, checkpointWith(values, versions), { source: "loop", step, parents: {} }, versions);
      await saver.putWrites(config, [["a", `a${step}`], ["b", `b${step}`], ["c", `c${step}`]], `task-${step % 3}`, `~p${step % 2}`);
      await saver.putWrites(config, [["a", `a${step}-second`]], `task-x`, "");
    }
    const ours = await saver.getDeltaChannelHistory({ config, channels: ["a", "b", "c", "missing"] });
    const reference = await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, { config, channels: ["a", "b", "c", "missing"] });
    expect(ours).toEqual(reference);
    expect(ours["a"]?.seed).toEqual(["seed-a6"]);
    expect(ours["a"]?.writes.map((w) => w[2])).toEqual(["a6-second", "a6", "a7-second", "a7", "a8-second", "a8", "a9-second", "a9", "a10-second", "a10"]);
    expect(ours["b"]?.seed).toEqual(["seed-b"]);
    expect(ours["b"]?.writes.length).toBe(6);
    expect(ours["c"]?.seed).toBeUndefined();
    expect(ours["c"]?.writes.length).toBe(11);
    expect(ours["missing"]).toEqual({ writes: [] });
    const latest = await saver.getDeltaChannelHistory({ config: { configurable: { thread_id: config.configurable?.["thread_id"] } }, channels: ["a"] });
    expect(latest).toEqual(await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, { config, channels: ["a"] }));
  });

  it("keeps both branches intact after a fork (no version reuse)", async () => {
    const State = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode("one", () => ({ items: ["one"] }))
      .addNode("two", () => ({ items: ["two"] }))
      .addEdge(START, "one")
      .addEdge("one", "two")
      .addEdge("two", END)
      .compile({ checkpointer: new PostgresCheckpointSaver(db) });
    const thread = { configurable: { thread_id: uuid6(-1) } };
    await graph.invoke({ items: ["start"] }, thread);
    const history = [];
    for await (const state of graph.getStateHistory(thread)) history.push(state);
    const afterOne = history.find((state) => state.next.includes("two"));
    expect(afterOne?.values.items).toEqual(["start", "one"]);
    const forked = await graph.updateState(afterOne!.config, { items: ["fork"] });
    const forkState = await graph.getState(forked);
    expect(forkState.values.items).toEqual(["start", "one", "fork"]);
    const original = history[0];
    expect((await graph.getState(original!.config)).values.items).toEqual(["start", "one", "two"]);
    expect(TASKS).toBe("__pregel_tasks");
  });

  it("stores a step's task writes in the statement of the checkpoint that follows them (group commit)", async () => {
    const probe = counting(db);
    const saver = new PostgresCheckpointSaver(probe.db);
    const threadId = uuid6(-1);
    const first = checkpointWith({ n: 0 }, { n: 1 });
    const second = checkpointWith({ n: 1 }, { n: 2 });
    probe.reset();
    // as LangGraph's loop does: the writes of a step are not awaited before the next put, chained after the previous one
    const put0 = saver.put({ configurable: { thread_id: threadId, checkpoint_ns: "" } }, first, { source: "loop", step: 0, parents: {} }, { n: 1 });
    const at0 = { configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: first.id } };
    const writes = [saver.putWrites(at0, [["n", 1]], "task-a", "~a"), saver.putWrites(at0, [["x", "y"], ["n", 2]], "task-b", "~b")];
    const put1 = put0.then((config) => saver.put(config, second, { source: "loop", step: 1, parents: {} }, { n: 2 }));
    await Promise.all([...writes, put1]);
    // the first checkpoint, then both tasks' writes and the second checkpoint in one statement
    expect(probe.statements()).toBe(2);
    const tuple = await saver.getTuple(at0);
    expect(tuple?.pendingWrites).toEqual([["task-a", "n", 1], ["task-b", "x", "y"], ["task-b", "n", 2]]);
    expect((await saver.getTuple({ configurable: { thread_id: threadId } }))?.checkpoint.id).toBe(second.id);
  });

  it("stores writes no checkpoint follows on their own, at once, and a graph step in one statement", async () => {
    const probe = counting(db);
    const saver = new PostgresCheckpointSaver(probe.db);
    const threadId = uuid6(-1);
    const config = await saver.put({ configurable: { thread_id: threadId, checkpoint_ns: "" } }, checkpointWith({}, {}), { source: "loop", step: 0, parents: {} }, {});
    probe.reset();
    // resolves only once durable: a second saver (another process) reads them at once
    await saver.putWrites(config, [["__interrupt__", { value: 1 }]], "task-i", "");
    expect(probe.statements()).toBe(1);
    expect((await new PostgresCheckpointSaver(db).getTuple(config))?.pendingWrites).toEqual([["task-i", "__interrupt__", { value: 1 }]]);

    const State = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
    const nodes = ["a", "b", "c", "d", "e"];
    let builder = new StateGraph(State) as unknown as StateGraph<typeof State.spec, unknown, unknown, string>;
    for (const name of nodes) builder = builder.addNode(name, () => ({ items: [name] })) as typeof builder;
    builder = builder.addEdge(START, "a") as typeof builder;
    for (let i = 1; i < nodes.length; i += 1) builder = builder.addEdge(nodes[i - 1] as string, nodes[i] as string) as typeof builder;
    const graph = builder.addEdge("e", END).compile({ checkpointer: saver });
    probe.reset();
    const result = await graph.invoke({ items: ["start"] }, { configurable: { thread_id: uuid6(-1) } });
    expect(result.items).toEqual(["start", ...nodes]);
    // one read of the thread, then the input checkpoint and one statement per step (its task's
    // writes with the checkpoint after it): 7 checkpoints and 6 tasks' writes in 7 statements (13 apart)
    expect(probe.statements()).toBe(1 + nodes.length + 2);
  });
});
