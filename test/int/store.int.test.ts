import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotation, END, getStore, START, StateGraph } from "@langchain/langgraph";
import { InvalidNamespaceError } from "@langchain/langgraph-checkpoint";
import { migrate } from "../../src/db/migrate.js";
import { openTemplateCopy } from "../helpers/pglite-template.js";
import type { Database } from "../../src/db/types.js";
import { createLogger } from "../../src/logger.js";
import { PostgresStore, type StorePutOperation } from "../../src/store/postgres-store.js";
import { CharacterEmbeddings } from "../helpers/char-embeddings.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

/** Moves an item's expiry into the past, as if its TTL had run out. */
async function expire(db: Database, namespace: string[], key: string): Promise<void> {
  await db.query(`UPDATE "${db.schema}".store_items SET expires_at = now() - interval '1 second' WHERE ns_path = $1 AND key = $2`, [namespace.join("."), key]);
}

/** Minutes from now until the item expires (null: never). */
async function minutesLeft(db: Database, namespace: string[], key: string): Promise<number | null> {
  const { rows } = await db.query<{ left: number | null }>(
    `SELECT (extract(epoch FROM expires_at - now()) / 60)::float8 AS left FROM "${db.schema}".store_items WHERE ns_path = $1 AND key = $2`,
    [namespace.join("."), key],
  );
  return rows[0]?.left ?? null;
}

/** A logger whose lines land in `lines`. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: "debug", destination }), lines };
}

describe.each(BACKENDS)("PostgresStore on %s", (backend) => {
  let owner: Database;
  const drops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    owner = await openBackend(backend);
  }, 60_000);
  afterAll(async () => {
    for (const drop of drops) await drop();
    await owner?.close();
  });

  async function freshStore(options: ConstructorParameters<typeof PostgresStore>[1] = {}): Promise<{ store: PostgresStore; db: Database }> {
    const { db, drop } = await freshMigratedSchema(owner);
    drops.push(drop);
    return { store: new PostgresStore(db, options), db };
  }

  it("puts, gets, updates and deletes items with their times", async () => {
    const { store } = await freshStore();
    expect(await store.get(["users", "u1"], "missing")).toBeNull();
    await store.put(["users", "u1"], "profile", { name: "Ada", langs: ["ts", "sql"] });
    const first = await store.get(["users", "u1"], "profile");
    expect(first).toMatchObject({ namespace: ["users", "u1"], key: "profile", value: { name: "Ada", langs: ["ts", "sql"] } });
    expect(first!.createdAt).toBeInstanceOf(Date);
    expect(first!.updatedAt.getTime()).toBe(first!.createdAt.getTime());

    await store.put(["users", "u1"], "profile", { name: "Ada L." });
    const second = await store.get(["users", "u1"], "profile");
    expect(second!.value).toEqual({ name: "Ada L." });
    expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
    expect(second!.updatedAt.getTime()).toBeGreaterThanOrEqual(first!.updatedAt.getTime());

    await store.delete(["users", "u1"], "profile");
    expect(await store.get(["users", "u1"], "profile")).toBeNull();
    await store.delete(["users", "u1"], "profile"); // deleting nothing is fine
  });

  it("runs a batch: reads see the store before the batch, the last put of an item wins, results keep their order", async () => {
    const { store } = await freshStore();
    await store.put(["a"], "x", { v: 1 });
    const results = await store.batch([
      { namespace: ["a"], key: "x", value: { v: 2 } },
      { namespace: ["a"], key: "x" },
      { namespace: ["a"], key: "y", value: { v: 3 } },
      { namespacePrefix: ["a"], limit: 10, offset: 0 },
      { namespace: ["a"], key: "x", value: { v: 4 } },
      { matchConditions: [], limit: 10, offset: 0 },
      { namespace: ["a"], key: "nope" },
    ]);
    expect(results[0]).toBeUndefined();
    expect((results[1] as unknown as { value: unknown }).value).toEqual({ v: 1 });
    expect((results[3] as unknown as { key: string }[]).map((item) => item.key)).toEqual(["x"]);
    expect(results[5]).toEqual([["a"]]);
    expect(results[6]).toBeNull();
    expect((await store.get(["a"], "x"))!.value).toEqual({ v: 4 });
    expect((await store.get(["a"], "y"))!.value).toEqual({ v: 3 });

    const gets = await store.batch(Array.from({ length: 50 }, (_, i) => ({ namespace: ["a"], key: i % 2 === 0 ? "x" : "y" })));
    expect(gets.map((item) => (item as { key: string }).key)).toEqual(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? "x" : "y")));
    await store.batch([
      { namespace: ["a"], key: "x", value: null },
      { namespace: ["a"], key: "y", value: null },
    ]);
    expect(await store.search(["a"])).toEqual([]);
  });

  it("concurrent batches writing the same items in different orders all succeed, the store ends with one of them", async () => {
    const { store } = await freshStore();
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    const writers = Array.from({ length: 6 }, (_, w) => {
      const order = w % 2 === 0 ? keys : [...keys].reverse();
      return store.batch(order.map((key) => ({ namespace: ["race"], key, value: { writer: w } })));
    });
    await Promise.all(writers);
    const items = await store.search(["race"], { limit: 100 });
    expect(items).toHaveLength(40);
    // each batch is one statement taking the rows in one order, so the last to commit wrote all 40
    expect(new Set(items.map((item) => item.value["writer"])).size).toBe(1);
  });

  it("searches under a namespace prefix label by label, newest update first, with limit and offset", async () => {
    const { store } = await freshStore();
    await store.put(["docs"], "root", { n: 0 });
    await store.put(["docs", "a"], "one", { n: 1 });
    await store.put(["docs", "a", "deep"], "two", { n: 2 });
    await store.put(["docsx"], "other", { n: 3 }); // shares the text prefix, not the label
    await store.put(["d%cs", "_"], "like", { n: 4 }); // LIKE wildcards are plain characters
    await store.put(["docs", "a"], "one", { n: 1.5 }); // updated last: first in the results

    expect((await store.search(["docs"])).map((item) => item.key)).toEqual(["one", "two", "root"]);
    expect((await store.search(["docs", "a"])).map((item) => item.key)).toEqual(["one", "two"]);
    expect((await store.search(["d%cs"])).map((item) => item.key)).toEqual(["like"]);
    expect((await store.search(["d_cs"])).map((item) => item.key)).toEqual([]);
    expect((await store.search([])).length).toBe(5);
    expect((await store.search(["docs"], { limit: 1, offset: 1 })).map((item) => item.key)).toEqual(["two"]);
    expect(await store.search(["docs"], { offset: 10 })).toEqual([]);
    const [item] = await store.search(["docs", "a", "deep"]);
    expect(item).toMatchObject({ namespace: ["docs", "a", "deep"], key: "two", value: { n: 2 } });
    expect(item!.score).toBeUndefined();
  });

  it("filters on values with equality and $eq $ne $gt $gte $lt $lte $in $nin, as LangGraph's in-memory store", async () => {
    const { store } = await freshStore();
    const docs: [string, Record<string, unknown>][] = [
      ["a", { color: "red", score: 4.5, tags: { x: 1 } }],
      ["b", { color: "red", score: 3 }],
      ["c", { color: "green", score: 4 }],
      ["d", { color: "blue", score: "5" }],
      ["e", { score: null }],
    ];
    for (const [key, value] of docs) await store.put(["f"], key, value);
    const keys = async (filter: Record<string, unknown>): Promise<string[]> => (await store.search(["f"], { filter })).map((item) => item.key).sort();

    expect(await keys({ color: "red" })).toEqual(["a", "b"]);
    expect(await keys({ color: "red", score: { $gt: 4 } })).toEqual(["a"]);
    expect(await keys({ score: { $gte: 4 } })).toEqual(["a", "c"]); // "5" is text: no number comparison
    expect(await keys({ score: { $lt: 4 } })).toEqual(["b"]);
    expect(await keys({ score: { $lte: 4, $gt: 3 } })).toEqual(["c"]);
    expect(await keys({ color: { $ne: "red" } })).toEqual(["c", "d", "e"]);
    expect(await keys({ color: { $eq: "green" } })).toEqual(["c"]);
    expect(await keys({ color: { $in: ["green", "blue"] } })).toEqual(["c", "d"]);
    expect(await keys({ color: { $nin: ["green", "blue"] } })).toEqual(["a", "b", "e"]);
    expect(await keys({ score: null })).toEqual(["e"]);
    expect(await keys({ tags: { x: 1 } })).toEqual(["a"]);
    expect(await keys({ score: { $gt: "not a number" } })).toEqual([]);
    expect(await keys({ "color'; DROP TABLE store_items; --": "red" })).toEqual([]);
    expect(await keys({})).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("lists namespaces with prefix and suffix conditions, * wildcards, maxDepth, limit and offset", async () => {
    const { store } = await freshStore();
    const namespaces = [
      ["a", "b", "c"],
      ["a", "b", "d", "e"],
      ["a", "b", "d", "i"],
      ["a", "b", "f"],
      ["a", "c", "f"],
      ["b", "a", "f"],
      ["users", "123"],
      ["users", "456", "settings"],
      ["admin", "users", "789"],
    ];
    for (const [i, namespace] of namespaces.entries()) await store.put(namespace, `k${i}`, { i });
    await store.put(["a", "b", "c"], "second", { i: 99 }); // one namespace, two items

    expect(await store.listNamespaces()).toEqual([...namespaces].sort((x, y) => (x.join("\u0001") < y.join("\u0001") ? -1 : 1)));
    expect(await store.listNamespaces({ prefix: ["a", "b"] })).toEqual([
      ["a", "b", "c"],
      ["a", "b", "d", "e"],
      ["a", "b", "d", "i"],
      ["a", "b", "f"],
    ]);
    expect(await store.listNamespaces({ suffix: ["f"] })).toEqual([
      ["a", "b", "f"],
      ["a", "c", "f"],
      ["b", "a", "f"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a", "*", "f"] })).toEqual([
      ["a", "b", "f"],
      ["a", "c", "f"],
    ]);
    expect(await store.listNamespaces({ suffix: ["*", "f"] })).toEqual([
      ["a", "b", "f"],
      ["a", "c", "f"],
      ["b", "a", "f"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a"], suffix: ["f"] })).toEqual([
      ["a", "b", "f"],
      ["a", "c", "f"],
    ]);
    expect(await store.listNamespaces({ prefix: ["a", "b"], maxDepth: 3 })).toEqual([
      ["a", "b", "c"],
      ["a", "b", "d"],
      ["a", "b", "f"],
    ]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["a"], ["admin"], ["b"], ["users"]]);
    expect(await store.listNamespaces({ prefix: ["users"], limit: 1, offset: 1 })).toEqual([["users", "456", "settings"]]);
    expect(await store.listNamespaces({ prefix: ["nope"] })).toEqual([]);
    expect(await store.listNamespaces({ prefix: ["a", "b", "c", "d", "e"] })).toEqual([]);
  });

  it("expires items after their TTL, refreshes the expiry on read unless told not to, and sweeps", async () => {
    const { store, db } = await freshStore({ ttl: { defaultTtl: 30 } });
    await store.put(["t"], "default", { v: 1 });
    await store.put(["t"], "own", { v: 2 }, undefined, { ttl: 120 });
    await store.put(["t"], "forever", { v: 3 }, undefined, { ttl: null });
    expect(await minutesLeft(db, ["t"], "default")).toBeGreaterThan(29);
    expect(await minutesLeft(db, ["t"], "default")).toBeLessThanOrEqual(30);
    expect(await minutesLeft(db, ["t"], "own")).toBeGreaterThan(119);
    expect(await minutesLeft(db, ["t"], "forever")).toBeNull();

    // refresh on read: an item about to expire gets its full TTL back from a get and a search
    await db.query(`UPDATE "${db.schema}".store_items SET expires_at = now() + interval '1 minute' WHERE key IN ('default', 'own')`);
    await store.get(["t"], "default");
    expect(await minutesLeft(db, ["t"], "default")).toBeGreaterThan(29);
    await store.get(["t"], "own", { refreshTtl: false });
    expect(await minutesLeft(db, ["t"], "own")).toBeLessThan(2);
    await store.search(["t"], { filter: { v: 2 } });
    expect(await minutesLeft(db, ["t"], "own")).toBeGreaterThan(119);
    await db.query(`UPDATE "${db.schema}".store_items SET expires_at = now() + interval '1 minute' WHERE key = 'own'`);
    await store.search(["t"], { refreshTtl: false });
    expect(await minutesLeft(db, ["t"], "own")).toBeLessThan(2);

    // expired: invisible at once to get, search and listNamespaces, then swept
    await expire(db, ["t"], "default");
    await store.put(["gone"], "only", { v: 4 }, undefined, { ttl: 5 });
    await expire(db, ["gone"], "only");
    expect(await store.get(["t"], "default")).toBeNull();
    expect((await store.search(["t"])).map((item) => item.key).sort()).toEqual(["forever", "own"]);
    expect(await store.listNamespaces()).toEqual([["t"]]);
    expect(await store.sweepExpired()).toBe(2);
    expect(await store.sweepExpired()).toBe(0);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${db.schema}".store_items`);
    expect(rows[0]!.n).toBe(2);

    // writing over an expired item that was not swept yet starts a new item
    await expire(db, ["t"], "own");
    const before = Date.now();
    await store.put(["t"], "own", { v: 5 });
    const reborn = await store.get(["t"], "own");
    expect(reborn!.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
  });

  it("a refresh-on-read default of false leaves expiries alone", async () => {
    const { store, db } = await freshStore({ ttl: { refreshOnRead: false } });
    await store.put(["t"], "k", { v: 1 }, undefined, { ttl: 10 });
    await db.query(`UPDATE "${db.schema}".store_items SET expires_at = now() + interval '1 minute'`);
    await store.get(["t"], "k");
    await store.search(["t"]);
    expect(await minutesLeft(db, ["t"], "k")).toBeLessThan(2);
    await store.get(["t"], "k", { refreshTtl: true });
    expect(await minutesLeft(db, ["t"], "k")).toBeGreaterThan(9);
  });

  it("start() runs the periodic sweep until stop()", async () => {
    const { logger, lines } = capturingLogger();
    const { store, db } = await freshStore({ ttl: { sweepIntervalMinutes: 0.001 }, logger });
    await store.put(["s"], "k", { v: 1 }, undefined, { ttl: 1 });
    await expire(db, ["s"], "k");
    store.start();
    try {
      await waitUntil("the sweeper deletes the expired item", async () => lines.some((line) => line["event"] === "store.swept" && line["deleted"] === 1), 10_000);
    } finally {
      await store.stop();
    }
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${db.schema}".store_items`);
    expect(rows[0]!.n).toBe(0);
    await store.stop(); // twice is fine
  });

  it("refuses hostile input with clear errors and stores awkward but valid text exactly", async () => {
    const { store } = await freshStore();
    await expect(store.put([], "k", { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(["a", ""], "k", { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(["a.b"], "k", { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(["a:b"], "k", { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.batch([{ namespace: ["a.b"], key: "k", value: { v: 1 } }])).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.batch([{ namespace: [1 as unknown as string], key: "k" }])).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(["a"], "k\u0000", { v: 1 })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.put(["a"], "k", [1, 2] as unknown as Record<string, unknown>)).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.put(["a"], "k", { text: "nul \u0000 inside" })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.put(["a"], "k", { huge: "x".repeat(17 * 1024 * 1024) })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.put(["a"], "k", { v: 1 }, undefined, { ttl: -5 })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.search(["a"], { limit: -1 })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    await expect(store.listNamespaces({ maxDepth: 1.5 })).rejects.toMatchObject({ code: "STORE_INPUT_INVALID" });
    expect(await store.search([])).toEqual([]); // nothing half-written
    // callers choose filter shapes: past the prepared ones, new shapes still run (unprepared)
    for (let keys = 1; keys <= 70; keys += 1) {
      const filter = Object.fromEntries(Array.from({ length: keys }, (_, i) => [`f${i}`, i % 2 === 0 ? i : { $gt: i }]));
      expect(await store.search(["a"], { filter })).toEqual([]);
    }

    const awkward = { quote: "it's \"quoted\"", backslash: "a\\u0000b", emoji: "🧠", nested: { deep: [1, { two: [3] }] }, text: "\\" };
    await store.put(["ü", "%", "*", "'; --"], "key with spaces/and\\slashes 'n quotes", awkward);
    const item = await store.get(["ü", "%", "*", "'; --"], "key with spaces/and\\slashes 'n quotes");
    expect(item!.value).toEqual(awkward);
    expect(await store.listNamespaces({ prefix: ["ü"] })).toEqual([["ü", "%", "*", "'; --"]]);

    const big = { blob: "y".repeat(2 * 1024 * 1024) };
    await store.put(["big"], "two-megabytes", big);
    expect((await store.get(["big"], "two-megabytes"))!.value).toEqual(big);
  });

  it("without pgvector, a configured index falls back to namespace and filter search and says so", async () => {
    const { logger, lines } = capturingLogger();
    const embeddings = new CharacterEmbeddings({ dims: 16 });
    const { store } = await freshStore({ index: { dims: 16, embeddings }, logger });
    const status = await store.setup();
    // the template PGlite and this test server have no pgvector; a server with it takes the other branch
    if (status.status === "pgvector") return;
    expect(status).toMatchObject({ status: "unavailable", reason: expect.stringContaining("vector") });
    expect(store.semanticSearch.status).toBe("unavailable");
    expect(lines.filter((line) => line["event"] === "store.semantic_search_unavailable")).toHaveLength(1);

    await store.put(["docs"], "apple", { text: "red apple", color: "red" });
    await store.put(["docs"], "car", { text: "blue car", color: "blue" });
    const results = await store.search(["docs"], { query: "apple", filter: { color: "blue" } });
    expect(results.map((item) => [item.key, item.score])).toEqual([["car", undefined]]);
    await store.search(["docs"], { query: "car" });
    expect(lines.filter((line) => line["event"] === "store.search_unranked")).toHaveLength(1);
    expect(embeddings.documents).toEqual([]); // nothing embedded for vectors that cannot be stored
  });

  it("serves a real StateGraph compiled with the checkpointer and the store (config.store and getStore())", async () => {
    // through the library's entry point, as a user would
    const lib = await import("../../src/index.js");
    const { db } = await freshMigratedSchema(owner).then((fresh) => (drops.push(fresh.drop), fresh));
    const store = new lib.PostgresStore(db);
    const State = Annotation.Root({ user: Annotation<string>, seen: Annotation<number[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }) });
    const graph = new StateGraph(State)
      .addNode("remember", async (state, config) => {
        const memories = config.store!;
        const count = ((await memories.get(["users", state.user], "visits"))?.value["count"] as number | undefined) ?? 0;
        await memories.put(["users", state.user], "visits", { count: count + 1 });
        return { seen: [count + 1] };
      })
      .addNode("recall", async () => {
        const found = await getStore()!.search(["users"], { filter: { count: { $gte: 1 } } });
        return { seen: [found.length] };
      })
      .addEdge(START, "remember")
      .addEdge("remember", "recall")
      .addEdge("recall", END)
      .compile({ checkpointer: new lib.PostgresCheckpointSaver(db), store });

    const one = await graph.invoke({ user: "ada" }, { configurable: { thread_id: "t1" } });
    const two = await graph.invoke({ user: "ada" }, { configurable: { thread_id: "t2" } });
    await graph.invoke({ user: "bob" }, { configurable: { thread_id: "t3" } });
    expect(one.seen).toEqual([1, 1]);
    expect(two.seen).toEqual([2, 1]); // another thread, the same memory
    expect((await store.get(["users", "ada"], "visits"))!.value).toEqual({ count: 2 });
    expect(await store.listNamespaces({ prefix: ["users"] })).toEqual([["users", "ada"], ["users", "bob"]]);
  });
});

describe("PostgresStore semantic search with PGlite's pgvector", () => {
  let db: Database;
  const embeddings = new CharacterEmbeddings({ dims: 500 });

  beforeAll(async () => {
    db = await openTemplateCopy("store_vectors_test", { vector: true });
    await migrate(db);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  async function vectorStore(fields?: string[]): Promise<PostgresStore> {
    const schema = `v_${Math.random().toString(36).slice(2, 10)}`;
    const { withSchema } = await import("../../src/db/schema-view.js");
    const view = withSchema(db, schema);
    await migrate(view);
    const store = new PostgresStore(view, { index: { dims: embeddings.dims, embeddings, fields } });
    expect(await store.setup()).toMatchObject({ status: "pgvector", dims: 500 });
    return store;
  }

  it("embeds documents on put and ranks a query by cosine similarity", async () => {
    const store = await vectorStore(["text", "description"]);
    const docs: [string, Record<string, unknown>][] = [
      ["doc1", { text: "short text" }],
      ["doc2", { text: "longer text document" }],
      ["doc3", { text: "longest text document here" }],
      ["doc4", { description: "text in description field" }],
    ];
    for (const [key, value] of docs) await store.put(["test"], key, value);
    const results = await store.search(["test"], { query: "longer text document" });
    expect(results[0]!.key).toBe("doc2");
    expect(results[0]!.score).toBeCloseTo(0.95, 0);
    const scores = results.map((item) => item.score!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(results).toHaveLength(4);
  });

  it("re-embeds an updated document and drops its old vectors", async () => {
    const store = await vectorStore();
    await store.put(["test"], "doc1", { text: "zany zebra Xerxes" });
    await store.put(["test"], "doc2", { text: "something about dogs" });
    await store.put(["test"], "doc3", { text: "text about birds" });
    const initial = await store.search(["test"], { query: "Zany Xerxes" });
    expect(initial[0]!.key).toBe("doc1");
    await store.put(["test"], "doc1", { text: "new text about dogs" });
    const after = await store.search(["test"], { query: "Zany Xerxes" });
    expect(after.find((item) => item.key === "doc1")!.score!).toBeLessThan(initial[0]!.score!);
    const fresh = await store.search(["test"], { query: "new text about dogs" });
    expect(fresh[0]!.key).toBe("doc1");
  });

  it("combines ranking with filters, pagination, and unindexed items (unscored, last)", async () => {
    const store = await vectorStore(["text"]);
    const docs: [string, Record<string, unknown>][] = [
      ["doc1", { text: "red apple", color: "red", score: 4.5 }],
      ["doc2", { text: "red car", color: "red", score: 3.0 }],
      ["doc3", { text: "green apple", color: "green", score: 4.0 }],
      ["doc4", { text: "blue car", color: "blue", score: 3.5 }],
    ];
    for (const [key, value] of docs) await store.put(["test"], key, value);
    await store.put(["test"], "plain", { text: "red apple", color: "red", score: 5 }, false);

    let results = await store.search(["test"], { query: "apple", filter: { color: "red" } });
    expect(results.map((item) => item.key)).toEqual(["doc1", "doc2", "plain"]);
    expect(results[2]!.score).toBeUndefined();
    results = await store.search(["test"], { query: "bbbbluuu", filter: { score: { $gt: 3.2 } } });
    expect(results[0]!.key).toBe("doc4");
    expect(results).toHaveLength(4);
    results = await store.search(["test"], { query: "apple", filter: { score: { $gte: 4.0 }, color: "green" } });
    expect(results.map((item) => item.key)).toEqual(["doc3"]);
    const page = await store.search(["test"], { query: "apple", limit: 2, offset: 1 });
    const all = await store.search(["test"], { query: "apple" });
    expect(page.map((item) => item.key)).toEqual(all.slice(1, 3).map((item) => item.key));
  });

  it("indexes the fields named by the store or by the put, one vector per text", async () => {
    const store = await vectorStore(["key0", "key1", "key3"]);
    await store.put(["test"], "doc1", { key1: "xxx", key2: "yyy", key3: "zzz" });
    await store.put(["test"], "doc2", { key0: "uuu", key1: "vvv", key2: "www", key3: "xxx" });
    const xxx = await store.search(["test"], { query: "xxx" });
    expect(xxx).toHaveLength(2);
    expect(xxx[0]!.score).toBeCloseTo(xxx[1]!.score!, 6);
    const uuu = await store.search(["test"], { query: "uuu" });
    expect(uuu[0]!.key).toBe("doc2");
    expect(uuu[0]!.score).toBeCloseTo(xxx[0]!.score!, 5);
    const www = await store.search(["test"], { query: "www" });
    expect(www.every((item) => item.score! < xxx[0]!.score!)).toBe(true);

    await store.put(["test"], "doc3", { key0: "aaa", key1: "bbb", list: [{ t: "ccc" }, { t: "ddd" }] }, ["key0", "list[*].t"]);
    const ddd = await store.search(["test"], { query: "ddd" });
    expect(ddd[0]!.key).toBe("doc3");
    const { rows } = await db.query<{ field: string }>(`SELECT field FROM "${(store as unknown as { db: Database }).db.schema}".store_vectors WHERE key = 'doc3' ORDER BY field`);
    expect(rows.map((row) => row.field)).toEqual(["key0", "list[*].t.0", "list[*].t.1"]);

    await store.delete(["test"], "doc3");
    const after = await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM "${(store as unknown as { db: Database }).db.schema}".store_vectors WHERE key = 'doc3'`);
    expect(after.rows[0]!.n).toBe(0);
  });

  it("embeds each distinct text of a batch once", async () => {
    const store = await vectorStore(["text"]);
    const before = embeddings.documents.length;
    const puts: StorePutOperation[] = Array.from({ length: 20 }, (_, i) => ({ namespace: ["batch"], key: `k${i}`, value: { text: i % 2 === 0 ? "even" : "odd" } }));
    await store.batch(puts);
    expect(embeddings.documents.slice(before).sort()).toEqual(["even", "odd"]);
    expect((await store.search(["batch"], { query: "even", limit: 20 })).slice(0, 10).every((item) => item.value["text"] === "even")).toBe(true);
  });
});
