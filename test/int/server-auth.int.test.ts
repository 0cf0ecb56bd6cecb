/**
 * Custom auth (`auth` in langgraph.json): the project's LangGraph `Auth` handler authenticates
 * every request and its `on(...)` filters keep two users apart on every route, driven with the
 * official SDK's Client as an application would. Scenarios after the official server's auth tests
 * (libs/langgraph-api/tests/auth.test.mts), written anew against test/fixtures/auth.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import type { GraphEntry } from "../../src/graphs/graph-kinds.js";
import { loadCustomAuth } from "../../src/server/custom-auth/load-auth.js";
import { openBackend, PRIMARY_ENGINE } from "../helpers/databases.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe } from "../helpers/server-process.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/auth/", import.meta.url));

/** A Client as one user (a bearer token of test/fixtures/auth/auth.ts); null: no token. */
const clientAs = (url: string, token: string | null): Client => new Client({ apiUrl: url, defaultHeaders: token === null ? {} : { Authorization: `Bearer ${token}` } });

/** The HTTP status an SDK call failed with (the SDK's message starts `HTTP {status}`), or 200. */
async function statusOf(call: Promise<unknown> | (() => Promise<unknown>)): Promise<number> {
  try {
    await (typeof call === "function" ? call() : call);
    return 200;
  } catch (error) {
    const match = /HTTP (\d{3})/.exec(error instanceof Error ? error.message : String(error));
    if (match === null) throw error;
    return Number(match[1]);
  }
}

/** Every part of an SDK stream, at most 200 (a bound). */
async function gather<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const parts: T[] = [];
  for await (const part of stream) {
    parts.push(part);
    if (parts.length >= 200) break;
  }
  return parts;
}

describe(`custom auth on devmind serve (${PRIMARY_ENGINE})`, () => {
  let owner: Database;
  let server: TestServer;
  let alice: Client;
  let bob: Client;
  const raw = (path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (init.token !== null) headers.set("authorization", `Bearer ${init.token ?? "tok-alice"}`);
    if (init.body !== undefined) headers.set("content-type", "application/json");
    return fetch(`${server.url}${path}`, { ...init, headers });
  };

  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    const { graph } = (await import(`${FIXTURES}graph.ts`)) as { graph: GraphEntry };
    // a handler gets 1 s here (DEVMIND_AUTH_TIMEOUT_MS; 10 s by default): the fixture's slow token takes 3 s
    const auth = await loadCustomAuth({ source: "./auth.ts:auth", file: `${FIXTURES}auth.ts`, exportName: "auth" }, { timeoutMs: 1_000 });
    server = await startTestServer(owner, [], { workers: 1, apiKeys: "", graphs: { agent: false, notes: graph }, auth });
    alice = clientAs(server.url, "tok-alice");
    bob = clientAs(server.url, "tok-bob");
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("authenticates every API request: no token 401 with the handler's header, a deleted user 401, its HTTPException's status and headers, a crash 500; /ok and /info stay open", async () => {
    const none = await raw("/threads/search", { method: "POST", body: "{}", token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect(await none.text()).toBe("Could not validate credentials");
    // devmind's own routes: the same status, devmind's error body
    const own = await raw("/runs", { token: null });
    expect(own.status).toBe(401);
    expect(await own.json()).toEqual({ error: "AUTH_REFUSED", message: "Could not validate credentials" });
    const deleted = await raw("/threads/search", { method: "POST", body: "{}", token: "tok-carol" });
    expect([deleted.status, await deleted.text()]).toEqual([401, "this user no longer exists"]);
    const busy = await raw("/threads/search", { method: "POST", body: "{}", token: "tok-busy" });
    expect([busy.status, busy.headers.get("retry-after"), await busy.text()]).toEqual([429, "7", "slow down"]);
    // a handler that throws something else: the official server's 500, nothing about the cause
    const crash = await raw("/threads/search", { method: "POST", body: "{}", token: "tok-crash" });
    expect([crash.status, await crash.text()]).toEqual([500, "Internal Server Error"]);
    expect(await statusOf(clientAs(server.url, null).threads.create())).toBe(401);
    expect((await raw("/ok", { token: null })).status).toBe(200);
    expect(await (await raw("/info", { token: null })).json()).toMatchObject({ auth: "custom" });
  });

  it("a handler that does not answer in time fails the request (500) and stores nothing", async () => {
    const before = await alice.threads.count({});
    const slow = await raw("/threads", { method: "POST", body: JSON.stringify({ metadata: { from: "slow" } }), token: "tok-slow" });
    expect([slow.status, await slow.text()]).toEqual([500, "Internal Server Error"]);
    expect(await alice.threads.count({})).toBe(before);
  }, 30_000);

  it("threads: the owner's metadata is the handler's (a forged owner is overwritten); another user gets 404 on every thread route and never sees it in search or count", async () => {
    const thread = await alice.threads.create({ metadata: { owner: "bob", topic: "alice-private-topic" } });
    expect(thread.metadata).toMatchObject({ owner: "alice", topic: "alice-private-topic" });
    const id = thread.thread_id;
    expect(await statusOf(alice.threads.get(id))).toBe(200);
    for (const call of [
      () => bob.threads.get(id),
      () => bob.threads.update(id, { metadata: { owner: "bob" } }),
      () => bob.threads.delete(id),
      () => bob.threads.getState(id),
      () => bob.threads.getHistory(id),
      () => bob.threads.updateState(id, { values: { note: "bob was here" } }),
      () => bob.threads.copy(id),
      () => bob.runs.list(id),
      () => bob.runs.create(id, "notes", { input: { note: "bob" } }),
      () => bob.runs.wait(id, "notes", { input: { note: "bob" } }),
      () => bob.runs.create(id, "notes", { input: { note: "bob" }, ifNotExists: "create" }),
      () => bob.crons.createForThread(id, "notes", { schedule: "0 7 * * *", input: { note: "bob" } }),
    ]) {
      expect(await statusOf(call)).toBe(404);
    }
    expect((await bob.threads.search({ limit: 100 })).map((found) => found.thread_id)).not.toContain(id);
    expect(await bob.threads.search({ metadata: { topic: "alice-private-topic" } })).toEqual([]);
    expect(await bob.threads.count({ metadata: { topic: "alice-private-topic" } })).toBe(0);
    expect(await alice.threads.count({ metadata: { topic: "alice-private-topic" } })).toBe(1);
    // bob's "update" changed nothing: the thread is still alice's, unchanged
    expect((await alice.threads.get(id)).metadata).toMatchObject({ owner: "alice" });
    // a thread of alice's id cannot be taken over by creating it again
    expect(await statusOf(bob.threads.create({ threadId: id, ifExists: "do_nothing" }))).toBe(409);
    expect(await statusOf(alice.threads.delete(id))).toBe(200);
  });

  it("runs: the graph gets the user (langgraph_auth_user and friends), the run records who started it; another user's run is 404 on get, join, cancel, delete and devmind's own run routes, and its join streams send one error part", async () => {
    const thread = await alice.threads.create();
    // forged identity in configurable is replaced by the authenticated one
    const values = (await alice.runs.wait(thread.thread_id, "notes", { input: { note: "first" }, config: { configurable: { langgraph_auth_user_id: "bob" } } })) as Record<string, unknown>;
    expect(values).toMatchObject({ seen_user: "alice", seen_email: "alice@example.com" });
    const run = await alice.runs.create(thread.thread_id, "notes", { input: { note: "second", sleep_ms: 1_500 } });
    expect(run.metadata).toMatchObject({ langgraph_auth_user_id: "alice", owner: "alice" });
    for (const call of [
      () => bob.runs.get(thread.thread_id, run.run_id),
      () => bob.runs.join(thread.thread_id, run.run_id),
      () => bob.runs.cancel(thread.thread_id, run.run_id),
      () => bob.runs.delete(thread.thread_id, run.run_id),
    ]) {
      expect(await statusOf(call)).toBe(404);
    }
    // a stream of another user's run opens and sends one error part, the official server's shape (the SDK yields it), and ends
    const hidden = { event: "error", data: { error: "Error", message: "404: Run not found" } };
    expect(await gather(bob.runs.joinStream(thread.thread_id, run.run_id))).toEqual([hidden]);
    expect(await gather(bob.threads.joinStream(thread.thread_id))).toEqual([{ event: "error", data: { error: "Error", message: "404: Thread not found" } }]);
    // as a run or thread that does not exist: the answer tells nothing of what exists
    expect(await gather(bob.runs.joinStream(thread.thread_id, crypto.randomUUID()))).toEqual([hidden]);
    expect(await gather(alice.runs.joinStream(crypto.randomUUID(), run.run_id))).toEqual([hidden]);
    expect(await gather(bob.threads.joinStream(crypto.randomUUID()))).toEqual([{ event: "error", data: { error: "Error", message: "404: Thread not found" } }]);
    const stream = await raw(`/runs/${run.run_id}/stream`, { token: "tok-bob" });
    expect(stream.status).toBe(200);
    expect(await stream.text()).toBe(`event: error\ndata: ${JSON.stringify(hidden.data)}\n\n`);
    for (const path of [`/runs/${run.run_id}`, `/runs/${run.run_id}/events?follow=0`]) {
      const response = await raw(path, { token: "tok-bob" });
      expect(response.status, path).toBe(404);
      expect(await response.text()).not.toContain("second");
    }
    expect((await raw(`/runs/${run.run_id}/cancel`, { method: "POST", token: "tok-bob" })).status).toBe(404);
    const bobRuns = (await (await raw("/runs?limit=500", { token: "tok-bob" })).json()) as { run_id: string }[];
    expect(bobRuns.map((listed) => listed.run_id)).not.toContain(run.run_id);
    // cancelling "all pending and running" as bob leaves alice's run alone
    expect((await raw("/runs/cancel", { method: "POST", body: JSON.stringify({ status: "all" }), token: "tok-bob" })).status).toBe(204);
    const finished = await alice.runs.join(thread.thread_id, run.run_id);
    expect(finished).toMatchObject({ seen_user: "alice" });
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    // the graph's store write under the user's namespace is the user's to read
    expect(await alice.store.getItem(["alice"], "last_note")).toMatchObject({ value: { note: "second" } });
  }, 60_000);

  it("cancel of a run that already ended: 202 with the run as it ended, nothing stored (the official server's answer), never 409; another user's stays 404", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "notes", { input: { note: "done" } });
    const [ended] = await alice.runs.list(thread.thread_id);
    expect(ended?.status).toBe("success");
    const runId = ended?.run_id as string;
    const eventsBefore = await (await raw(`/runs/${runId}/events?follow=0`)).text();
    const cancelled = await raw(`/threads/${thread.thread_id}/runs/${runId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(202);
    expect(await cancelled.json()).toMatchObject({ run_id: runId, status: "success" });
    await alice.runs.cancel(thread.thread_id, runId);
    await alice.runs.cancel(thread.thread_id, runId, true);
    expect((await raw("/runs/cancel", { method: "POST", body: JSON.stringify({ run_ids: [runId] }) })).status).toBe(204);
    expect((await alice.runs.get(thread.thread_id, runId)).status).toBe("success");
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
    // no cancel was recorded: the run's events are what they were
    expect(await (await raw(`/runs/${runId}/events?follow=0`)).text()).toBe(eventsBefore);
    expect(await statusOf(bob.runs.cancel(thread.thread_id, runId))).toBe(404);
    expect(await statusOf(alice.runs.cancel(thread.thread_id, crypto.randomUUID()))).toBe(404);
  });

  it("approvals: another user's interrupted run is neither listed nor resumable", async () => {
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "notes", { input: { note: "ask" } });
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
    const listed = async (token: string) => ((await (await raw("/approvals", { token })).json()) as { approvals: { thread_id: string }[] }).approvals.map((item) => item.thread_id);
    expect(await listed("tok-alice")).toContain(thread.thread_id);
    expect(await listed("tok-bob")).not.toContain(thread.thread_id);
    expect(await statusOf(bob.runs.wait(thread.thread_id, "notes", { command: { resume: "yes" } }))).toBe(404);
    expect(await alice.runs.wait(thread.thread_id, "notes", { command: { resume: "yes" } })).toMatchObject({ answer: "yes", seen_user: "alice" });
    // the audit's "who": the resume is recorded with the authenticated identity
    const recorded = await server.db.query<{ principal: string }>(`SELECT u.principal FROM "${server.db.schema}".run_resumes u JOIN "${server.db.schema}".runs r ON r.run_id = u.run_id WHERE r.thread_id = $1::text`, [thread.thread_id]);
    expect(recorded.rows.map((row) => row.principal)).toEqual(["alice"]);
  }, 60_000);

  it("stateless runs create a thread that is the caller's", async () => {
    const values = (await alice.runs.wait(null, "notes", { input: { note: "stateless" } })) as Record<string, unknown>;
    expect(values).toMatchObject({ seen_user: "alice" });
    const parts = await gather(alice.runs.stream(null, "notes", { input: { note: "streamed" } }));
    expect(parts.some((part) => part.event === "error")).toBe(false);
    const mine = await alice.threads.search({ limit: 100 });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((thread) => thread.metadata?.["owner"] === "alice")).toBe(true);
  }, 60_000);

  it("assistants: created with the owner; another user gets 404 on get, update, delete, versions, latest, graph and schemas, and does not find it", async () => {
    const assistant = await alice.assistants.create({ graphId: "notes", name: "alice-notes", metadata: { secret: "alice-assistant-secret" } });
    expect(assistant.metadata).toMatchObject({ owner: "alice" });
    const id = assistant.assistant_id;
    await alice.assistants.update(id, { metadata: { round: 2 } });
    for (const call of [
      () => bob.assistants.get(id),
      () => bob.assistants.update(id, { metadata: { owner: "bob" } }),
      () => bob.assistants.delete(id),
      () => bob.assistants.getVersions(id),
      () => bob.assistants.setLatest(id, 1),
      () => bob.assistants.getGraph(id),
      () => bob.assistants.getSchemas(id),
    ]) {
      expect(await statusOf(call)).toBe(404);
    }
    expect((await bob.assistants.search({ limit: 100 })).map((found) => found.assistant_id)).not.toContain(id);
    expect(await bob.assistants.count({ metadata: { secret: "alice-assistant-secret" } })).toBe(0);
    expect((await alice.assistants.search({ metadata: { secret: "alice-assistant-secret" } })).map((found) => found.assistant_id)).toEqual([id]);
    expect((await alice.assistants.get(id)).version).toBe(2);
    // runs may still name the graph's own assistant (not the user's), as on the official server
    expect(await alice.runs.wait(null, "notes", { input: { note: "by graph id" } })).toMatchObject({ seen_user: "alice" });
  }, 60_000);

  it("crons: another user gets 404 and never counts them; a forged owner is refused (403) and nothing is stored", async () => {
    const cron = await alice.crons.create("notes", { schedule: "0 7 * * *", input: { note: "daily" }, metadata: { label: "alice-cron" } });
    expect(cron.metadata).toMatchObject({ owner: "alice" });
    expect(await statusOf(raw(`/runs/crons/${cron.cron_id}`, { token: "tok-bob" }).then((response) => (response.ok ? response : Promise.reject(new Error(`HTTP ${response.status}`)))))).toBe(404);
    expect(await statusOf(bob.crons.update(cron.cron_id, { schedule: "0 8 * * *" }))).toBe(404);
    expect(await statusOf(bob.crons.delete(cron.cron_id))).toBe(404);
    expect((await bob.crons.search({ limit: 100 })).map((found) => found.cron_id)).not.toContain(cron.cron_id);
    expect(await bob.crons.count({})).toBe(0);
    const before = await alice.crons.count({});
    expect(await statusOf(alice.crons.create("notes", { schedule: "0 7 * * *", input: { note: "framed" }, metadata: { owner: "bob" } }))).toBe(403);
    expect(await statusOf(alice.crons.update(cron.cron_id, { metadata: { owner: "bob" } }))).toBe(403);
    expect(await alice.crons.count({})).toBe(before);
    expect(await bob.crons.count({})).toBe(0);
    // a tick comes due (a test clock): its run runs as alice, on a new thread that is alice's
    await server.db.query(`UPDATE "${server.db.schema}".crons SET next_run_at = now() - interval '1 minute' WHERE cron_id = $1::uuid`, [cron.cron_id]);
    const fired = await waitUntil("the cron's tick", async () => {
      const threads = await alice.threads.search({ metadata: { label: "alice-cron" }, limit: 10 });
      return threads.length > 0 ? threads[0] : undefined;
    }, 30_000);
    const [tickRun] = await alice.runs.list(fired!.thread_id);
    expect(await alice.runs.join(fired!.thread_id, tickRun!.run_id)).toMatchObject({ seen_user: "alice" });
    expect(await statusOf(() => bob.threads.get(fired!.thread_id))).toBe(404);
    await alice.crons.delete(cron.cron_id);
  });

  it("store: namespaces are filtered in SQL; another user's namespace is 403, searches and listings show only the caller's items", async () => {
    await alice.store.putItem(["alice", "notes"], "n1", { text: "alice-store-secret" });
    await bob.store.putItem(["bob", "notes"], "n1", { text: "bob's note" });
    for (const call of [
      () => bob.store.getItem(["alice", "notes"], "n1"),
      () => bob.store.putItem(["alice", "notes"], "n1", { text: "overwritten" }),
      () => bob.store.deleteItem(["alice", "notes"], "n1"),
      () => bob.store.searchItems(["alice"]),
      () => bob.store.listNamespaces({ prefix: ["alice"] }),
    ]) {
      expect(await statusOf(call)).toBe(403);
    }
    const everything = await bob.store.searchItems([], { limit: 100 });
    expect(everything.items.length).toBeGreaterThan(0);
    expect(everything.items.every((item) => item.namespace.includes("bob"))).toBe(true);
    expect(JSON.stringify(everything)).not.toContain("alice-store-secret");
    expect((await bob.store.listNamespaces({})).namespaces.every((namespace) => namespace.includes("bob"))).toBe(true);
    expect((await alice.store.searchItems(["alice", "notes"])).items.map((item) => item.value)).toEqual([{ text: "alice-store-secret" }]);
    expect(await alice.store.getItem(["alice", "notes"], "n1")).toMatchObject({ value: { text: "alice-store-secret" } });
  });

  it("permissions and broken handlers: a read-only token reads but cannot copy (the create handler's 403); a malformed filter fails the request (500), never widening it", async () => {
    const thread = await alice.threads.create();
    const reader = clientAs(server.url, "tok-alice-reader");
    expect((await reader.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    await expect(reader.threads.copy(thread.thread_id)).rejects.toThrow("HTTP 403: Not authorized");
    const copied = await alice.threads.copy(thread.thread_id);
    expect(copied.metadata).toMatchObject({ owner: "alice" });
    // (raw requests: the SDK retries a 500)
    expect((await raw("/threads/search", { method: "POST", body: "{}", token: "tok-mallory" })).status).toBe(500);
    const got = await raw(`/threads/${thread.thread_id}`, { token: "tok-mallory" });
    expect([got.status, await got.text()]).toEqual([500, "Internal Server Error"]);
  });
});

describe("devmind serve with auth.path in langgraph.json", () => {
  it("loads the TypeScript handler, names it when it starts, and serves every request through it", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-serve-auth-")));
    try {
      seedDataDir(dir);
      const config = join(dir, "langgraph.json");
      writeFileSync(config, JSON.stringify({ graphs: { notes: `${FIXTURES}graph.ts:graph` }, auth: { path: `${FIXTURES}auth.ts:auth`, disable_studio_auth: true } }));
      const serve = await spawnServe(["--config", config, "--port", "0", "--workers", "1"], { DEVMIND_DATA_DIR: dir, DEVMIND_WORKSPACE: join(dir, "ws") }, 120_000);
      try {
        expect(serve.stdout()).toMatch(/auth handler .*auth\.ts:auth/);
        expect((await fetch(`${serve.url}/threads/search`, { method: "POST", body: "{}" })).status).toBe(401);
        const alice = clientAs(serve.url, "tok-alice");
        const thread = await alice.threads.create();
        expect(thread.metadata).toMatchObject({ owner: "alice" });
        expect(await alice.runs.wait(thread.thread_id, "notes", { input: { note: "served" } })).toMatchObject({ seen_user: "alice" });
        expect(await statusOf(() => clientAs(serve.url, "tok-bob").threads.get(thread.thread_id))).toBe(404);
      } finally {
        expect(await serve.stop()).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
