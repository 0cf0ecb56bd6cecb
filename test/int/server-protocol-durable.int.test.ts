/**
 * The protocol's events are a view of what is stored: a subscription resumed with `since` in
 * another `devmind serve` process, after the first one stopped, gets exactly the events after
 * that position (counted: none missed, none twice) and follows the runs that come after; a
 * WebSocket subscription restored there with `subscription.reconnect` (its id and the last event
 * it got) alike. And the project's auth handler applies to every command and event stream as to
 * the other routes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Database } from "../../src/db/types.js";
import type { GraphEntry } from "../../src/graphs/graph-kinds.js";
import { loadCustomAuth } from "../../src/server/custom-auth/load-auth.js";
import { openBackend, PRIMARY_ENGINE, TEST_DATABASE_URL } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { isRootEnd, readProtocolEvents, rootEnds, sendCommand, type WireEvent } from "../helpers/protocol-sse.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { ProtocolSocket } from "../helpers/protocol-socket.js";

const CONFIG = fileURLToPath(new URL("../fixtures/protocol/langgraph.json", import.meta.url));
const AUTH = fileURLToPath(new URL("../fixtures/auth/", import.meta.url));
const KEY = { "x-api-key": TEST_KEYS.alice };
const ALL = ["lifecycle", "values", "updates", "messages", "tools", "checkpoints", "tasks", "input", "custom"];

describe(`a protocol subscription across server processes (${PRIMARY_ENGINE})`, () => {
  const dirs: string[] = [];
  const processes: ServeProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((serve) => serve.stop()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("resumed with since after a restart in another process: 0 missed, 0 duplicated, and it follows the next run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-protocol-"));
    dirs.push(dir);
    const schema = `proto_${Date.now().toString(36)}_${process.pid}`;
    if (TEST_DATABASE_URL === undefined) seedDataDir(dir);
    const env = { ...(TEST_DATABASE_URL === undefined ? { DEVMIND_DATA_DIR: dir } : { DATABASE_URL: TEST_DATABASE_URL, DEVMIND_DB_SCHEMA: schema }), DEVMIND_WORKSPACE: join(dir, "ws"), DEVMIND_API_KEYS: `alice=${TEST_KEYS.alice}` };
    const first = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], env);
    processes.push(first);
    const threadId = randomUUID();
    for (const id of [1, 2]) {
      const started = await sendCommand(first.url, threadId, { id, method: "run.start", params: { assistant_id: "tools", input: { messages: [{ role: "user", content: `weather ${id}?` }] } } }, KEY);
      expect(started.body["type"]).toBe("success");
    }
    const reference = (await readProtocolEvents(first.url, threadId, { channels: ALL, since: 0 }, { headers: KEY, until: rootEnds(2) })).events;
    expect(reference.filter((event) => event.method === "lifecycle" && event.params.namespace.length === 0).map((event) => event.params.data["event"])).toEqual(["started", "completed", "started", "completed"]);
    const half = Math.floor(reference.length / 2);
    const before = (await readProtocolEvents(first.url, threadId, { channels: ALL, since: 0 }, { headers: KEY, max: half })).events;
    expect(before.length).toBe(half);
    await first.stop();

    const second = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], env);
    processes.push(second);
    const since = before.at(-1)?.seq as number;
    // the runs that end after `since`, then the third
    const ends = reference.slice(half).filter(isRootEnd).length + 1;
    const resumed = readProtocolEvents(second.url, threadId, { channels: ALL, since }, { headers: KEY, until: rootEnds(ends) });
    const third = await sendCommand(second.url, threadId, { id: 3, method: "run.start", params: { assistant_id: "tools", input: { messages: [{ role: "user", content: "weather 3?" }] } } }, KEY);
    expect(third.body["type"]).toBe("success");
    const after = (await resumed).events;
    const ids = (events: WireEvent[]): string[] => events.map((event) => event.event_id);
    const got = [...ids(before), ...ids(after)];
    const missed = ids(reference).filter((id) => !got.includes(id)).length;
    const duplicated = got.length - new Set(got).size;
    expect({ missed, duplicated }).toEqual({ missed: 0, duplicated: 0 });
    // after the two runs' events, the third run's, from its start to its end
    expect(ids(after).slice(0, reference.length - half)).toEqual(ids(reference).slice(half));
    const tail = after.slice(reference.length - half);
    expect([tail[0]?.params.data["event"], tail.at(-1)?.params.data["event"]]).toEqual(["started", "completed"]);
    expect(tail.every((event) => event.event_id.startsWith(String((third.body["result"] as { run_id: string }).run_id)))).toBe(true);
    if (TEST_DATABASE_URL !== undefined) {
      await second.stop();
      const owner = await openBackend("postgres");
      await owner.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await owner.close();
    }
  }, 180_000);

  it("a WebSocket subscription restored with subscription.reconnect in another process after a restart: 0 missed, 0 duplicated, the answer counts what it missed, and it follows the next run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-protocol-"));
    dirs.push(dir);
    const schema = `protows_${Date.now().toString(36)}_${process.pid}`;
    if (TEST_DATABASE_URL === undefined) seedDataDir(dir);
    const env = { ...(TEST_DATABASE_URL === undefined ? { DEVMIND_DATA_DIR: dir } : { DATABASE_URL: TEST_DATABASE_URL, DEVMIND_DB_SCHEMA: schema }), DEVMIND_WORKSPACE: join(dir, "ws"), DEVMIND_API_KEYS: `alice=${TEST_KEYS.alice}` };
    const first = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], env);
    processes.push(first);
    const threadId = randomUUID();
    const runIds: string[] = [];
    for (const [id, graph] of [[1, "tools"], [2, "deep"]] as const) {
      const started = await sendCommand(first.url, threadId, { id, method: "run.start", params: { assistant_id: graph, input: { messages: [{ role: "user", content: `weather ${id}?` }] } } }, KEY);
      runIds.push((started.body["result"] as { run_id: string }).run_id);
    }
    const reference = (await readProtocolEvents(first.url, threadId, { channels: ALL, since: 0 }, { headers: KEY, until: rootEnds(2) })).events;
    // the subgraphs' lifecycle is among them: started and completed for each of `deep`'s two namespaces
    // (and each node that wrote a message has its own namespace, as LangGraph's protocol stream sends messages)
    const subgraphLifecycle = reference.filter((event) => event.method === "lifecycle" && event.params.namespace.length > 0 && /^(outer|inner):/.test(event.params.namespace.at(-1) ?? ""));
    expect(subgraphLifecycle.map((event) => event.params.data["event"])).toEqual(["started", "started", "completed", "completed"]);
    const socket = await ProtocolSocket.open(first.url, threadId, KEY);
    const subscribed = await socket.command({ id: 1, method: "subscription.subscribe", params: { channels: ALL, since: 0 } });
    const subscriptionId = (subscribed["result"] as { subscription_id: string }).subscription_id;
    const half = Math.floor(reference.length / 2);
    expect(await socket.until(() => socket.events().length >= half)).toBe(true);
    socket.close();
    const before = socket.events().slice(0, half);
    await first.stop();

    const second = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], env);
    processes.push(second);
    const resumed = await ProtocolSocket.open(second.url, threadId, KEY);
    try {
      const answer = await resumed.command({ id: 1, method: "subscription.reconnect", params: { run_id: runIds[1], last_event_id: before.at(-1)?.event_id, subscriptions: [subscriptionId] } });
      expect(answer).toMatchObject({ type: "success", result: { restored: true, missed_events: reference.length - half } });
      const third = await resumed.command({ id: 2, method: "run.start", params: { assistant_id: "tools", input: { messages: [{ role: "user", content: "weather 3?" }] } } });
      const thirdRun = (third["result"] as { run_id: string }).run_id;
      expect(await resumed.until(() => resumed.events().some((event) => isRootEnd(event) && event.event_id.startsWith(thirdRun)))).toBe(true);
      const after = resumed.events();
      const ids = (events: WireEvent[]): string[] => events.map((event) => event.event_id);
      const got = [...ids(before), ...ids(after)];
      const missed = ids(reference).filter((id) => !got.includes(id)).length;
      const duplicated = got.length - new Set(got).size;
      expect({ missed, duplicated }).toEqual({ missed: 0, duplicated: 0 });
      expect(ids(after).slice(0, reference.length - half)).toEqual(ids(reference).slice(half));
      const tail = after.slice(reference.length - half);
      expect([tail[0]?.params.data["event"], tail.at(-1)?.params.data["event"]]).toEqual(["started", "completed"]);
      expect(tail.every((event) => event.event_id.startsWith(thirdRun))).toBe(true);
    } finally {
      resumed.close();
    }
    if (TEST_DATABASE_URL !== undefined) {
      await second.stop();
      const owner = await openBackend("postgres");
      await owner.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await owner.close();
    }
  }, 180_000);
});

describe(`the protocol behind the project's auth handler (${PRIMARY_ENGINE})`, () => {
  let owner: Database;
  let server: TestServer;
  const as = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });
  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    const { graph } = (await import(`${AUTH}graph.ts`)) as { graph: GraphEntry };
    const auth = await loadCustomAuth({ source: "./auth.ts:auth", file: `${AUTH}auth.ts`, exportName: "auth" }, { timeoutMs: 5_000 });
    server = await startTestServer(owner, [], { workers: 1, apiKeys: "", graphs: { agent: false, notes: graph }, auth });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("every command and event stream is the handler's: no token 401, another user's thread 404 or an error, nothing stored; the owner streams it", async () => {
    const threadId = randomUUID();
    const started = await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "notes", input: { note: "hello" } } }, as("tok-alice"));
    expect(started.body).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    const mine = await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "values"] }, { headers: as("tok-alice"), until: rootEnds(1) });
    expect(mine.events.filter((event) => event.method === "values").at(-1)?.params.data["seen_user"]).toBe("alice");

    expect((await sendCommand(server.url, threadId, { id: 2, method: "state.get", params: {} }, as(null))).status).toBe(401);
    expect((await readProtocolEvents(server.url, threadId, { channels: ["values"] }, { headers: as(null) })).status).toBe(401);
    const peek = await readProtocolEvents(server.url, threadId, { channels: ["values"] }, { headers: as("tok-bob") });
    expect(peek.status).toBe(404);
    const state = await sendCommand(server.url, threadId, { id: 3, method: "state.get", params: {} }, as("tok-bob"));
    expect(state.body).toMatchObject({ type: "error", id: 3, error: "invalid_argument" });
    expect(JSON.stringify(state.body)).not.toContain("hello");
    const hijack = await sendCommand(server.url, threadId, { id: 4, method: "run.start", params: { assistant_id: "notes", input: { note: "bob was here" } } }, as("tok-bob"));
    expect(hijack.body).toMatchObject({ type: "error", id: 4 });
    expect((await server.runtime.runs.list({ threadId })).length).toBe(1);
    // the agent tree too: the owner's, and an error for another user (nothing of it told)
    const tree = await sendCommand(server.url, threadId, { id: 5, method: "agent.getTree", params: {} }, as("tok-alice"));
    expect(tree.body).toMatchObject({ type: "success", result: { tree: { namespace: [], graph_name: "notes" } } });
    const peekTree = await sendCommand(server.url, threadId, { id: 6, method: "agent.getTree", params: {} }, as("tok-bob"));
    expect(peekTree.body).toMatchObject({ type: "error", id: 6, error: "invalid_argument" });
    expect(JSON.stringify(peekTree.body)).not.toContain("notes");
    // the WebSocket's upgrade goes through the same gate: bob's is refused 404, no token 401
    const upgrade = (token: string | null): Promise<number> =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(`${server.url.replace("http", "ws")}/threads/${threadId}/stream/events`, { headers: as(token) });
        socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
        socket.once("open", () => {
          socket.close();
          resolve(101);
        });
        socket.once("error", reject);
      });
    expect([await upgrade("tok-bob"), await upgrade(null), await upgrade("tok-alice")]).toEqual([404, 401, 101]);
  });
});
