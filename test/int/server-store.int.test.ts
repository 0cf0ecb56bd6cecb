import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

describe.each(BACKENDS)("the SDK's client.store against devmind serve on %s", (backend) => {
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const start = async (): Promise<{ server: TestServer; client: Client }> => {
    const server = await startTestServer(owner, [], { workers: 0 });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };

  it("puts, gets, searches, lists and deletes items", async () => {
    const { client, server } = await start();
    await client.store.putItem(["users", "u1", "memories"], "lang", { text: "prefers TypeScript", weight: 3 });
    await client.store.putItem(["users", "u1", "memories"], "food", { text: "likes pho", weight: 1 });
    await client.store.putItem(["users", "u2", "memories"], "lang", { text: "prefers Go", weight: 2 });

    const item = await client.store.getItem(["users", "u1", "memories"], "lang");
    expect(item).toMatchObject({ namespace: ["users", "u1", "memories"], key: "lang", value: { text: "prefers TypeScript", weight: 3 } });
    expect(new Date(item!.createdAt).toISOString()).toBe(item!.createdAt);
    expect(item!.updatedAt).toBe(item!.createdAt);
    expect(await client.store.getItem(["users", "u1", "memories"], "missing")).toBeNull();

    const found = await client.store.searchItems(["users"], { filter: { weight: { $gte: 2 } } });
    expect(found.items.map((entry) => [entry.namespace.join("."), entry.key]).sort()).toEqual([
      ["users.u1.memories", "lang"],
      ["users.u2.memories", "lang"],
    ]);
    const page = await client.store.searchItems(["users", "u1"], { limit: 1, offset: 1 });
    expect(page.items).toHaveLength(1);
    expect((await client.store.searchItems([], { query: "anything" })).items).toHaveLength(3);

    expect(await client.store.listNamespaces({ prefix: ["users"] })).toEqual({
      namespaces: [
        ["users", "u1", "memories"],
        ["users", "u2", "memories"],
      ],
    });
    expect(await client.store.listNamespaces({ suffix: ["memories"], maxDepth: 2 })).toEqual({ namespaces: [["users", "u1"], ["users", "u2"]] });
    expect(await client.store.listNamespaces({ prefix: ["users", "*", "memories"], limit: 1, offset: 1 })).toEqual({ namespaces: [["users", "u2", "memories"]] });

    await client.store.deleteItem(["users", "u1", "memories"], "lang");
    expect(await client.store.getItem(["users", "u1", "memories"], "lang")).toBeNull();
    // what the API wrote is what the runtime's store holds
    expect((await server.runtime.store.get(["users", "u2", "memories"], "lang"))!.value).toEqual({ text: "prefers Go", weight: 2 });
  });

  itOnPrimary(backend)("applies a put's TTL and the refresh_ttl of reads", async () => {
    const { client, server } = await start();
    await client.store.putItem(["ttl"], "k", { v: 1 }, { ttl: 5 });
    const left = async (): Promise<number> =>
      (await server.db.query<{ left: number }>(`SELECT (extract(epoch FROM expires_at - now()) / 60)::float8 AS left FROM "${server.db.schema}".store_items`)).rows[0]!.left;
    expect(await left()).toBeGreaterThan(4);
    await server.db.query(`UPDATE "${server.db.schema}".store_items SET expires_at = now() + interval '1 minute'`);
    await client.store.getItem(["ttl"], "k", { refreshTtl: false });
    expect(await left()).toBeLessThan(2);
    await client.store.getItem(["ttl"], "k", { refreshTtl: true });
    expect(await left()).toBeGreaterThan(4);
    await server.db.query(`UPDATE "${server.db.schema}".store_items SET expires_at = now() - interval '1 second'`);
    expect(await client.store.getItem(["ttl"], "k")).toBeNull();
    expect((await client.store.searchItems(["ttl"])).items).toEqual([]);
  });

  itOnPrimary(backend)("answers bad namespaces and values with 422 and a plain-text message (400 with the zod issues for a body its schema refuses), as the official server does, and unknown callers with 401 {error, message}", async () => {
    const { server } = await start();
    const call = async (method: string, path: string, body?: unknown, key: string | null = TEST_KEYS.alice): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { "content-type": "application/json", ...(key === null ? {} : { "x-api-key": key }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      // the official server's refusals: a zod body (400) for a request its schema refuses, plain text otherwise
      const json = (response.headers.get("content-type") ?? "").includes("application/json");
      return { status: response.status, body: text === "" ? null : json ? (JSON.parse(text) as unknown) : text };
    };
    const invalid = expect.stringMatching(/namespace|value|label/i);
    const zod = { status: 400, body: { success: false, error: { name: "ZodError", issues: expect.any(Array) } } };
    expect(await call("PUT", "/store/items", { namespace: ["a", ""], key: "k", value: {} })).toEqual({ status: 422, body: invalid });
    expect(await call("PUT", "/store/items", { namespace: ["a.b"], key: "k", value: {} })).toEqual({ status: 422, body: invalid });
    expect(await call("PUT", "/store/items", { namespace: [], key: "k", value: {} })).toEqual({ status: 422, body: invalid });
    expect(await call("PUT", "/store/items", { namespace: ["a:b"], key: "k", value: {} })).toEqual({ status: 422, body: invalid });
    expect(await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: { t: "\u0000" } })).toEqual({ status: 422, body: invalid });
    expect(await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: [1] })).toMatchObject(zod);
    expect(await call("PUT", "/store/items", { namespace: ["a"], key: "k", value: {}, ttl: -1 })).toMatchObject(zod);
    expect(await call("GET", "/store/items?namespace=a..b&key=k")).toEqual({ status: 422, body: invalid });
    expect(await call("GET", "/store/items?key=k")).toEqual({ status: 422, body: invalid });
    expect(await call("DELETE", "/store/items", { namespace: ["ok", ""], key: "k" })).toEqual({ status: 422, body: invalid });
    expect(await call("POST", "/store/items/search", { namespace_prefix: ["x.y"] })).toEqual({ status: 422, body: invalid });
    expect(await call("POST", "/store/items/search", { namespace_prefix: ["x"], limit: -3 })).toMatchObject(zod);
    expect(await call("POST", "/store/namespaces", { prefix: [""] })).toEqual({ status: 422, body: invalid });
    expect(await call("POST", "/store/namespaces", {}, null)).toMatchObject({ status: 401, body: { error: "UNAUTHORIZED" } });
    expect(await call("POST", "/store/namespaces", {})).toEqual({ status: 200, body: { namespaces: [] } });
    const info = (await (await fetch(`${server.url}/info`)).json()) as { flags: { store: boolean } };
    expect(info.flags.store).toBe(true);
  });
});
