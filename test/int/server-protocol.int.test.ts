/**
 * The event-based client protocol (`@langchain/protocol`) on devmind serve, driven with the
 * official SDK's ThreadStream and raw HTTP: channels and their order, tool-call assembly, an
 * interrupt answered with input.respond, a fork, subgraph namespaces and depth, and bad input
 * answered with the protocol's error while nothing is stored.
 */
import { randomUUID } from "node:crypto";
import { ProtocolSseTransportAdapter, ProtocolWebSocketTransportAdapter, ThreadStream } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { MemorySaver } from "@langchain/langgraph";
import type { Database } from "../../src/db/types.js";
import { ask, chat, deep, nested, tools } from "../fixtures/protocol/graphs.js";
import { BACKENDS, openBackend } from "../helpers/databases.js";
import { readProtocolEvents, rootEnds, sendCommand, type WireEvent } from "../helpers/protocol-sse.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

const KEY = { "x-api-key": TEST_KEYS.alice };

describe.each(BACKENDS)("the event-based protocol on %s", (backend) => {
  let owner: Database;
  let server: TestServer;
  beforeAll(async () => {
    owner = await openBackend(backend);
    server = await startTestServer(owner, [], { workers: 2, graphs: { agent: false, tools, ask, nested, chat, deep } });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  const threadStream = (assistantId: string, threadId: string = randomUUID()): ThreadStream => new ThreadStream(new ProtocolSseTransportAdapter({ apiUrl: server.url, threadId, defaultHeaders: KEY }), { assistantId });

  it("a run's events on every channel, in one order: seq increasing, ids unique, root started first and completed last; the SDK assembles the tool call", async () => {
    const thread = threadStream("tools");
    // the projection opened before the run, as the official stream-sdk test does it
    const toolCalls = thread.toolCalls;
    await thread.run.start({ input: { messages: [{ role: "user", content: "weather in SF?" }] } });
    const calls = [];
    for await (const call of toolCalls) calls.push(call);
    // the SDK yields a call's handle when it starts and again when it finishes
    expect([...new Set(calls.map((call) => `${call.callId} ${call.name}`))]).toEqual(["call_weather_1 weather"]);
    const input = typeof calls[0]?.input === "string" ? JSON.parse(calls[0].input) : calls[0]?.input;
    expect(input).toEqual({ city: "SF" });
    await expect(calls[0]?.output).resolves.toContain("18 degrees");
    await thread.close();

    const { events } = await readProtocolEvents(server.url, thread.threadId, { channels: ["lifecycle", "values", "updates", "messages", "tools", "checkpoints", "tasks"] }, { headers: KEY, until: rootEnds(1) });
    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(new Set(events.map((event) => event.event_id)).size).toBe(events.length);
    expect([events[0]?.method, events[0]?.params.data["event"]]).toEqual(["lifecycle", "started"]);
    expect([events.at(-1)?.method, events.at(-1)?.params.data["event"]]).toEqual(["lifecycle", "completed"]);
    expect(new Set(events.map((event) => event.method))).toEqual(new Set(["lifecycle", "values", "updates", "messages", "tools", "checkpoints", "tasks"]));
    // the tool starts after the model's update that asked for it, and finishes before the answer's
    const at = (predicate: (event: WireEvent) => boolean): number => events.findIndex(predicate);
    const asked = at((event) => event.method === "updates" && event.params.data["node"] === "model");
    const started = at((event) => event.method === "tools" && event.params.data["event"] === "tool-started");
    const finished = at((event) => event.method === "tools" && event.params.data["event"] === "tool-finished");
    const done = at((event) => event.method === "messages" && event.params.data["event"] === "message-start" && event.params.data["id"] === "ai-done");
    expect(asked).toBeGreaterThanOrEqual(0);
    expect([asked < started, started < finished, finished < done]).toEqual([true, true, true]);
    // each message: start, its blocks, finish; the checkpoints' envelope
    const messageEvents = events.filter((event) => event.method === "messages" && event.params.data["id"] === "ai-call" || false);
    expect(messageEvents.length).toBe(1);
    const checkpoint = events.find((event) => event.method === "checkpoints")?.params.data;
    expect(Object.keys(checkpoint ?? {}).sort()).toEqual(expect.arrayContaining(["id", "source", "step"]));
  });

  it.each([
    ["tools", tools],
    ["nested", nested],
    ["deep", deep],
    ["chat", chat],
  ] as const)("namespaces of %s as LangGraph's protocol stream (streamEvents v3) sends them: each node's messages and tool events under the node's namespace, started before and completed after, subgraphs' too; a tool's result message is not a messages event", async (name, graph) => {
    type Event = { method: string; params: { namespace: string[]; data: Record<string, unknown> } };
    const input = { messages: [{ role: "user", content: "weather in SF?" }] };
    // LangGraph's own protocol stream of the same graph, in-process (a subgraph paused at an
    // interrupt is the one difference on purpose, docs/protocol.md: LangGraph calls it completed)
    const reference: Event[] = [];
    const own = graph.builder.compile({ checkpointer: new MemorySaver() }) as unknown as { streamEvents: (input: unknown, options: unknown) => Promise<AsyncIterable<Event>> };
    for await (const event of await own.streamEvents(input, { version: "v3", configurable: { thread_id: randomUUID() } })) reference.push(event);
    const outline = (events: readonly Event[]): string[] =>
      events
        .filter((event) => ["lifecycle", "tools", "custom", "input.requested"].includes(event.method) || (event.method === "messages" && ["message-start", "message-finish"].includes(String(event.params.data["event"]))))
        // the root's lifecycle is the session's (the official server's `running` / `started`)
        .filter((event) => !(event.method === "lifecycle" && event.params.namespace.length === 0))
        .map((event) => `${event.method} ${event.params.namespace.map((segment) => segment.split(":")[0]).join("|")} ${String(event.params.data["event"] ?? "")}`);
    const threadId = randomUUID();
    await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: name, input } }, KEY);
    const events = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "messages", "tools", "custom", "input"] }, { headers: KEY, until: rootEnds(1) })).events;
    expect(outline(events)).toEqual(outline(reference));
    // a node's namespace is `node:task_id` of the task that ran it
    const tasks = (await readProtocolEvents(server.url, threadId, { channels: ["tasks", "lifecycle"] }, { headers: KEY, until: rootEnds(1) })).events.filter((event) => event.method === "tasks").map((event) => event.params.data["id"]);
    for (const event of events.filter((item) => item.method === "messages")) expect(tasks).toContain(event.params.namespace.at(-1)?.split(":")[1]);
  });

  it("a chat model's tokens stream live as deltas; read again later every stored event has the same seq and id, and resuming after the tokens gives the message whole", async () => {
    const threadId = randomUUID();
    // the model takes a second for its answer: the stream opened after run.start follows it live
    await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "chat", input: { messages: [{ role: "user", content: "hi" }] } } }, KEY);
    const seen = (await readProtocolEvents(server.url, threadId, { channels: ["messages", "lifecycle", "values"] }, { headers: KEY, until: rootEnds(1) })).events;
    const chunks = seen.filter((event) => event.event_id.includes(":live:"));
    const text = chunks.map((event) => (event.params.data["delta"] as { text?: string } | undefined)?.text ?? "").join("");
    expect(text).toBe("hello there");
    expect(chunks.length).toBeGreaterThan(2);
    const later = (await readProtocolEvents(server.url, threadId, { channels: ["messages", "lifecycle", "values"] }, { headers: KEY, until: rootEnds(1) })).events;
    const byId = new Map(later.map((event) => [event.event_id, event.seq]));
    const stored = seen.filter((event) => !event.event_id.includes(":live:"));
    expect(stored.map((event) => [event.event_id, byId.get(event.event_id)])).toEqual(stored.map((event) => [event.event_id, event.seq]));
    const finish = stored.filter((event) => event.method === "messages").map((event) => event.params.data["event"]);
    expect(finish).toEqual(["content-block-finish", "message-finish"]);
    const afterTokens = (await readProtocolEvents(server.url, threadId, { channels: ["messages", "lifecycle"], since: chunks.at(-1)?.seq }, { headers: KEY, until: rootEnds(1) })).events;
    const whole = afterTokens.filter((event) => event.method === "messages").map((event) => event.params.data["event"]);
    expect(whole).toEqual(["message-start", "content-block-start", "content-block-delta", "content-block-finish", "message-finish"]);
  });

  it("an interrupt is input.requested; input.respond answers it and the next run greets with the answer", async () => {
    const thread = threadStream("ask");
    await thread.run.start({ input: { messages: [{ role: "user", content: "hi" }] } });
    const first = await readProtocolEvents(server.url, thread.threadId, { channels: ["lifecycle", "input"] }, { headers: KEY, until: rootEnds(1) });
    const requested = first.events.filter((event) => event.method === "input.requested");
    expect(requested.length).toBe(1);
    expect(requested[0]?.params.data["payload"]).toEqual({ question: "what is your name?" });
    expect(first.events.at(-1)?.params.data["event"]).toBe("interrupted");
    const interruptId = String(requested[0]?.params.data["interrupt_id"]);
    await thread.input.respond({ namespace: [], interrupt_id: interruptId, response: "Ada" });
    await thread.close();
    const lastSeq = first.events.at(-1)?.seq as number;
    const second = await readProtocolEvents(server.url, thread.threadId, { channels: ["lifecycle", "values", "input"], since: lastSeq }, { headers: KEY, until: rootEnds(1) });
    const answered = second.events.filter((event) => event.method === "input.answered");
    expect(answered.map((event) => event.params.data["interrupt_ids"])).toEqual([[interruptId]]);
    const last = second.events.filter((event) => event.method === "values").at(-1)?.params.data as { messages: { content: string }[] };
    expect(last.messages.at(-1)?.content).toBe("hello Ada");
    // the whole thread, since its beginning: two runs, the first interrupted, the second completed
    const all = await readProtocolEvents(server.url, thread.threadId, { channels: ["lifecycle"], since: 0 }, { headers: KEY, until: rootEnds(2) });
    expect(all.events.filter((event) => event.params.namespace.length === 0).map((event) => event.params.data["event"])).toEqual(["started", "interrupted", "started", "completed"]);
  });

  it("run.start with forkFrom branches from that checkpoint: two runs' checkpoints descend from the root", async () => {
    const thread = threadStream("tools");
    await thread.run.start({ input: { messages: [{ role: "user", content: "weather?" }] } });
    await thread.values;
    const listed = (await thread.state.listCheckpoints({ limit: 100 })) as { checkpoints: { id: string; step: number }[] };
    const root = listed.checkpoints.find((checkpoint) => checkpoint.step === -1);
    expect(root).toBeDefined();
    await thread.close();
    const forked = threadStream("tools", thread.threadId);
    await forked.run.start({ input: { messages: [{ role: "user", content: "again" }] }, forkFrom: root?.id });
    await forked.values;
    await forked.close();
    const history = await server.runtime.threads.history(thread.threadId, { limit: 100 });
    const children = history.filter((snapshot) => snapshot.parentConfig?.configurable?.["checkpoint_id"] === root?.id);
    expect(children.length).toBe(2);
  });

  it("subgraph namespaces: a subgraph's events carry its namespace, started in lifecycle; depth 0 keeps only the root's", async () => {
    const threadId = randomUUID();
    const started = await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "nested", input: { messages: [] } } }, KEY);
    expect(started.body["type"]).toBe("success");
    const deep = await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "custom"] }, { headers: KEY, until: rootEnds(1) });
    const inner = deep.events.filter((event) => event.params.namespace.length === 1);
    // started when first seen, completed after its parent reported the task's result
    expect(inner.map((event) => [event.method, event.params.data["event"] ?? null])).toEqual([
      ["lifecycle", "started"],
      ["custom", null],
      ["lifecycle", "completed"],
    ]);
    expect(inner[0]?.params.namespace[0]).toMatch(/^outer:/);
    expect(inner[1]?.params.data["payload"]).toEqual({ step: "inner ran" });
    const shallow = await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "custom"], namespaces: [[]], depth: 0 }, { headers: KEY, until: rootEnds(1) });
    expect(shallow.events.every((event) => event.params.namespace.length === 0)).toBe(true);
    expect(shallow.events.filter((event) => event.method === "custom").map((event) => event.params.data["payload"])).toEqual([{ step: "after ran" }]);
  });

  it("over a WebSocket: subscribe, run.start and the events in order; a frame that is not JSON is answered with an error and the subscription lives on", async () => {
    const threadId = randomUUID();
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/threads/${threadId}/stream/events`, { headers: KEY });
    const frames: Record<string, unknown>[] = [];
    socket.on("message", (data) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>));
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.send(JSON.stringify({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle", "values"] } }));
    socket.send("this is not json");
    socket.send(JSON.stringify({ id: 2, method: "run.start", params: { assistant_id: "tools", input: { messages: [] } } }));
    const deadline = Date.now() + 30_000;
    // the root's end (a node's namespace completes too: the root's has no namespace)
    const rootDone = (frame: Record<string, unknown>): boolean => frame["method"] === "lifecycle" && (frame["params"] as { namespace: string[]; data: { event: string } }).namespace.length === 0 && (frame["params"] as { data: { event: string } }).data.event === "completed";
    while (!frames.some(rootDone) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    socket.close();
    expect(frames.find((frame) => frame["id"] === null)).toMatchObject({ type: "error", error: "invalid_argument" });
    expect(frames.find((frame) => frame["id"] === 1)).toMatchObject({ type: "success", result: { subscription_id: expect.any(String) } });
    expect(frames.find((frame) => frame["id"] === 2)).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    const events = frames.filter((frame) => frame["type"] === "event");
    expect(events.filter((frame) => frame["method"] === "values").length).toBeGreaterThan(0);
    expect(events.at(-1)).toMatchObject({ method: "lifecycle", params: { namespace: [], data: { event: "completed" } } });
  });

  it("the SDK's WebSocket transport drives a run unchanged", async () => {
    const transport = new ProtocolWebSocketTransportAdapter({ apiUrl: server.url, threadId: randomUUID(), webSocketFactory: (url) => new WebSocket(url, { headers: KEY }) as never });
    const thread = new ThreadStream(transport, { assistantId: "tools" });
    await thread.run.start({ input: { messages: [{ role: "user", content: "weather?" }] } });
    const final = (await thread.values) as { messages: { content: string }[] };
    expect(final.messages.at(-1)?.content).toBe("Done.");
    await thread.close();
  });

  it("bad input is refused naming the problem, the protocol's error shape, and nothing is stored", async () => {
    const threadId = randomUUID();
    const unknownMethod = await sendCommand(server.url, threadId, { id: 1, method: "run.launch", params: {} }, KEY);
    expect(unknownMethod.body).toMatchObject({ type: "error", id: 1, error: "unknown_command", message: expect.stringContaining("run.launch") });
    const wrongId = await sendCommand(server.url, threadId, { id: "one", method: "run.start", params: {} }, KEY);
    expect(wrongId.body).toMatchObject({ type: "error", id: null, error: "invalid_argument", message: expect.stringContaining("id") });
    const badParams = await sendCommand(server.url, threadId, { id: 2, method: "run.start", params: { input: {} } }, KEY);
    expect(badParams.body).toMatchObject({ type: "error", id: 2, error: "invalid_argument", message: expect.stringContaining("assistant_id") });
    const notJson = await sendCommand(server.url, threadId, "{not json", KEY);
    expect([notJson.status, notJson.body["error"]]).toEqual([400, "invalid_argument"]);
    const channel = await readProtocolEvents(server.url, threadId, { channels: ["values", "gossip"] }, { headers: KEY });
    expect([channel.status, (channel.error as { message: string }).message]).toEqual([400, expect.stringContaining("gossip")]);
    const beyond = await readProtocolEvents(server.url, threadId, { channels: ["values"], since: 5_000_000_000 }, { headers: KEY });
    expect([beyond.status, (beyond.error as { message: string }).message]).toEqual([400, expect.stringContaining("beyond the end")]);
    const noKey = await sendCommand(server.url, threadId, { id: 3, method: "state.get", params: {} });
    expect(noKey.status).toBe(401);
    const noKeyEvents = await readProtocolEvents(server.url, threadId, { channels: ["values"] });
    expect(noKeyEvents.status).toBe(401);
    // nothing of the thread was created
    await expect(server.runtime.threads.get(threadId)).rejects.toThrow();
    expect(await server.runtime.runs.list({ threadId })).toEqual([]);
  });
});
