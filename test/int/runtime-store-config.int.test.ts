import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openTemplateCopy } from "../helpers/pglite-template.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { CharacterEmbeddings } from "../helpers/char-embeddings.js";
import { BACKENDS, freshMigratedSchema, itOnPrimary, openBackend } from "../helpers/databases.js";
import { startTestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";

const STORE_ENV = {
  DEVMIND_STORE_TTL_MINUTES: "30",
  DEVMIND_STORE_TTL_REFRESH_ON_READ: "false",
  DEVMIND_STORE_INDEX_DIMS: "32",
  DEVMIND_STORE_INDEX_EMBED: "openai:text-embedding-3-small",
  DEVMIND_STORE_INDEX_FIELDS: "text",
};

/** The item's TTL in minutes and its expiry as epoch ms (null: none). */
async function expiry(db: Database, nsPath: string, key: string): Promise<{ ttl: number | null; at: number | null }> {
  const { rows } = await db.query<{ ttl: number | null; at: number | null }>(
    `SELECT ttl_minutes AS ttl, (extract(epoch FROM expires_at) * 1000)::float8 AS at FROM "${db.schema}".store_items WHERE ns_path = $1 AND key = $2`,
    [nsPath, key],
  );
  return { ttl: rows[0]?.ttl ?? null, at: rows[0]?.at === null || rows[0]?.at === undefined ? null : Number(rows[0].at) };
}

describe.each(BACKENDS)("runtime.store from devmind configuration on %s", (backend) => {
  let owner: Database;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    // PGlite with its vector extension, as `serve` opens it when an index is configured; PostgreSQL as it is
    owner = backend === "pglite" ? await openTemplateCopy("store_config_owner", { vector: true }) : await openBackend(backend);
  }, 120_000);
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("applies the configured TTL, refresh-on-read and index (dims, fields) to runtime.store", async () => {
    const { db, drop } = await freshMigratedSchema(owner);
    cleanups.push(drop);
    const embeddings = new CharacterEmbeddings({ dims: 32 });
    const runtime = createRuntime({ db, config: loadConfig(STORE_ENV), embeddings, graphs: { agent: false } });
    cleanups.push(() => runtime.close());
    const store = runtime.store;
    await store.put(["users", "u1"], "a", { text: "likes green tea", note: "not indexed" });
    await store.put(["users", "u1"], "b", { text: "drives a blue truck", note: "not indexed" });
    await store.put(["users", "u1"], "forever", { text: "never expires" }, undefined, { ttl: null });
    // the configured default TTL (30 minutes); an explicit null still means none
    const first = await expiry(db, "users.u1", "a");
    expect(first.ttl).toBe(30);
    expect(first.at! - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(await expiry(db, "users.u1", "forever")).toEqual({ ttl: null, at: null });
    // refresh on read is off: a get leaves the expiry where it was
    await db.query(`UPDATE "${db.schema}".store_items SET expires_at = now() + interval '5 minutes' WHERE key = 'a'`);
    const before = await expiry(db, "users.u1", "a");
    expect((await store.get(["users", "u1"], "a"))?.value).toEqual({ text: "likes green tea", note: "not indexed" });
    expect((await expiry(db, "users.u1", "a")).at).toBe(before.at);

    const status = await store.setup();
    if (backend === "pglite") {
      // the configured fields only: `note` is never embedded
      expect(status).toMatchObject({ status: "pgvector", dims: 32 });
      expect(embeddings.documents).toEqual(["likes green tea", "drives a blue truck", "never expires"]);
      const ranked = await store.search(["users"], { query: "blue truck" });
      expect(ranked.map((item) => item.key)[0]).toBe("b");
      expect(ranked.every((item) => typeof item.score === "number")).toBe(true);
    } else {
      // this PostgreSQL has no pgvector (the Debian package is not in bookworm): the fallback, said so
      expect(status.status).toBe("unavailable");
      const unranked = await store.search(["users"], { query: "blue truck" });
      expect(unranked.map((item) => item.key).sort()).toEqual(["a", "b", "forever"]);
      expect(unranked.every((item) => item.score === undefined)).toBe(true);
    }
  });

  itOnPrimary(backend)("serve runs the TTL sweeper every DEVMIND_STORE_SWEEP_MINUTES and stops it on close", async () => {
    const server = await startTestServer(owner, [], { workers: 0, env: { DEVMIND_STORE_SWEEP_MINUTES: "0.001" }, graphs: { agent: false } });
    cleanups.push(() => server.close());
    await server.runtime.store.put(["sweep"], "old", { v: 1 }, undefined, { ttl: 60 });
    await server.runtime.store.put(["sweep"], "kept", { v: 2 }, undefined, { ttl: 60 });
    await server.db.query(`UPDATE "${server.db.schema}".store_items SET expires_at = now() - interval '1 second' WHERE key = 'old'`);
    const rows = async () => (await server.db.query<{ key: string }>(`SELECT key FROM "${server.db.schema}".store_items ORDER BY key`)).rows.map((row) => row.key);
    await waitUntil("the expired item swept", async () => (await rows()).length === 1, 10_000);
    expect(await rows()).toEqual(["kept"]);
    await server.server.close();
    // stopped: the store's sweeper is gone, a second stop is a no-op
    expect((server.runtime.store as unknown as { sweeper: unknown }).sweeper).toBeUndefined();
  });
});
