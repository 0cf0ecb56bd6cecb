/**
 * What a LangGraph run request carries besides its body, as LangGraph Platform takes it, through
 * the official SDK `Client`: `x-*` request headers (and `user-agent`) in the graph's
 * `config.configurable`, the API key headers never; a `webhook` that is a path, resolved against
 * the server itself and delivered to the project's `http.app` route on that path.
 */
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { headerConfigurable, resolveWebhook, selfBaseUrl } from "../../src/server/run-request.js";
import { openBackend, PRIMARY_ENGINE } from "../helpers/databases.js";
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
      graphs: { echo: echoConfigurable },
      env: { DEVMIND_WEBHOOK_RETRY_MS: "50" },
      http: { settings: { app: { file: "in-test", exportName: "app" }, disabled: [], cors: null }, app: project },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("x-* headers and user-agent reach the graph's configurable over the body's values; API key headers never do", async () => {
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

  it("a webhook path is resolved against the server and POSTed the ended run to the project's route; a relative path without a slash is refused", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", { input: {}, webhook: "/hooks/done" });
    const payload = await waitUntil("the webhook POST to /hooks/done", () => received.find((body) => body["run_id"] === run.run_id), 20_000);
    expect(payload).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, status: "success" });
    await expect(client.runs.create(thread.thread_id, "echo", { input: {}, webhook: "hooks/done" })).rejects.toThrow(/HTTP 422/);
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
