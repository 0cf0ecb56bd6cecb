/**
 * The protocol's commands and channels beyond a run's own stream: each subgraph's `lifecycle`
 * (started, then completed / interrupted / failed, with its namespace, under the `namespaces` and
 * `depth` filters, at the same positions when read again), `agent.getTree` with every subgraph,
 * `input.inject`, and `subscription.reconnect` on a WebSocket (a subscription restored by its id
 * on another connection, after the last event it got); bad input answered with the protocol's
 * error while the connection lives on and nothing is stored.
 */
import { randomUUID } from "node:crypto";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { chat, deep, subask, subfail, tools } from "../fixtures/protocol/graphs.js";
import { BACKENDS, openBackend } from "../helpers/databases.js";
import { ProtocolSocket } from "../helpers/protocol-socket.js";
import { isRootEnd, readProtocolEvents, rootEnds, sendCommand, type WireEvent } from "../helpers/protocol-sse.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

const KEY = { "x-api-key": TEST_KEYS.alice };
const ALL = ["lifecycle", "values", "updates", "messages", "tools", "checkpoints", "tasks", "input", "custom"];

/** A lifecycle event as `[namespace depth, event]`. */
const phase = (event: WireEvent): [number, unknown] => [event.params.namespace.length, event.params.data["event"]];
const lifecycles = (events: WireEvent[]): WireEvent[] => events.filter((event) => event.method === "lifecycle");

/** `held`: a subgraph `outer` whose node waits until the test lets it go (a run that is running for as long as the test needs). */
function heldGraph(): { graph: unknown; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const waiting = new StateGraph(MessagesAnnotation)
    .addNode("wait", async () => {
      await gate;
      return {};
    })
    .addEdge(START, "wait")
    .addEdge("wait", END)
    .compile();
  return { graph: new StateGraph(MessagesAnnotation).addNode("outer", waiting).addEdge(START, "outer").addEdge("outer", END).compile(), release };
}

describe.each(BACKENDS)("the protocol's commands and subgraph lifecycle on %s", (backend) => {
  let owner: Database;
  let server: TestServer;
  const held = heldGraph();
  beforeAll(async () => {
    owner = await openBackend(backend);
    server = await startTestServer(owner, [], { workers: 2, graphs: { agent: false, tools, deep, subask, subfail, chat, held: held.graph as never } });
  }, 120_000);
  afterAll(async () => {
    held.release();
    await server?.close();
    await owner?.close();
  });

  const start = async (threadId: string, assistantId: string, id = 1): Promise<string> => {
    const started = await sendCommand(server.url, threadId, { id, method: "run.start", params: { assistant_id: assistantId, input: { messages: [{ role: "user", content: "hi" }] } } }, KEY);
    expect(started.body["type"]).toBe("success");
    return (started.body["result"] as { run_id: string }).run_id;
  };

  it("each subgraph's lifecycle: started outermost first, completed after its parent reported the task's result, before the root's end; the namespaces and depth filters apply; read again, the same ids at the same seq", async () => {
    const threadId = randomUUID();
    await start(threadId, "deep");
    const reference = (await readProtocolEvents(server.url, threadId, { channels: ALL }, { headers: KEY, until: rootEnds(1) })).events;
    const phases = lifecycles(reference).map(phase);
    expect(phases).toEqual([
      [0, "started"],
      [1, "started"],
      [2, "started"],
      [2, "completed"],
      [1, "completed"],
      [0, "completed"],
    ]);
    const [outer, inner] = [lifecycles(reference)[1]?.params.namespace as string[], lifecycles(reference)[2]?.params.namespace as string[]];
    expect(outer[0]).toMatch(/^outer:/);
    expect(inner).toEqual([...outer, expect.stringMatching(/^inner:/)]);
    expect(lifecycles(reference).map((event) => event.params.data["graph_name"])).toEqual(["deep", "outer", "inner", "inner", "outer", "deep"]);
    // `outer` ends after the root's update and task result for it, and before the next task starts
    const at = (predicate: (event: WireEvent) => boolean): number => reference.findIndex(predicate);
    const outerEnd = at((event) => event.method === "lifecycle" && event.params.namespace.length === 1 && event.params.data["event"] === "completed");
    const outerResult = at((event) => event.method === "tasks" && event.params.namespace.length === 0 && event.params.data["name"] === "outer" && "result" in event.params.data);
    const outerUpdate = at((event) => event.method === "updates" && event.params.namespace.length === 0 && event.params.node === "outer");
    const afterStarts = at((event) => event.method === "tasks" && event.params.data["name"] === "after" && !("result" in event.params.data));
    expect([outerUpdate < outerResult, outerResult < outerEnd, outerEnd < afterStarts]).toEqual([true, true, true]);
    const seqs = reference.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);

    // under `outer` only: depth 0 keeps its own, depth 1 its child's too, the root's never
    const under = async (depth?: number): Promise<[number, unknown][]> => lifecycles((await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"], namespaces: [outer], ...(depth === undefined ? {} : { depth }), since: 0 }, { headers: KEY, until: (events) => events.filter((event) => event.params.data["event"] === "completed").length >= (depth === 0 ? 1 : 2), limitMs: 15_000 })).events).map(phase);
    expect(await under(0)).toEqual([
      [1, "started"],
      [1, "completed"],
    ]);
    expect(await under(1)).toEqual([
      [1, "started"],
      [2, "started"],
      [2, "completed"],
      [1, "completed"],
    ]);
    const rootOnly = await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"], namespaces: [[]], depth: 0, since: 0 }, { headers: KEY, until: rootEnds(1) });
    expect(rootOnly.events.map(phase)).toEqual([
      [0, "started"],
      [0, "completed"],
    ]);
    // read again (a replay from what is stored), and resumed in the middle: the same events, ids and seqs
    const again = (await readProtocolEvents(server.url, threadId, { channels: ALL, since: 0 }, { headers: KEY, until: rootEnds(1) })).events;
    expect(again.map((event) => [event.event_id, event.seq, event.method])).toEqual(reference.map((event) => [event.event_id, event.seq, event.method]));
    const middle = lifecycles(reference)[2]?.seq as number;
    const resumed = (await readProtocolEvents(server.url, threadId, { channels: ALL, since: middle }, { headers: KEY, until: rootEnds(1) })).events;
    expect(resumed.map((event) => event.event_id)).toEqual(reference.filter((event) => event.seq > middle).map((event) => event.event_id));
  });

  it("a subgraph that stops at an interrupt ends interrupted with the run, resumed it starts and completes; one that throws ends failed before the root's failed", async () => {
    const asked = randomUUID();
    await start(asked, "subask");
    const first = (await readProtocolEvents(server.url, asked, { channels: ["lifecycle", "input"] }, { headers: KEY, until: rootEnds(1) })).events;
    expect(lifecycles(first).map(phase)).toEqual([
      [0, "started"],
      [1, "started"],
      [1, "interrupted"],
      [0, "interrupted"],
    ]);
    const interruptId = String(first.find((event) => event.method === "input.requested")?.params.data["interrupt_id"]);
    const respond = await sendCommand(server.url, asked, { id: 2, method: "input.respond", params: { namespace: [], interrupt_id: interruptId, response: "Ada" } }, KEY);
    expect(respond.body["type"]).toBe("success");
    const second = (await readProtocolEvents(server.url, asked, { channels: ["lifecycle"], since: first.at(-1)?.seq }, { headers: KEY, until: rootEnds(1) })).events;
    // the subgraph's node that answers writes a message: its own namespace starts and completes inside (as LangGraph's protocol stream)
    expect(second.map(phase)).toEqual([
      [0, "started"],
      [1, "started"],
      [2, "started"],
      [2, "completed"],
      [1, "completed"],
      [0, "completed"],
    ]);
    expect(second[1]?.params.namespace).toEqual(lifecycles(first)[1]?.params.namespace);
    // the resumed run answers the interrupt once and never asks it again (its subgraph's stream shows the pause again)
    const resumed = (await readProtocolEvents(server.url, asked, { channels: ["lifecycle", "input", "tasks"], since: first.at(-1)?.seq }, { headers: KEY, until: rootEnds(1) })).events;
    const mentions = (event: { params: { data: unknown } }): boolean => JSON.stringify(event.params.data).includes(interruptId);
    expect(resumed.filter((event) => event.method === "input.answered").map((event) => event.params.data)).toEqual([{ interrupt_ids: [interruptId] }]);
    expect(resumed.filter((event) => event.method !== "input.answered" && mentions(event)).map((event) => event.method)).toEqual([]);
    expect(resumed.some((event) => event.method === "tasks" && (event.params.namespace as string[]).length === 1)).toBe(true);

    const failed = randomUUID();
    await start(failed, "subfail");
    const events = lifecycles((await readProtocolEvents(server.url, failed, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1) })).events);
    expect(events.map(phase)).toEqual([
      [0, "started"],
      [1, "started"],
      [1, "failed"],
      [0, "failed"],
    ]);
    expect(events.at(-1)?.params.data["error"]).toContain("the subgraph failed");
    expect(events[2]?.params.data["error"]).toBeUndefined();
  });

  it("the same lifecycle over a WebSocket subscription with a namespaces filter", async () => {
    const threadId = randomUUID();
    const socket = await ProtocolSocket.open(server.url, threadId, KEY);
    try {
      const all = await socket.command({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle"] } });
      expect(all).toMatchObject({ type: "success", result: { subscription_id: expect.any(String) } });
      await socket.command({ id: 2, method: "run.start", params: { assistant_id: "deep", input: { messages: [] } } });
      expect(await socket.until(() => socket.events().some(isRootEnd))).toBe(true);
      expect(socket.events().map(phase)).toEqual([
        [0, "started"],
        [1, "started"],
        [2, "started"],
        [2, "completed"],
        [1, "completed"],
        [0, "completed"],
      ]);
      const outer = socket.events()[1]?.params.namespace as string[];
      const seen = socket.events().length;
      await socket.command({ id: 3, method: "subscription.subscribe", params: { channels: ["lifecycle"], namespaces: [outer], depth: 0 } });
      // the second subscription starts at the newest run's beginning: outer's two only
      expect(await socket.until(() => socket.events().length >= seen + 2)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(socket.events().slice(seen).map(phase)).toEqual([
        [1, "started"],
        [1, "completed"],
      ]);
    } finally {
      socket.close();
    }
  });

  it("agent.getTree: the root and every subgraph with its status, children by namespace; any run of the thread by run_id; over HTTP and in-band", async () => {
    const threadId = randomUUID();
    const firstRun = await start(threadId, "deep");
    await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1) });
    const tree = await sendCommand(server.url, threadId, { id: 2, method: "agent.getTree", params: {} }, KEY);
    expect(tree.body).toMatchObject({ type: "success", id: 2, meta: { thread_id: threadId } });
    const root = (tree.body["result"] as { tree: Record<string, unknown> }).tree;
    expect(root).toMatchObject({ namespace: [], status: "completed", graph_name: "deep", children: [{ namespace: [expect.stringMatching(/^outer:/)], status: "completed", graph_name: "outer", children: [{ status: "completed", graph_name: "inner" }] }] });
    const outer = (root["children"] as { namespace: string[]; children: { namespace: string[]; children?: unknown }[] }[])[0];
    expect(outer?.children[0]?.namespace).toEqual([...(outer?.namespace ?? []), expect.stringMatching(/^inner:/)]);
    expect(outer?.children[0]?.children).toBeUndefined();

    // a second run (interrupted in its subgraph) is the newest; the first is still asked by id
    await start(threadId, "subask", 3);
    await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1), limitMs: 30_000 });
    const newest = await sendCommand(server.url, threadId, { id: 4, method: "agent.getTree", params: {} }, KEY);
    expect((newest.body["result"] as { tree: unknown }).tree).toMatchObject({ status: "interrupted", graph_name: "subask", children: [{ status: "interrupted", graph_name: "outer" }] });
    const older = await sendCommand(server.url, threadId, { id: 5, method: "agent.getTree", params: { run_id: firstRun } }, KEY);
    expect((older.body["result"] as { tree: unknown }).tree).toEqual(root);
    const socket = await ProtocolSocket.open(server.url, threadId, KEY);
    try {
      expect(await socket.command({ id: 6, method: "agent.getTree", params: { run_id: firstRun } })).toMatchObject({ type: "success", id: 6, result: { tree: root } });
    } finally {
      socket.close();
    }
  });

  it("agent.getTree and a reconnect's current_namespaces while the run runs: the root running, its subgraph started; completed once it ends", async () => {
    const threadId = randomUUID();
    const runId = await start(threadId, "held");
    try {
      const entered = await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: (events) => events.some((event) => event.params.namespace.length === 1) });
      expect(entered.events.map(phase)).toEqual([
        [0, "started"],
        [1, "started"],
      ]);
      const running = await sendCommand(server.url, threadId, { id: 2, method: "agent.getTree", params: {} }, KEY);
      expect((running.body["result"] as { tree: unknown }).tree).toMatchObject({ namespace: [], status: "running", graph_name: "held", children: [{ status: "started", graph_name: "outer" }] });
      const socket = await ProtocolSocket.open(server.url, threadId, KEY);
      try {
        const subscribed = await socket.command({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle"] } });
        const answer = await socket.command({ id: 2, method: "subscription.reconnect", params: { run_id: runId, subscriptions: [(subscribed["result"] as { subscription_id: string }).subscription_id] } });
        expect(answer).toMatchObject({ result: { restored: true, missed_events: 2, current_namespaces: [{ namespace: [], status: "running" }, { status: "started" }] } });
      } finally {
        socket.close();
      }
    } finally {
      held.release();
    }
    await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1) });
    const done = await sendCommand(server.url, threadId, { id: 3, method: "agent.getTree", params: {} }, KEY);
    expect((done.body["result"] as { tree: unknown }).tree).toMatchObject({ status: "completed", children: [{ status: "completed" }] });
  });

  it("agent.getTree's bad input: an unknown run, a run_id that is not a string, a thread that does not exist: the protocol's error, nothing stored", async () => {
    const threadId = randomUUID();
    await start(threadId, "tools");
    await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1) });
    const unknownRun = await sendCommand(server.url, threadId, { id: 1, method: "agent.getTree", params: { run_id: randomUUID() } }, KEY);
    expect(unknownRun.body).toMatchObject({ type: "error", id: 1, error: "no_such_run" });
    const wrongType = await sendCommand(server.url, threadId, { id: 2, method: "agent.getTree", params: { run_id: 7 } }, KEY);
    expect(wrongType.body).toMatchObject({ type: "error", id: 2, error: "invalid_argument", message: expect.stringContaining("run_id") });
    const nowhere = randomUUID();
    const absent = await sendCommand(server.url, nowhere, { id: 3, method: "agent.getTree", params: {} }, KEY);
    expect(absent.body).toMatchObject({ type: "error", id: 3 });
    await expect(server.runtime.threads.get(nowhere)).rejects.toThrow();
    // a thread without a run has no tree yet (the official server: no run bound)
    const empty = (await server.runtime.threads.create()).thread_id;
    const noRun = await sendCommand(server.url, empty, { id: 4, method: "agent.getTree", params: {} }, KEY);
    expect(noRun.body).toMatchObject({ type: "error", id: 4, error: "no_such_run" });
    expect((await server.runtime.runs.list({ threadId })).length).toBe(1);
    expect(await server.runtime.runs.list({ threadId: empty })).toEqual([]);
  });

  it("input.inject: a run with the message, queued behind the active one; a subgraph namespace is not_supported and stores nothing", async () => {
    const threadId = randomUUID();
    await start(threadId, "tools");
    const injected = await sendCommand(server.url, threadId, { id: 2, method: "input.inject", params: { namespace: [], message: { role: "user", content: "and tomorrow?" } } }, KEY);
    expect(injected.body).toMatchObject({ type: "success", id: 2, result: { run_id: expect.any(String) } });
    const run = await server.runtime.runs.get((injected.body["result"] as { run_id: string }).run_id);
    expect(run.input).toEqual({ messages: [{ role: "user", content: "and tomorrow?" }] });
    const events = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "values"], since: 0 }, { headers: KEY, until: rootEnds(2) })).events;
    const last = events.filter((event) => event.method === "values").at(-1)?.params.data as { messages: { content: string }[] };
    expect(last.messages.map((message) => message.content)).toContain("and tomorrow?");
    const deeper = await sendCommand(server.url, threadId, { id: 3, method: "input.inject", params: { namespace: ["tools:1"], message: { role: "user", content: "x" } } }, KEY);
    expect(deeper.body).toMatchObject({ type: "error", id: 3, error: "not_supported" });
    const badRole = await sendCommand(server.url, threadId, { id: 4, method: "input.inject", params: { namespace: [], message: { role: "robot", content: "x" } } }, KEY);
    expect(badRole.body).toMatchObject({ type: "error", id: 4, error: "invalid_argument", message: expect.stringContaining("role") });
    expect((await server.runtime.runs.list({ threadId })).length).toBe(2);
  });

  it("subscription.reconnect on another connection: the subscription restored by its id after the last event it got, none missed or twice, the answer counts them; then it follows the next run", async () => {
    const threadId = randomUUID();
    await start(threadId, "tools");
    const secondRun = await start(threadId, "deep", 2);
    const channels = ["lifecycle", "values", "updates", "tasks"];
    const reference = (await readProtocolEvents(server.url, threadId, { channels, since: 0 }, { headers: KEY, until: rootEnds(2) })).events;
    const first = await ProtocolSocket.open(server.url, threadId, KEY);
    const subscribed = await first.command({ id: 1, method: "subscription.subscribe", params: { channels, since: 0 } });
    const subscriptionId = (subscribed["result"] as { subscription_id: string }).subscription_id;
    const half = Math.floor(reference.length / 2);
    expect(await first.until(() => first.events().length >= half)).toBe(true);
    first.close();
    const before = first.events().slice(0, half);
    const lastSeen = before.at(-1) as WireEvent;

    const second = await ProtocolSocket.open(server.url, threadId, KEY);
    try {
      const answer = await second.command({ id: 1, method: "subscription.reconnect", params: { run_id: secondRun, last_event_id: lastSeen.event_id, subscriptions: [subscriptionId] } });
      const rest = reference.length - half;
      expect(answer).toMatchObject({ type: "success", id: 1, result: { restored: true, missed_events: rest } });
      const current = (answer["result"] as { current_namespaces: { namespace: string[]; status: string }[] }).current_namespaces;
      expect(current.map((entry) => [entry.namespace.length, entry.status])).toEqual([
        [0, "completed"],
        [1, "completed"],
        [2, "completed"],
      ]);
      expect(await second.until(() => second.events().length >= rest)).toBe(true);
      const got = [...before, ...second.events()].map((event) => event.event_id);
      expect(got.slice(0, reference.length)).toEqual(reference.map((event) => event.event_id));
      // it follows the thread: a third run's events come on the restored subscription
      const third = await second.command({ id: 2, method: "run.start", params: { assistant_id: "tools", input: { messages: [] } } });
      const thirdRun = (third["result"] as { run_id: string }).run_id;
      expect(await second.until(() => second.events().some((event) => isRootEnd(event) && event.event_id.startsWith(thirdRun)))).toBe(true);
      const tail = second.events().filter((event) => event.event_id.startsWith(thirdRun));
      expect([tail[0]?.params.data["event"], tail.at(-1)?.params.data["event"]]).toEqual(["started", "completed"]);
      expect(new Set(second.events().map((event) => event.event_id)).size).toBe(second.events().length);

      // without last_event_id it resumes at the start of run_id; a bare seq works as last_event_id
      const third2 = await ProtocolSocket.open(server.url, threadId, KEY);
      try {
        const fromRun = await third2.command({ id: 1, method: "subscription.reconnect", params: { run_id: secondRun, subscriptions: [subscriptionId] } });
        const secondRunEvents = reference.filter((event) => event.event_id.startsWith(secondRun));
        expect((fromRun["result"] as { missed_events: number }).missed_events).toBe(secondRunEvents.length + tail.length);
        expect(await third2.until(() => third2.events().length >= secondRunEvents.length)).toBe(true);
        expect(third2.events().slice(0, secondRunEvents.length).map((event) => event.event_id)).toEqual(secondRunEvents.map((event) => event.event_id));
        const bySeq = await third2.command({ id: 2, method: "subscription.reconnect", params: { run_id: secondRun, last_event_id: String(lastSeen.seq), subscriptions: [subscriptionId] } });
        expect(bySeq).toMatchObject({ type: "success", result: { restored: true, missed_events: rest + tail.length } });
      } finally {
        third2.close();
      }
    } finally {
      second.close();
    }
  });

  it("subscription.reconnect after a live token's event_id: the message comes whole after it, as with since", async () => {
    const threadId = randomUUID();
    const runId = await start(threadId, "chat");
    const seen = (await readProtocolEvents(server.url, threadId, { channels: ["messages", "lifecycle"] }, { headers: KEY, until: rootEnds(1) })).events;
    const chunk = seen.filter((event) => event.event_id.includes(":live:")).at(-1);
    expect(chunk).toBeDefined();
    const socket = await ProtocolSocket.open(server.url, threadId, KEY);
    try {
      const subscribed = await socket.command({ id: 1, method: "subscription.subscribe", params: { channels: ["messages", "lifecycle"] } });
      expect(await socket.until(() => socket.events().some(isRootEnd))).toBe(true);
      const before = socket.events().length;
      const answer = await socket.command({ id: 2, method: "subscription.reconnect", params: { run_id: runId, last_event_id: chunk?.event_id, subscriptions: [(subscribed["result"] as { subscription_id: string }).subscription_id] } });
      const whole = ["message-start", "content-block-start", "content-block-delta", "content-block-finish", "message-finish"];
      // the message whole, its node's namespace completed, then the root's
      expect(answer).toMatchObject({ result: { restored: true, missed_events: whole.length + 2 } });
      expect(await socket.until(() => socket.events().slice(before).some(isRootEnd))).toBe(true);
      expect(socket.events().slice(before).map((event) => String(event.params.data["event"]))).toEqual([...whole, "completed", "completed"]);
      expect(socket.events().slice(before).map((event) => event.params.namespace.length)).toEqual([...whole.map(() => 1), 1, 0]);
    } finally {
      socket.close();
    }
  });

  it("subscription.reconnect's bad input: an unknown subscription id, a wrong id type, params off the schema, an unknown run or event: the protocol's error, the connection and its subscription live on, nothing stored", async () => {
    const threadId = randomUUID();
    const runId = await start(threadId, "tools");
    // the run's lifecycle: the root's and each node's that wrote a message
    const runLifecycle = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: KEY, until: rootEnds(1) })).events;
    expect(runLifecycle.filter((event) => event.params.namespace.length === 0).map((event) => event.params.data["event"])).toEqual(["started", "completed"]);
    const socket = await ProtocolSocket.open(server.url, threadId, KEY);
    try {
      const subscribed = await socket.command({ id: 1, method: "subscription.subscribe", params: { channels: ["lifecycle"] } });
      const subscriptionId = (subscribed["result"] as { subscription_id: string }).subscription_id;
      expect(await socket.until(() => socket.events().some(isRootEnd))).toBe(true);
      const cases: [Record<string, unknown>, string, string][] = [
        [{ run_id: runId, subscriptions: ["sub-1"] }, "no_such_subscription", "sub-1"],
        [{ run_id: runId, subscriptions: [`sub.${Buffer.from("{}").toString("base64url")}`] }, "no_such_subscription", "sub."],
        [{ run_id: runId, subscriptions: [subscriptionId, "nope"] }, "no_such_subscription", "nope"],
        [{ run_id: 42, subscriptions: [subscriptionId] }, "invalid_argument", "run_id"],
        [{ subscriptions: [subscriptionId] }, "invalid_argument", "run_id"],
        [{ run_id: runId, subscriptions: "all" }, "invalid_argument", "subscriptions"],
        [{ run_id: randomUUID(), subscriptions: [subscriptionId] }, "no_such_run", "no run"],
        [{ run_id: runId, last_event_id: "somewhere", subscriptions: [subscriptionId] }, "invalid_argument", "last_event_id"],
        [{ run_id: runId, last_event_id: `${randomUUID()}:3:0`, subscriptions: [subscriptionId] }, "invalid_argument", "last_event_id"],
        [{ run_id: runId, last_event_id: "9000000000000", subscriptions: [subscriptionId] }, "invalid_argument", "beyond the end"],
      ];
      for (const [index, [params, error, named]] of cases.entries()) {
        const answer = await socket.command({ id: 10 + index, method: "subscription.reconnect", params });
        expect(answer).toMatchObject({ type: "error", id: 10 + index, error, message: expect.stringContaining(named) });
      }
      expect(await socket.command({ id: "x", method: "subscription.reconnect", params: { run_id: runId } }, true)).toMatchObject({ type: "error", id: null, error: "invalid_argument" });
      // over HTTP there is no subscription to restore: `since` is the SSE transport's resume
      const http = await sendCommand(server.url, threadId, { id: 30, method: "subscription.reconnect", params: { run_id: runId } }, KEY);
      expect(http.body).toMatchObject({ type: "error", id: 30, error: "not_supported" });
      // the connection and its subscription live on: the next run's events come, nothing was replayed twice
      const ended = socket.events().length;
      expect(await socket.command({ id: 40, method: "run.start", params: { assistant_id: "tools", input: { messages: [] } } })).toMatchObject({ type: "success" });
      expect(await socket.until(() => socket.events().filter(isRootEnd).length >= 2)).toBe(true);
      // (the second run of `tools` on this thread writes no message: its root's lifecycle only)
      expect(socket.events().slice(ended).map(phase)).toEqual([
        [0, "started"],
        [0, "completed"],
      ]);
      expect(new Set(socket.events().map((event) => event.event_id)).size).toBe(socket.events().length);
      // a reconnect without ids on this connection restores its open subscription: from the run's start again
      const again = await socket.command({ id: 41, method: "subscription.reconnect", params: { run_id: runId } });
      expect(again).toMatchObject({ type: "success", result: { restored: true, missed_events: runLifecycle.length + 2 } });
      expect((await server.runtime.runs.list({ threadId })).length).toBe(2);
    } finally {
      socket.close();
    }
  });
});
