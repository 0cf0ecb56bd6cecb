/**
 * What a LangGraph run request carries besides its body, as LangGraph Platform takes it, through
 * the official SDK `Client`: `x-*` request headers (and `user-agent`) in the graph's
 * `config.configurable`, the API key headers never; a `webhook` that is a path, resolved against
 * the server itself and delivered to the project's `http.app` route on that path; the state of a
 * subgraph stopped at a breakpoint: nested in the parent's (`subgraphs=true`), read and updated
 * by its `checkpoint_ns`, its own history.
 */
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { Client, type Checkpoint } from "@langchain/langgraph-sdk";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { headerConfigurable, resolveWebhook, selfBaseUrl } from "../../src/server/run-request.js";
import { openBackend, PRIMARY_ENGINE, itWithPostgres } from "../helpers/databases.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";

const EchoState = Annotation.Root({ seen: Annotation<Record<string, unknown>>() });

/** Answers with the run's configurable values (those a header or the body can set). */
const echoConfigurable = new StateGraph(EchoState)
  .addNode("echo", (_state: typeof EchoState.State, config: LangGraphRunnableConfig) => {
    const configurable = config.configurable ?? {};
    return { seen: Object.fromEntries(Object.entries(configurable).filter(([key]) => key.startsWith("x-") || key === "user-agent" || key === "tenant")) };
  })
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

/** A checkpoint reference by namespace only, as a subgraph task's `checkpoint` gives it (the SDK's type wants every field). */
function checkpointAt(checkpointNs: string): Checkpoint {
  return { checkpoint_ns: checkpointNs } as Checkpoint;
}

const CityState = Annotation.Root({ steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }), city: Annotation<string>() });

/** A subgraph that picks a city, then stops before reporting on it (a compile-time breakpoint). */
const weather = new StateGraph(CityState)
  .addNode("pick", () => ({ city: "Paris", steps: ["pick"] }))
  .addNode("report", (state: typeof CityState.State) => ({ steps: [`sunny in ${state.city}`] }))
  .addEdge(START, "pick")
  .addEdge("pick", "report")
  .addEdge("report", END)
  .compile({ interruptBefore: ["report"] });

/** The parent: one node that is the weather subgraph. */
const withSubgraph = new StateGraph(CityState).addNode("weather_graph", weather).addEdge(START, "weather_graph").addEdge("weather_graph", END).compile();

describe("LangGraph run requests: headers into configurable, webhook paths on the server itself", () => {
  let owner: Database;
  let server: TestServer;
  const received: Record<string, unknown>[] = [];

  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    const project = new Hono().post("/hooks/done", async (c) => {
      received.push((await c.req.json()) as Record<string, unknown>);
      return c.json({ ok: true });
    });
    server = await startTestServer(owner, [], {
      workers: 1,
      apiKeys: "",
      graphs: { echo: echoConfigurable, nested: withSubgraph },
      env: { DEVMIND_WEBHOOK_RETRY_MS: "50" },
      http: { settings: { app: { source: "./in-test.ts:app", file: "/in-test.ts", exportName: "app" }, disabled: [], cors: null }, app: project },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  itWithPostgres("x-* headers and user-agent reach the graph's configurable over the body's values; API key headers never do", async () => {
    const client = new Client({ apiUrl: server.url, defaultHeaders: { "x-tenant-id": "t-1", "X-Feature": "on", "x-api-key": "not-for-the-graph", "x-service-key": "nor-this" } });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "echo", { input: {}, config: { configurable: { tenant: "body", "x-feature": "from-body", "x-only-body": "kept" } } })) as { seen: Record<string, unknown> };
    expect(values.seen).toMatchObject({ "x-feature": "on", "x-only-body": "kept", tenant: "body" });
    expect(typeof values.seen["user-agent"]).toBe("string");
    expect(values.seen).not.toHaveProperty("x-api-key");
    expect(values.seen).not.toHaveProperty("x-service-key");
    expect(values.seen).not.toHaveProperty("x-tenant-id");
    // a stateless run (POST /runs/wait) and the stream route take them the same way
    const stateless = (await new Client({ apiUrl: server.url, defaultHeaders: { "x-feature": "stateless" } }).runs.wait(null, "echo", { input: {} })) as { seen: Record<string, unknown> };
    expect(stateless.seen["x-feature"]).toBe("stateless");
  });

  itWithPostgres("a webhook path is resolved against the server and POSTed the ended run to the project's route; a relative path without a slash is refused", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", { input: {}, webhook: "/hooks/done" });
    const payload = await waitUntil("the webhook POST to /hooks/done", () => received.find((body) => body["run_id"] === run.run_id), 20_000);
    expect(payload).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: "success" });
    await expect(client.runs.create(thread.thread_id, "echo", { input: {}, webhook: "hooks/done" })).rejects.toThrow(/HTTP 422/);
  });

  itWithPostgres("a subgraph stopped at a breakpoint: its state nested with subgraphs=true, read and updated by checkpoint_ns, its own history; an unknown namespace is a 404", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "nested", { input: { steps: ["start"] } });
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["weather_graph"]);
    const task = state.tasks[0];
    expect(task).toMatchObject({ name: "weather_graph", state: null, checkpoint: { thread_id: thread.thread_id, checkpoint_ns: expect.stringMatching(/^weather_graph:/) } });
    const ns = task?.checkpoint?.checkpoint_ns as string;

    const nested = await client.threads.getState(thread.thread_id, undefined, { subgraphs: true });
    expect(nested.tasks[0]).toMatchObject({ name: "weather_graph", checkpoint: null, state: { values: { city: "Paris", steps: ["start", "pick"] }, next: ["report"], tasks: [{ name: "report", state: null }], checkpoint: { checkpoint_ns: ns } } });

    const update = await client.threads.updateState(thread.thread_id, { values: { city: "Oslo" }, checkpoint: checkpointAt(ns) });
    expect(update.configurable).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: ns, checkpoint_id: expect.any(String) });
    const inner = await client.threads.getState<{ city: string }>(thread.thread_id, checkpointAt(ns));
    expect(inner).toMatchObject({ values: { city: "Oslo" }, next: ["report"], checkpoint: { checkpoint_ns: ns, checkpoint_id: update.configurable?.checkpoint_id } });
    // the parent's own state is where it was; the subgraph's history has the update on top
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({ steps: ["start"] });
    const innerHistory = await client.threads.getHistory<{ city?: string }>(thread.thread_id, { checkpoint: checkpointAt(ns) });
    expect(innerHistory[0]?.values.city).toBe("Oslo");
    expect(innerHistory.at(-1)?.next).toEqual(["__start__"]);

    // a namespace without a subgraph: nothing to read there (LangGraph's empty state), nothing to update (404)
    expect(await client.threads.getState(thread.thread_id, checkpointAt("nowhere:1"))).toMatchObject({ values: {}, next: [], tasks: [] });
    await expect(client.threads.updateState(thread.thread_id, { values: { city: "x" }, checkpoint: checkpointAt("nowhere:1") })).rejects.toThrow(/HTTP 404: no subgraph for checkpoint_ns "nowhere:1"/);
    const badFlag = await fetch(`${server.url}/threads/${thread.thread_id}/state?subgraphs=maybe`);
    expect(badFlag.status).toBeLessThan(500);
    expect(badFlag.status).toBeGreaterThanOrEqual(400);
  });

  it("headerConfigurable, resolveWebhook and selfBaseUrl (the pieces)", () => {
    expect(headerConfigurable(new Headers({ "X-A": "1", authorization: "Bearer k", "x-api-key": "k", "user-agent": "ua", "content-type": "application/json" }))).toEqual({ "x-a": "1", "user-agent": "ua" });
    expect(resolveWebhook("/a/b?c=1", "http://127.0.0.1:9")).toBe("http://127.0.0.1:9/a/b?c=1");
    expect(resolveWebhook("https://hooks.example.com/x", "http://127.0.0.1:9")).toBe("https://hooks.example.com/x");
    expect(resolveWebhook("//evil.example.com/x", "http://127.0.0.1:9")).toBe("//evil.example.com/x");
    expect(resolveWebhook(null, "http://127.0.0.1:9")).toBeNull();
    expect([selfBaseUrl("0.0.0.0", 80), selfBaseUrl("::", 81), selfBaseUrl("localhost", 82), selfBaseUrl("::1", 83)]).toEqual(["http://127.0.0.1:80", "http://[::1]:81", "http://localhost:82", "http://[::1]:83"]);
  });
});
