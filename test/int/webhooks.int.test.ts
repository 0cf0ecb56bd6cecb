import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { BACKENDS, freshMigratedSchema, itOnPrimary, openBackend } from "../helpers/databases.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });
const tick = new StateGraph(Counter)
  .addNode("bump", (state) => ({ count: state.count + 1 }))
  .addEdge(START, "bump")
  .addEdge("bump", END)
  .compile();
const boom = new StateGraph(Counter)
  .addNode("explode", () => {
    throw new Error("the node exploded");
  })
  .addEdge(START, "explode")
  .addEdge("explode", END)
  .compile();

const WAIT_MS = 15_000;
/** Fast retries so a retried delivery fits a test. */
const FAST = { DEVMIND_WEBHOOK_RETRY_MS: "50", DEVMIND_WEBHOOK_MAX_ATTEMPTS: "3" };

describe.each(BACKENDS)("run webhooks on %s", (backend) => {
  let owner: Database;
  let receiver: WebhookReceiver;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const start = async (env: Record<string, string> = FAST, workers = 1, turns: ScriptedTurn[] = []): Promise<{ server: TestServer; client: Client }> => {
    receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const server = await startTestServer(owner, turns, { workers, env, graphs: turns.length > 0 ? { tick } : { agent: false, tick, boom } });
    cleanups.push(() => server.close());
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };
  /** Waits until the run's completion row is done (webhook settled), and returns it. */
  const settled = (runtime: Runtime, runId: string) =>
    waitUntil(`the webhook of run ${runId} settled`, async () => {
      const completion = await runtime.runs.completion(runId);
      return completion !== null && completion.outcome !== null && completion.done ? completion : undefined;
    }, WAIT_MS);

  it("POSTs the ended run (runs create, wait and stream) once, as LangGraph's server does; retries after a 500", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "tick", { input: { count: 1 }, webhook: `${receiver.url}/hooks/tick` });
    const done = await settled(server.runtime, run.run_id);
    expect(done).toMatchObject({ outcome: "delivered", attempts: 1, last_error: null, delivered: true });
    expect(receiver.received).toHaveLength(1);
    const [hook] = receiver.received;
    expect(hook!.path).toBe("/hooks/tick");
    expect(hook!.contentType).toBe("application/json");
    expect(hook!.body).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, assistant_id: run.assistant_id, status: "success", values: { count: 2 } });
    for (const field of ["run_started_at", "run_ended_at", "webhook_sent_at", "created_at"]) expect(Number.isNaN(Date.parse(String(hook!.body[field])))).toBe(false);
    expect(Date.parse(String(hook!.body["webhook_sent_at"]))).toBeGreaterThanOrEqual(Date.parse(String(hook!.body["run_ended_at"])));
    // the run's final status was stored before the call
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");

    // the receiver fails once: the second attempt delivers; `wait` answers without waiting for the webhook
    receiver.failNext(1, 500);
    const values = await client.runs.wait(null, "tick", { input: { count: 10 }, webhook: `${receiver.url}/hooks/wait` });
    expect(values).toEqual({ count: 11 });
    const waitedRun = receiver.received.length > 1 ? String(receiver.received[1]!.body["run_id"]) : (await waitUntil("the first attempt", () => receiver.received[1]?.body["run_id"] as string | undefined, WAIT_MS));
    const retried = await settled(server.runtime, waitedRun);
    expect(retried).toMatchObject({ outcome: "delivered", attempts: 2, last_error: "HTTP 500" });
    expect(receiver.received.map((request) => [request.path, request.answered])).toEqual([
      ["/hooks/tick", 200],
      ["/hooks/wait", 500],
      ["/hooks/wait", 200],
    ]);
    expect(receiver.received[2]!.body).toMatchObject({ run_id: waitedRun, status: "success", values: { count: 11 } });

    // a streamed run: the stream ends, then its webhook carries the same final values
    let streamedRun: string | undefined;
    for await (const chunk of client.runs.stream(thread.thread_id, "tick", { input: { count: 20 }, webhook: `${receiver.url}/hooks/stream`, onRunCreated: ({ run_id }) => void (streamedRun = run_id) })) void chunk;
    expect(streamedRun).toBeDefined();
    expect(await settled(server.runtime, streamedRun!)).toMatchObject({ outcome: "delivered", attempts: 1 });
    expect(receiver.received.slice(3).map((request) => [request.path, request.body["run_id"], request.body["values"]])).toEqual([["/hooks/stream", streamedRun, { count: 21 }]]);
  });

  itOnPrimary(backend)("the agent's webhook carries its messages as LangGraph message dicts", async () => {
    const { client, server } = await start(FAST, 1, [{ content: "hello back" }]);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ role: "user", content: "hello" }] }, webhook: `${receiver.url}/agent` });
    expect(await settled(server.runtime, run.run_id)).toMatchObject({ outcome: "delivered" });
    const values = receiver.received[0]!.body["values"] as { messages: { type: string; content: string }[] };
    expect(values.messages.map((message) => [message.type, message.content])).toEqual([
      ["human", "hello"],
      ["ai", "hello back"],
    ]);
    expect(receiver.received[0]!.body).toMatchObject({ status: "success", stop_reason: "completed", answer: "hello back" });
  });

  itOnPrimary(backend)("refuses targets outside the allow-list with 422 and creates no run", async () => {
    const { client, server } = await start();
    const thread = await client.threads.create();
    const refused: [string, RegExp][] = [
      ["http://10.0.0.8/hook", /not allowed/],
      ["http://169.254.169.254/latest/meta-data", /not allowed/],
      ["http://[fd00::1]/hook", /not allowed/],
      ["https://hooks.example.com/x", /not allowed/],
      ["http://user:secret@127.0.0.1/x", /credentials/],
      ["ftp://127.0.0.1/x", /http or https/],
      ["//evil.example.com/x", /absolute|not allowed/],
    ];
    for (const [webhook, message] of refused) {
      const error = await client.runs.create(thread.thread_id, "tick", { input: { count: 1 }, webhook }).then(
        () => null,
        (caught: unknown) => caught as { status?: number; message?: string },
      );
      expect([webhook, error?.status]).toEqual([webhook, 422]);
      expect(error?.message ?? "").toMatch(message);
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    // a path is the official server's form for "this server": resolved against it, not refused
    const relative = await client.runs.create(thread.thread_id, "tick", { input: { count: 1 }, webhook: "/relative/path" });
    const target = new URL(String((await server.runtime.runs.completion(relative.run_id))?.webhook));
    expect(target.pathname).toBe("/relative/path");
    expect(["127.0.0.1", "localhost", "[::1]"]).toContain(target.hostname);
    // the runtime refuses the same way (RUN_INPUT_INVALID naming the field)
    await expect(server.runtime.runs.create({ assistantId: "tick", input: { count: 1 }, webhook: "http://192.168.1.1/" })).rejects.toMatchObject({ code: "RUN_INPUT_INVALID", details: { field: "webhook" } });
  });

  itOnPrimary(backend)("a failed run's webhook says error; a dead target is given up after the bounded attempts", async () => {
    const { client, server } = await start({ ...FAST, DEVMIND_WEBHOOK_MAX_ATTEMPTS: "2" });
    receiver.failNext(100, 503);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "boom", { input: { count: 0 }, webhook: `${receiver.url}/down` });
    const done = await settled(server.runtime, run.run_id);
    expect(done).toMatchObject({ outcome: "failed", attempts: 2, last_error: "HTTP 503", delivered: false });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[0]!.body).toMatchObject({ run_id: run.run_id, status: "error" });
    expect(String(receiver.received[0]!.body["error"])).toMatch(/exploded/);
  });

  itOnPrimary(backend)("a name that resolves outside the allowed ranges is refused when called (no DNS rebinding to private ranges)", async () => {
    // `localhost` is allowed by name, but its address (127.0.0.1) is not listed: the connection is refused
    const { client, server } = await start({ ...FAST, DEVMIND_WEBHOOK_ALLOW: "localhost" });
    const port = new URL(receiver.url).port;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "tick", { input: { count: 1 }, webhook: `http://localhost:${port}/x` });
    const done = await settled(server.runtime, run.run_id);
    expect(done).toMatchObject({ outcome: "refused", attempts: 1 });
    expect(done.last_error).toMatch(/outside the webhook allow-list/);
    expect(receiver.received).toHaveLength(0);
  });

  itOnPrimary(backend)("survives the process: a run ended without any worker is delivered by a later worker", async () => {
    receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { db, drop } = await freshMigratedSchema(owner);
    cleanups.push(drop);
    const config = loadConfig({ ...FAST });
    // the first "process" executes the run itself and has no worker: nothing is sent
    const first = createRuntime({ db, config, graphs: { agent: false, tick } });
    const run = await first.runs.create({ assistantId: "tick", input: { count: 4 }, webhook: `${receiver.url}/later`, executeHere: true });
    expect((await first.runs.execute(run.run_id)).status).toBe("success");
    expect(await first.runs.completion(run.run_id)).toMatchObject({ outcome: null, attempts: 0, done: false });
    await first.close();
    // a later one with a worker delivers it
    const second = createRuntime({ db, config, graphs: { agent: false, tick } });
    cleanups.push(() => second.close());
    const worker = second.worker({ concurrency: 1 });
    await worker.start();
    cleanups.push(() => worker.stop());
    expect(await settled(second, run.run_id)).toMatchObject({ outcome: "delivered", attempts: 1 });
    expect(receiver.received.map((request) => request.body["run_id"])).toEqual([run.run_id]);
  });
});
