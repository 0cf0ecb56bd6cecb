import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Client, type StreamMode } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, itOn, itOnPrimary, openBackend } from "../helpers/databases.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { readSse } from "../helpers/server-sse.js";

type Part = { event: string; data: unknown; id?: string };

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  notes: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

const lookup = tool(async ({ word }: { word: string }) => `found ${word}`, { name: "lookup", description: "Looks a word up.", schema: z.object({ word: z.string() }) });

/** A subgraph whose one node writes a custom part and a note. */
const inner = new StateGraph(State)
  .addNode("inner", (_state: typeof State.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ from: "inner" });
    return { notes: ["inner"] };
  })
  .addEdge(START, "inner")
  .addEdge("inner", END)
  .compile();

/**
 * The test graph, written as the official server's test graphs are: a node asking for a tool
 * call, LangGraph's ToolNode running it, a subgraph, then an interrupt asking for a value.
 */
const toolGraph = new StateGraph(State)
  .addNode("plan", (_state: typeof State.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ from: "plan" });
    return { messages: [new AIMessage({ id: "ai-plan", content: "", tool_calls: [{ id: "call-1", name: "lookup", args: { word: "otter" } }] })] };
  })
  .addNode("tools", new ToolNode([lookup]))
  .addNode("sub", inner)
  .addNode("ask", () => ({ notes: [`answer ${String(interrupt({ question: "keep it?" }))}`] }))
  .addEdge(START, "plan")
  .addEdge("plan", "tools")
  .addEdge("tools", "sub")
  .addEdge("sub", "ask")
  .addEdge("ask", END);

/** A graph with no tool node whose one node invokes a LangChain tool itself. */
const directToolGraph = new StateGraph(State)
  .addNode("look", async (_state: typeof State.State, config: LangGraphRunnableConfig) => {
    const found = await lookup.invoke({ id: "call-d", name: "lookup", args: { word: "heron" }, type: "tool_call" }, config);
    return { messages: [found] };
  })
  .addEdge(START, "look")
  .addEdge("look", END);

/** `event` names in order, with the step or node each part is about (what the assertions read). */
function outline(parts: Part[]): string[] {
  return parts.map(({ event: name, data }) => {
    // `mode|node:task_id|...` names a subgraph's part: shown as `mode|node`
    const [event = name, ...ns] = name.split("|");
    if (ns.length > 0) return `${event}|${ns.map((part) => part.split(":")[0]).join("|")} ${outline([{ event: event as string, data }])[0] as string}`;
    const record = data as Record<string, unknown>;
    if (event === "checkpoints") return `checkpoints ${String((record["metadata"] as { step: number }).step)} -> ${(record["next"] as string[]).join(",")}`;
    if (event === "tasks") return `tasks ${String(record["name"])} ${"input" in record ? "start" : "result"}`;
    if (event === "debug") return `debug ${String(record["type"])} ${String(record["step"])}`;
    if (event === "tools") return `tools ${String(record["event"])} ${String(record["name"])}`;
    if (event === "updates") return `updates ${Object.keys(record).join(",")}`;
    if (event === "custom") return `custom ${JSON.stringify(data)}`;
    return event;
  });
}

describe.each(BACKENDS)("stream modes checkpoints, tasks, debug, tools through the SDK on %s", (backend) => {
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
    const server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, tooling: toolGraph, direct: directToolGraph } });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };

  itOnPrimary(backend)("a user graph's run streams each mode in LangGraph's order and payloads; joinStream and Last-Event-ID replay them identically", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["checkpoints", "tasks", "updates", "tools", "custom"];
    const live = (await collect(client.runs.stream(thread.thread_id, "tooling", { input: { messages: [{ type: "human", content: "go" }] }, streamMode: modes }))) as Part[];
    expect(live[0]?.event).toBe("metadata");
    const parts = live.slice(1);
    expect(outline(parts)).toEqual([
      "checkpoints -1 -> __start__",
      "checkpoints 0 -> plan",
      "tasks plan start",
      'custom {"from":"plan"}',
      "updates plan",
      "tasks plan result",
      "checkpoints 1 -> tools",
      "tasks tools start",
      "tools on_tool_start lookup",
      "tools on_tool_end lookup",
      "updates tools",
      "tasks tools result",
      "checkpoints 2 -> sub",
      "tasks sub start",
      // the subgraph's custom write reaches the parent's stream (its tools parts would not)
      'custom {"from":"inner"}',
      "updates sub",
      "tasks sub result",
      "checkpoints 3 -> ask",
      "tasks ask start",
      "updates __interrupt__",
      "tasks ask result",
    ]);
    const byOutline = (line: string): Record<string, unknown> => parts[outline(parts).indexOf(line)]?.data as Record<string, unknown>;
    // payloads as the official server sends them
    expect(byOutline("checkpoints -1 -> __start__")).toMatchObject({ values: { messages: [], notes: [] }, metadata: { source: "input", step: -1 }, next: ["__start__"], tasks: [{ name: "__start__", interrupts: [] }], checkpoint: { thread_id: thread.thread_id, checkpoint_ns: "" }, parent_checkpoint: null });
    const second = byOutline("checkpoints 0 -> plan");
    expect(second).toMatchObject({ metadata: { source: "loop", step: 0 }, config: { configurable: { thread_id: thread.thread_id, checkpoint_ns: "" } }, values: { messages: [{ type: "human", content: "go" }] } });
    expect((second["parent_checkpoint"] as { checkpoint_id: string }).checkpoint_id).toBe((byOutline("checkpoints -1 -> __start__")["checkpoint"] as { checkpoint_id: string }).checkpoint_id);
    expect(byOutline("tasks plan start")).toEqual({ id: expect.any(String), name: "plan", input: { messages: [expect.objectContaining({ type: "human", content: "go" })], notes: [] }, triggers: ["branch:to:plan"], interrupts: [] });
    expect(byOutline("tasks plan result")).toMatchObject({ name: "plan", result: { messages: [expect.objectContaining({ type: "ai", id: "ai-plan" })] }, interrupts: [], error: null });
    expect(byOutline("tasks plan result")["id"]).toBe(byOutline("tasks plan start")["id"]);
    // the input as LangChain hands it to tool callbacks: the arguments' JSON text
    expect(byOutline("tools on_tool_start lookup")).toEqual({ event: "on_tool_start", toolCallId: "call-1", name: "lookup", input: JSON.stringify({ word: "otter" }) });
    expect(byOutline("tools on_tool_end lookup")).toMatchObject({ event: "on_tool_end", toolCallId: "call-1", name: "lookup", output: { type: "tool", content: "found otter", tool_call_id: "call-1" } });
    expect(byOutline("checkpoints 2 -> sub")["tasks"]).toEqual([expect.objectContaining({ name: "sub", checkpoint: expect.objectContaining({ checkpoint_ns: expect.stringMatching(/^sub:/) }) })]);
    const asked = byOutline("tasks ask result");
    expect(asked).toMatchObject({ name: "ask", result: {}, error: null, interrupts: [{ id: expect.any(String), value: { question: "keep it?" } }] });
    // numbered as the official server numbers them: 0 the metadata, then 1, 2, …
    expect(live.map((part) => part.id)).toEqual(live.map((_, index) => String(index)));

    // joinStream from the start, and from every Last-Event-ID, gives the same parts
    const [run] = await client.runs.list(thread.thread_id);
    const joined = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes }))) as Part[];
    expect(joined.slice(1)).toEqual(parts);
    for (const cut of [1, 6, 9, 14, parts.length - 1]) {
      // after part N: the parts after it (the client has the metadata part, "0")
      const rest = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes, lastEventId: parts[cut - 1]?.id as string }))) as Part[];
      expect(rest).toEqual(parts.slice(cut));
    }

    // the resume is a new run (LangGraph Platform's): it streams the checkpoint it starts from and
    // the resumed task's start, then the task's update and result and the last checkpoint
    const resumed = (await collect(client.runs.stream(thread.thread_id, "tooling", { command: { resume: "yes" }, streamMode: modes }))) as Part[];
    expect((resumed[0]?.data as { run_id?: string }).run_id).not.toBe(run?.run_id);
    expect(outline(resumed.slice(1))).toEqual(["checkpoints 3 -> ask", "tasks ask start", "updates ask", "tasks ask result", "checkpoints 4 -> "]);
    expect(resumed[4]?.data).toMatchObject({ name: "ask", result: { notes: ["answer yes"] }, interrupts: [] });
  });

  itOnPrimary(backend)("stream_subgraphs: a subgraph's parts named mode|node:task_id between its task's start and result; replayed after any Last-Event-ID", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["values", "updates", "checkpoints", "tasks", "custom"];
    const live = ((await collect(client.runs.stream(thread.thread_id, "tooling", { input: { messages: [] }, streamMode: modes, streamSubgraphs: true }))) as Part[]).slice(1);
    const lines = outline(live).filter((line) => !line.startsWith("values"));
    const subStart = lines.indexOf("tasks sub start");
    expect(lines.slice(subStart, lines.indexOf("tasks sub result") + 1)).toEqual([
      "tasks sub start",
      "checkpoints|sub checkpoints -1 -> __start__",
      "checkpoints|sub checkpoints 0 -> inner",
      "tasks|sub tasks inner start",
      'custom|sub custom {"from":"inner"}',
      "updates|sub updates inner",
      "tasks|sub tasks inner result",
      "checkpoints|sub checkpoints 1 -> ",
      "updates sub",
      "tasks sub result",
    ]);
    // every other part is the parent's, as without stream_subgraphs
    expect(lines.filter((line) => line.includes("|")).length).toBe(7);
    const subValues = live.filter((part) => part.event.startsWith("values|sub:"));
    expect(subValues.map((part) => part.data)).toEqual([{ messages: [expect.objectContaining({ type: "ai" }), expect.objectContaining({ type: "tool" })], notes: [] }, { messages: [expect.objectContaining({ type: "ai" }), expect.objectContaining({ type: "tool" })], notes: ["inner"] }]);
    const ns = (live.find((part) => part.event.startsWith("tasks|"))?.event as string).split("|")[1] as string;
    const subTask = live.find((part) => part.event === "tasks" && (part.data as { name: string }).name === "sub" && "input" in (part.data as object))?.data as { id: string };
    expect(ns).toBe(`sub:${subTask.id}`);

    // the Location the SDK reconnects to keeps stream_subgraphs; every Last-Event-ID continues exactly
    const [run] = await client.runs.list(thread.thread_id);
    const join = `${server.url}/threads/${thread.thread_id}/runs/${run?.run_id as string}/stream?${modes.map((mode) => `stream_mode=${mode}`).join("&")}&stream_subgraphs=true`;
    // from the start: the metadata part, then the rest; after an id: the parts after it
    const replay = async (lastEventId?: string): Promise<Part[]> => (await readSse(await fetch(join, { headers: { "x-api-key": TEST_KEYS.alice, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) } }))).slice(lastEventId === undefined ? 1 : 0);
    expect(await replay()).toEqual(live);
    for (let cut = 1; cut < live.length; cut += 3) expect(await replay(live[cut - 1]?.id)).toEqual(live.slice(cut));
    // runs.create and runs.wait have no stream to send subgraph parts on: refused naming it
    const created = await fetch(`${server.url}/threads/${thread.thread_id}/runs/wait`, { method: "POST", headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" }, body: JSON.stringify({ assistant_id: "tooling", input: {}, stream_subgraphs: true }) });
    expect(created.status).toBe(422);
    expect(await created.text()).toContain("stream_subgraphs");
  });

  itOnPrimary(backend)("debug wraps checkpoints, task starts and results with step, type and timestamp; unknown modes are 422 naming them", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const debug = (await collect(client.runs.stream(thread.thread_id, "tooling", { input: { messages: [] }, streamMode: ["debug", "tasks"] }))) as Part[];
    const lines = outline(debug.slice(1));
    expect(lines.filter((line) => line.startsWith("debug"))).toEqual([
      "debug checkpoint -1",
      "debug checkpoint 0",
      "debug task 1",
      "debug task_result 1",
      "debug checkpoint 1",
      "debug task 2",
      "debug task_result 2",
      "debug checkpoint 2",
      "debug task 3",
      "debug task_result 3",
      "debug checkpoint 3",
      "debug task 4",
      "debug task_result 4",
    ]);
    // each tasks part is followed by its debug copy
    for (const [index, part] of debug.entries()) {
      if (part.event !== "tasks") continue;
      expect(debug[index + 1]).toMatchObject({ event: "debug", data: { payload: part.data } });
    }
    const first = debug.find((part) => part.event === "debug")?.data as { timestamp: string; payload: Record<string, unknown> };
    expect(Number.isNaN(Date.parse(first.timestamp))).toBe(false);
    expect(first.payload).toMatchObject({ metadata: { source: "input" }, next: ["__start__"], checkpoint: { thread_id: thread.thread_id } });

    for (const [mode, text] of [["lifecycle", "lifecycle"], ["nope", "nope"]] as const) {
      const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/stream`, { method: "POST", headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" }, body: JSON.stringify({ assistant_id: "tooling", input: {}, stream_mode: ["values", mode] }) });
      expect(response.status).toBe(422);
      // the official server's form of a refusal: the message as plain text
      expect(await response.text()).toMatch(new RegExp(`^unknown stream_mode "${text}"`));
    }
    const [run] = await client.runs.list(thread.thread_id);
    // a run created without the events mode recorded no LangChain events: joining it for them is refused
    const join = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run?.run_id as string}/stream?stream_mode=events`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(join.status).toBe(422);
    expect(await join.text()).toContain("events");
    // the refused requests started nothing
    expect((await client.runs.list(thread.thread_id)).length).toBe(1);
  });

  // On both engines: the agent's events are merged with its checkpoints by task, as every graph's
  // (the one event sequence), so live and replay are the same parts in the same order.
  it("the built-in agent streams checkpoints, tasks and tools (from its tool-call events), replayed identically", async () => {
    const server = await startTestServer(owner, [{ tool_calls: [{ id: "a1", name: "add", args: { a: 1, b: 2 } }] }, { content: "it is 3" }], { workers: 1 });
    servers.push(server);
    const client = new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice });
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["checkpoints", "tasks", "tools"];
    const live = ((await collect(client.runs.stream(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "add 1 and 2" }] }, streamMode: modes }))) as Part[]).slice(1);
    const lines = outline(live);
    expect(lines[0]).toBe("checkpoints -1 -> __start__");
    expect(lines.filter((line) => line.startsWith("tools"))).toEqual(["tools on_tool_start add", "tools on_tool_end add"]);
    expect(live.find((part) => part.event === "tools")?.data).toEqual({ event: "on_tool_start", toolCallId: "a1", name: "add", input: JSON.stringify({ a: 1, b: 2 }) });
    // every task that started reports its result, after it; the last checkpoint starts none
    const starts = live.filter((part) => part.event === "tasks" && "input" in (part.data as object)).map((part) => (part.data as { id: string }).id);
    const results = live.filter((part) => part.event === "tasks" && "result" in (part.data as object)).map((part) => (part.data as { id: string }).id);
    expect(results).toEqual(starts);
    expect(lines.filter((line) => line.startsWith("tasks")).map((line) => line.split(" ")[1])).toEqual(expect.arrayContaining(["model", "tools"]));
    expect(lines[lines.length - 1]).toMatch(/^checkpoints \d+ -> $/);
    const [run] = await client.runs.list(thread.thread_id);
    expect(((await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes }))) as Part[]).slice(1)).toEqual(live);
  });

  itOnPrimary(backend)("a graph without a tool node whose node invokes a tool: its tool events are recorded for a run created with the tools mode, not for others", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["tasks", "tools"];
    const live = ((await collect(client.runs.stream(thread.thread_id, "direct", { input: { messages: [] }, streamMode: modes }))) as Part[]).slice(1);
    expect(outline(live)).toEqual(["tasks look start", "tools on_tool_start lookup", "tools on_tool_end lookup", "tasks look result"]);
    expect(live.find((part) => part.event === "tools")?.data).toMatchObject({ event: "on_tool_start", toolCallId: "call-d", name: "lookup" });
    const [run] = await client.runs.list(thread.thread_id);
    expect((await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes }))).slice(1)).toEqual(live);
    // created without the mode: this graph runs without LangGraph's tool handler, so a later join has no tool parts
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, "direct", { input: { messages: [] } });
    const [plain] = await client.runs.list(other.thread_id);
    expect(outline(((await collect(client.runs.joinStream(other.thread_id, plain?.run_id as string, { streamMode: modes }))) as Part[]).slice(1))).toEqual(["tasks look start", "tasks look result"]);
  });

  itOn(backend, "postgres")("PostgreSQL smoke: tasks and tools parts of a run, live and replayed", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["tasks", "tools"];
    const live = ((await collect(client.runs.stream(thread.thread_id, "tooling", { input: { messages: [] }, streamMode: modes }))) as Part[]).slice(1);
    expect(outline(live)).toEqual(["tasks plan start", "tasks plan result", "tasks tools start", "tools on_tool_start lookup", "tools on_tool_end lookup", "tasks tools result", "tasks sub start", "tasks sub result", "tasks ask start", "tasks ask result"]);
    const [run] = await client.runs.list(thread.thread_id);
    const joined = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes }))) as Part[];
    expect(joined.slice(1)).toEqual(live);
  });
});
