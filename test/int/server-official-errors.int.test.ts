import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { chainGraph, chainState, pauseGraph } from "../helpers/chain-graph.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { sdkRefusal as refusal } from "../helpers/sdk-server.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

/** An error class of the graph's own, as the official API tests' `error` graph throws it. */
class CustomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustomError";
  }
}

/** One node that throws CustomError("Boo!"). */
const failingGraph = new StateGraph(chainState)
  .addNode("boom", () => {
    throw new CustomError("Boo!");
  })
  .addEdge(START, "boom")
  .addEdge("boom", END)
  .compile();

/** A node that loops back to itself: any recursion limit stops it. */
const loopGraph = new StateGraph(Annotation.Root({ n: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }) }))
  .addNode("spin", (state) => ({ n: state.n + 1 }))
  .addEdge(START, "spin")
  .addEdge("spin", "spin")
  .compile();

/** One node that appends the `origin` its run config's metadata carries (what a graph reads of `config.metadata`). */
const originGraph = new StateGraph(chainState)
  .addNode("read", (_state, config) => ({ path: [String((config as unknown as { metadata?: Record<string, unknown> }).metadata?.["origin"])] }))
  .addEdge(START, "read")
  .addEdge("read", END)
  .compile();

const GRAPHS = { chain: chainGraph, pause: pauseGraph, failing: failingGraph, loop: loopGraph, origin: originGraph };
const UNKNOWN = "00000000-0000-4000-8000-00000000beef";

describe.each(BACKENDS)("LangGraph routes answer as the official server on %s", (backend) => {
  let owner: Database;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const start = async (env: Record<string, string> = {}): Promise<{ server: TestServer; client: Client; call: (method: string, path: string, body?: string, key?: string | null) => Promise<{ status: number; type: string; text: string }> }> => {
    const server = await startTestServer(owner, [], { workers: 1, graphs: GRAPHS, env });
    servers.push(server);
    const call = async (method: string, path: string, body?: string, key: string | null = TEST_KEYS.alice) => {
      const res = await fetch(`${server.url}${path}`, { method, headers: { ...(key === null ? {} : { "x-api-key": key }), ...(body === undefined ? {} : { "content-type": "application/json" }) }, ...(body === undefined ? {} : { body }) });
      return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
    };
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }), call };
  };

  it("not found, conflicts and unknown assistants read as the official server's messages in the SDK", async () => {
    const { client } = await start();
    expect(await refusal(client.assistants.get(UNKNOWN))).toEqual({ status: 404, message: "HTTP 404: Assistant not found" });
    expect(await refusal(client.threads.get(UNKNOWN))).toEqual({ status: 404, message: `HTTP 404: Thread with ID ${UNKNOWN} not found` });
    expect(await refusal(client.threads.delete(UNKNOWN))).toEqual({ status: 404, message: `HTTP 404: Thread with ID ${UNKNOWN} not found` });
    const thread = await client.threads.create();
    expect(await refusal(client.runs.get(thread.thread_id, UNKNOWN))).toEqual({ status: 404, message: "HTTP 404: Run not found" });
    expect(await refusal(client.threads.create({ threadId: thread.thread_id }))).toEqual({ status: 409, message: "HTTP 409: Thread already exists" });
    const assistant = await client.assistants.create({ graphId: "chain" });
    expect(await refusal(client.assistants.create({ graphId: "chain", assistantId: assistant.assistant_id }))).toEqual({ status: 409, message: "HTTP 409: Assistant already exists" });
    const noAssistant = 'HTTP 404: No assistant found for "non-existent". Make sure the assistant ID is for a valid assistant or a valid graph ID.';
    expect(await refusal(client.runs.wait(thread.thread_id, "non-existent", { input: { path: [] } }))).toEqual({ status: 404, message: noAssistant });
    expect(await refusal(collect(client.runs.stream(thread.thread_id, "non-existent", { input: { path: [] } })))).toEqual({ status: 404, message: noAssistant });

    // a thread waiting at an interrupt has no active run (the Platform's model: its run ended): a new run is taken
    const paused = await client.threads.create();
    await client.runs.wait(paused.thread_id, "pause", { input: { path: [] } });
    expect((await client.threads.get(paused.thread_id)).status).toBe("interrupted");
    const [waiting] = await client.runs.list(paused.thread_id);
    expect(waiting).toMatchObject({ status: "success", stop_reason: "interrupt" });
    const another = await client.runs.create(paused.thread_id, "pause", { input: { path: [] } });
    expect(another.run_id).not.toBe(waiting?.run_id);
    await client.runs.join(paused.thread_id, another.run_id);
    // a thread with an active (pending) run: a second run, and a state update, are refused in the official words
    const busy = await client.threads.create();
    await client.runs.create(busy.thread_id, "chain", { input: { path: [] }, afterSeconds: 600 });
    expect(await refusal(client.runs.create(busy.thread_id, "chain", { input: { path: [] } }))).toEqual({
      status: 409,
      message: "HTTP 409: Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
    });
    expect(await refusal(client.threads.updateState(busy.thread_id, { values: { path: ["x"] } }))).toEqual({ status: 409, message: "HTTP 409: Thread is busy" });
    // devmind's own refusals on these routes: plain text with devmind's message
    expect(await refusal(client.runs.create(thread.thread_id, "chain", { input: { path: [] }, feedbackKeys: ["score"] }))).toEqual({ status: 422, message: "HTTP 422: feedback_keys is not supported by devmind serve" });

    // refusal order (a plain run is created in one transaction; its refusals keep the order of the checks):
    // a missing assistant, then an unsupported option, then a missing thread, then the input
    const missingThread = "00000000-0000-4000-8000-00000000abcd";
    const noSuchUuid = `HTTP 404: No assistant found for "${UNKNOWN}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`;
    expect(await refusal(client.runs.create(thread.thread_id, UNKNOWN, { input: { path: [] }, feedbackKeys: ["score"] }))).toEqual({ status: 404, message: noSuchUuid });
    expect(await refusal(client.runs.create(missingThread, UNKNOWN, { input: { path: [] } }))).toEqual({ status: 404, message: noSuchUuid });
    expect(await refusal(client.runs.create(missingThread, "chain", { input: { path: [] }, feedbackKeys: ["score"] }))).toEqual({ status: 422, message: "HTTP 422: feedback_keys is not supported by devmind serve" });
    const threadGone = `HTTP 404: Thread with ID ${missingThread} not found`;
    expect(await refusal(client.runs.create(missingThread, "chain", { input: { path: [] } }))).toEqual({ status: 404, message: threadGone });
    expect(await refusal(client.runs.create(missingThread, "chain", { input: { path: ["nul \u0000"] } }))).toEqual({ status: 404, message: threadGone });
    expect((await refusal(client.runs.create(thread.thread_id, "chain", { input: { path: ["nul \u0000"] } }))).status).toBe(422);
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });

  itOnPrimary(backend)("bodies: a validation failure is 400 with the zod issues, malformed JSON and unknown paths as Hono words them; devmind's routes and the key check keep {error, message}", async () => {
    const { call } = await start();
    const invalid = await call("POST", "/threads/search", JSON.stringify({ limit: "ten" }));
    expect([invalid.status, invalid.type]).toEqual([400, expect.stringContaining("application/json")]);
    expect(JSON.parse(invalid.text)).toEqual({ success: false, error: { name: "ZodError", issues: [expect.objectContaining({ code: "invalid_type", path: ["limit"], message: expect.any(String) })] } });
    expect(await call("POST", "/threads", "{not json")).toEqual({ status: 400, type: expect.stringContaining("text/plain"), text: "Malformed JSON in request body" });
    expect(await call("GET", "/threads/search/nothing/here")).toEqual({ status: 404, type: expect.stringContaining("text/plain"), text: "404 Not Found" });
    // never a 5xx for bad input, on any family
    expect((await call("POST", `/threads/${UNKNOWN}/runs`, JSON.stringify({ assistant_id: 7 }))).status).toBe(400);

    const devmind = async (method: string, path: string, body?: string, key?: string | null) => {
      const res = await call(method, path, body, key);
      return { status: res.status, body: JSON.parse(res.text) as unknown };
    };
    expect(await devmind("GET", `/runs/${UNKNOWN}`)).toEqual({ status: 404, body: { error: "RUN_NOT_FOUND", message: expect.any(String) } });
    expect(await devmind("GET", `/runs/${UNKNOWN}/events?follow=0`)).toEqual({ status: 404, body: { error: "RUN_NOT_FOUND", message: expect.any(String) } });
    expect(await devmind("GET", "/approvals?status=done")).toEqual({ status: 422, body: { error: "REQUEST_INVALID", message: expect.any(String) } });
    expect(await devmind("GET", `/files/${UNKNOWN}`)).toEqual({ status: 404, body: { error: "NOT_FOUND", message: expect.any(String) } });
    expect(await devmind("GET", "/no/such/route")).toEqual({ status: 404, body: { error: "NOT_FOUND", message: expect.any(String) } });
    expect(await devmind("POST", "/threads/search", "{}", null)).toEqual({ status: 401, body: { error: "UNAUTHORIZED", message: expect.any(String) } });
    expect(await devmind("GET", `/threads/${UNKNOWN}`, undefined, "not-a-key")).toEqual({ status: 403, body: { error: "FORBIDDEN", message: expect.any(String) } });
  });

  it("a failed run's stream ends with {error: its class name, message}; runs.wait and join answer the official {__error__}, so the SDK throws", async () => {
    const { client, call } = await start();
    const thread = await client.threads.create();
    const parts = await collect(client.runs.stream(thread.thread_id, "failing", { input: { path: [] } }));
    expect(parts.at(-1)).toMatchObject({ event: "error", data: { error: "CustomError", message: "Boo!" } });

    const part = JSON.stringify({ error: "CustomError", message: "Boo!" });
    await expect(client.runs.wait(thread.thread_id, "failing", { input: { path: [] } })).rejects.toThrow(`Error: ${part}`);
    const raw = await call("POST", `/threads/${thread.thread_id}/runs/wait`, JSON.stringify({ assistant_id: "failing", input: { path: [] } }));
    expect([raw.status, JSON.parse(raw.text)]).toEqual([200, { __error__: { error: "Error", message: part } }]);
    const stateless = await call("POST", "/runs/wait", JSON.stringify({ assistant_id: "failing", input: { path: [] } }));
    expect([stateless.status, JSON.parse(stateless.text)]).toEqual([200, { __error__: { error: "Error", message: part } }]);
    const [last] = await client.runs.list(thread.thread_id, { limit: 1 });
    expect(await client.runs.join(thread.thread_id, last?.run_id as string)).toEqual({ __error__: { error: "Error", message: part } });
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");

    // LangGraph's recursion limit: GraphRecursionError, as the official API tests match it
    const looping = await client.threads.create();
    const loopParts = await collect(client.runs.stream(looping.thread_id, "loop", { input: {}, config: { recursion_limit: 2 } }));
    expect(loopParts.at(-1)).toMatchObject({ event: "error", data: { error: "GraphRecursionError", message: expect.any(String) } });
    await expect(client.runs.wait(looping.thread_id, "loop", { input: {}, config: { recursion_limit: 1 } })).rejects.toThrowError(/GraphRecursionError/);
  });

  itOnPrimary(backend)("config.metadata is accepted: the graph gets it as its config's metadata, and the run's metadata has it under the run's own", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const config = { metadata: { origin: "sdk", shared: "config" } } as Record<string, unknown>;
    expect(await client.runs.wait(thread.thread_id, "origin", { input: { path: [] }, config, metadata: { shared: "run" } })).toEqual({ path: ["sdk"] });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run?.metadata).toEqual({ origin: "sdk", shared: "run" });
    // the built-in agent's runs take it too (it has no other config)
    const agentRun = await client.runs.create(null, "agent", { input: { messages: [{ type: "human", content: "hi" }] }, config: { metadata: { origin: "ui" } } as Record<string, unknown> });
    expect(agentRun.metadata).toMatchObject({ origin: "ui" });
    // not an object: refused naming it
    expect(await refusal(client.runs.create(thread.thread_id, "origin", { input: { path: [] }, config: { metadata: "x" } as Record<string, unknown> }))).toMatchObject({ status: 422, message: expect.stringContaining("config.metadata") });
  });

  itOnPrimary(backend)("deleting an assistant with deleteThreads deletes its threads (tagged with it or run with it, their runs stopped) and keeps the others", async () => {
    const { server, client } = await start();
    const assistant = await client.assistants.create({ graphId: "pause" });
    const tagged = await client.threads.create({ metadata: { name: "test_thread", assistant_id: assistant.assistant_id } });
    const ran = await client.threads.create();
    await client.runs.wait(ran.thread_id, assistant.assistant_id, { input: { path: [] } });
    expect((await client.threads.get(ran.thread_id)).status).toBe("interrupted");
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, "chain", { input: { path: [] } });

    await client.assistants.delete(assistant.assistant_id, { deleteThreads: true });
    expect(await refusal(client.assistants.get(assistant.assistant_id))).toEqual({ status: 404, message: "HTTP 404: Assistant not found" });
    for (const gone of [tagged, ran]) expect(await refusal(client.threads.get(gone.thread_id))).toEqual({ status: 404, message: `HTTP 404: Thread with ID ${gone.thread_id} not found` });
    expect(await server.runtime.runs.list({ threadId: ran.thread_id })).toEqual([]);
    expect((await server.runtime.threads.state(ran.thread_id)).createdAt).toBeUndefined();
    expect((await client.threads.get(other.thread_id)).status).toBe("idle");
    // without the flag the threads stay
    const kept = await client.assistants.create({ graphId: "chain" });
    const keptThread = await client.threads.create({ metadata: { assistant_id: kept.assistant_id } });
    await client.assistants.delete(kept.assistant_id);
    expect((await client.threads.get(keptThread.thread_id)).thread_id).toBe(keptThread.thread_id);
  });

  itOnPrimary(backend)("POST /internal/truncate is a 404 unless DEVMIND_ALLOW_TRUNCATE; with it, it deletes what it is asked to and keeps the graphs' assistants", async () => {
    const closed = await start();
    const before = await closed.client.threads.create();
    expect(await closed.call("POST", "/internal/truncate", JSON.stringify({ threads: true }))).toEqual({ status: 404, type: expect.stringContaining("text/plain"), text: "404 Not Found" });
    expect((await closed.client.threads.get(before.thread_id)).thread_id).toBe(before.thread_id);

    const { server, client, call } = await start({ DEVMIND_ALLOW_TRUNCATE: "true" });
    const custom = await client.assistants.create({ graphId: "chain", name: "custom" });
    const done = await client.threads.create();
    await client.runs.wait(done.thread_id, "chain", { input: { path: [] } });
    const paused = await client.threads.create();
    await client.runs.wait(paused.thread_id, "pause", { input: { path: [] } });
    const [pausedRun] = await client.runs.list(paused.thread_id);
    await client.store.putItem(["notes"], "k", { text: "keep?" });

    // the key check applies, and the body is checked as the official server's validator does
    expect((await call("POST", "/internal/truncate", "{}", null)).status).toBe(401);
    const bad = await call("POST", "/internal/truncate", JSON.stringify({ runs: "yes" }));
    expect([bad.status, JSON.parse(bad.text).error.name]).toEqual([400, "ZodError"]);

    // only the store: the rest stays
    expect(await call("POST", "/internal/truncate", JSON.stringify({ store: true }))).toMatchObject({ status: 200, text: JSON.stringify({ ok: true }) });
    expect(await client.store.getItem(["notes"], "k")).toBeNull();
    expect((await client.threads.get(done.thread_id)).thread_id).toBe(done.thread_id);

    // what the official API tests' truncate(API_URL, "all") sends
    const all = { runs: true, threads: true, assistants: true, store: true, checkpoint: true };
    expect(await call("POST", "/internal/truncate", JSON.stringify(all))).toMatchObject({ status: 200, text: JSON.stringify({ ok: true }) });
    for (const gone of [done, paused]) expect(await refusal(client.threads.get(gone.thread_id))).toMatchObject({ status: 404 });
    expect(await refusal(client.assistants.get(custom.assistant_id))).toEqual({ status: 404, message: "HTTP 404: Assistant not found" });
    expect((await client.assistants.get("chain")).graph_id).toBe("chain");
    expect(await server.runtime.runs.list({})).toEqual([]);
    expect(await refusal(server.runtime.runs.get(pausedRun?.run_id as string))).toMatchObject({ message: expect.stringContaining("no run") });
    expect((await server.runtime.threads.state(done.thread_id)).createdAt).toBeUndefined();
    // the server goes on: a new run on a new thread works
    const fresh = await client.threads.create();
    expect(await client.runs.wait(fresh.thread_id, "chain", { input: { path: [] } })).toEqual({ path: ["a", "b", "c"] });
  });
});
