import type { BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { Client, StreamMode } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import type { Runtime } from "../../src/runtime/runtime.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkServers } from "../helpers/sdk-server.js";
import { collect, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };
type StreamEvent = { event: string; name: string; run_id: string; tags: string[]; metadata: Record<string, unknown>; data: Record<string, unknown> };

const lookup = tool(async ({ word }: { word: string }) => `found ${word}`, { name: "lookup", description: "Looks a word up.", schema: z.object({ word: z.string() }) });

/** The official server's agent test graph, with a scripted chat model: the model asks for a tool, LangGraph's ToolNode runs it, the model answers. */
function chatGraph() {
  const model = new ScriptedChatModel([{ tool_calls: [{ id: "call-1", name: "lookup", args: { word: "otter" } }] }, { content: "an otter is a mammal" }]);
  const bound = model.bindTools([lookup]);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => ({ messages: [(await bound.invoke(state.messages, config)) as BaseMessage] }))
    .addNode("tools", new ToolNode([lookup]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state: typeof MessagesAnnotation.State) => ((state.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END), ["tools", END])
    .addEdge("tools", "agent");
}

/** A graph whose node writes the server's API key and a secret-looking token into its output. */
const leakGraph = new StateGraph(MessagesAnnotation)
  .addNode("leak", () => ({ messages: [{ role: "assistant", content: `the key is ${TEST_KEYS.alice}, the token sk-live1234567890abcdef` }] }))
  .addEdge(START, "leak")
  .addEdge("leak", END);

/** A graph that waits for a value. */
const askGraph = new StateGraph(MessagesAnnotation)
  .addNode("ask", () => ({ messages: [{ role: "user", content: `answer ${String(interrupt("keep it?"))}` }] }))
  .addEdge(START, "ask")
  .addEdge("ask", END);

/** A graph with a subgraph whose node writes a custom part, and a node of its own that writes one. */
const Notes = Annotation.Root({ notes: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }) });
const innerGraph = new StateGraph(Notes)
  .addNode("inner", (_state: typeof Notes.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ from: "inner" });
    return { notes: ["inner"] };
  })
  .addEdge(START, "inner")
  .addEdge("inner", END)
  .compile();
const nestedGraph = new StateGraph(Notes)
  .addNode("outer", (_state: typeof Notes.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ from: "outer" });
    return { notes: ["outer"] };
  })
  .addNode("sub", innerGraph)
  .addEdge(START, "outer")
  .addEdge("outer", "sub")
  .addEdge("sub", END);

const events = (parts: Part[]): StreamEvent[] => parts.filter((part) => part.event === "events").map((part) => part.data as StreamEvent);

/** Each events part as `event name` (what the order assertions read). */
const outline = (parts: Part[]): string[] => events(parts).map((event) => `${event.event} ${event.name}`);

/** The events parts of one round of the chat graph's model node (`stream` token events). */
const modelRound = (tokens: number): string[] => [
  "on_chain_start agent",
  "on_chat_model_start ScriptedChatModel",
  ...Array.from({ length: tokens }, () => "on_chat_model_stream ScriptedChatModel"),
  "on_chat_model_end ScriptedChatModel",
  // the conditional edge after the node
  "on_chain_start RunnableLambda",
  "on_chain_end RunnableLambda",
  "on_chain_end agent",
];

async function storedTypes(runtime: Runtime, runId: string): Promise<string[]> {
  const types: string[] = [];
  for await (const event of runtime.runs.events(runId)) types.push(event.type);
  return types;
}

const INPUT = { messages: [{ type: "human", content: "what is an otter?" }] };

describe.each(BACKENDS)("stream mode events (LangChain stream events v2) through the SDK on %s", (backend) => {
  const servers = sdkServers(backend, { agent: false, chat: () => chatGraph(), ask: askGraph, nested: nestedGraph, leak: leakGraph });
  /** A server with the test graphs, or (with `turns`) the built-in agent on a scripted model, and the SDK client for it. */
  const start = (turns?: ScriptedTurn[]): Promise<{ server: TestServer; client: Client }> => servers(1, turns === undefined ? {} : { turns, graphs: {} });

  it("a user graph's LangChain events in LangChain's order, root start first and root end last; joinStream and every Last-Event-ID replay them; a run without events records none", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["events"];
    const live = (await collect(client.runs.stream(thread.thread_id, "chat", { input: INPUT, streamMode: modes }))) as Part[];
    expect(live[0]?.event).toBe("metadata");
    const runId = (live[0]?.data as { run_id: string }).run_id;
    const parts = live.slice(1);
    expect(parts.every((part) => part.event === "events" && typeof part.id === "string")).toBe(true);
    expect(outline(parts)).toEqual([
      "on_chain_start LangGraph",
      ...modelRound(1),
      "on_chain_start tools",
      "on_tool_start lookup",
      "on_tool_end lookup",
      "on_chain_end tools",
      ...modelRound(4),
      "on_chain_end LangGraph",
    ]);
    const all = events(parts);
    // the root is the run itself (as the official server passes runId), with the run's input
    expect(all[0]).toMatchObject({ run_id: runId, tags: [], data: { input: INPUT }, metadata: { thread_id: thread.thread_id, run_id: runId, graph_id: "chat" } });
    expect(all.at(-1)).toMatchObject({ run_id: runId, data: { output: { messages: [{ type: "human" }, { type: "ai" }, { type: "tool" }, { type: "ai", content: "an otter is a mammal" }] } } });
    // nodes carry LangGraph's metadata; the model's tokens are chunks as message dicts
    const node = all.find((event) => event.event === "on_chain_start" && event.name === "tools");
    expect(node?.metadata).toMatchObject({ langgraph_node: "tools", langgraph_step: 2, thread_id: thread.thread_id });
    const tokens = all.filter((event) => event.event === "on_chat_model_stream").slice(1);
    expect(tokens.map((event) => (event.data["chunk"] as { type: string; content: string }).content).join("")).toBe("an otter is a mammal");
    expect(tokens[0]?.data["chunk"]).toMatchObject({ type: "ai", content: expect.any(String), tool_call_chunks: [] });
    expect(all.find((event) => event.event === "on_tool_end")?.data).toMatchObject({ output: { type: "tool", content: "found otter", tool_call_id: "call-1" } });
    expect(all.filter((event) => event.event === "on_chat_model_end")[1]?.data).toMatchObject({ output: { type: "ai", content: "an otter is a mammal" } });
    // every event of the run is its own LangChain run, started before it ends
    for (const event of all.filter((item) => item.event.endsWith("_end"))) {
      expect(all.findIndex((item) => item.run_id === event.run_id && item.event.endsWith("_start"))).toBeLessThan(all.indexOf(event));
    }

    // joinStream from the start and after every Last-Event-ID sends the same parts
    const joined = (await collect(client.runs.joinStream(thread.thread_id, runId, { streamMode: modes }))) as Part[];
    expect(joined.slice(1)).toEqual(parts);
    for (const cut of [1, 2, 9, parts.length - 1]) {
      // after part N: the parts after it (the metadata part is "0", which the client has)
      const rest = (await collect(client.runs.joinStream(thread.thread_id, runId, { streamMode: modes, lastEventId: parts[cut - 1]?.id as string }))) as Part[];
      expect(rest).toEqual(parts.slice(cut));
    }
    // with other modes the events are the same, between the other modes' parts
    const mixed = (await collect(client.runs.joinStream(thread.thread_id, runId, { streamMode: ["updates", "events"] }))) as Part[];
    expect(events(mixed)).toEqual(all);
    expect(mixed.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object)[0])).toEqual(["agent", "tools", "agent"]);

    // a run that did not ask for events stores none, and its stream cannot send them
    const plainThread = await client.threads.create();
    const plain = await client.runs.wait(plainThread.thread_id, "chat", { input: INPUT });
    expect(plain).toMatchObject({ messages: expect.any(Array) });
    const [plainRun] = await client.runs.list(plainThread.thread_id);
    const types = await storedTypes(server.runtime, plainRun?.run_id as string);
    expect(types).toContain("node.finished");
    expect(types.filter((type) => type.startsWith("events"))).toEqual([]);
    const refused = await fetch(`${server.url}/threads/${plainThread.thread_id}/runs/${plainRun?.run_id as string}/stream?stream_mode=events`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(refused.status).toBe(422);
    // the official server's form of a refusal: the message as plain text
    expect(await refused.text()).toMatch(/^stream_mode "events" is not available for run /);
  });

  itOnPrimary(backend)("runs.create with events records them for joinStream; past limits.maxStreamEvents one marker, and the root's end still last; a resume is a new run that records events when it asks for them; secrets redacted", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const created = await client.runs.create(thread.thread_id, "chat", { input: INPUT, streamMode: ["events"] });
    const joined = ((await collect(client.runs.joinStream(thread.thread_id, created.run_id, { streamMode: ["events"] }))) as Part[]).slice(1);
    expect(outline(joined)[0]).toBe("on_chain_start LangGraph");
    expect(outline(joined).at(-1)).toBe("on_chain_end LangGraph");
    expect(outline(joined)).toContain("on_tool_end lookup");

    // a small cap: the first events, the marker once, then only the root's end
    const capped = await server.runtime.runs.create({ threadId: (await client.threads.create()).thread_id, assistantId: "chat", input: INPUT, limits: { maxStreamEvents: 4 } });
    const parts = ((await collect(client.runs.joinStream(capped.thread_id, capped.run_id, { streamMode: ["events"] }))) as Part[]).slice(1);
    expect(outline(parts)).toEqual([...outline(joined).slice(0, 4), "on_events_truncated devmind", "on_chain_end LangGraph"]);
    expect(events(parts)[4]).toEqual({ event: "on_events_truncated", name: "devmind", run_id: capped.run_id, tags: [], metadata: {}, data: { limit: 4 } });
    expect((await storedTypes(server.runtime, capped.run_id)).filter((type) => type === "events.truncated")).toEqual(["events.truncated"]);
    // stored (and so sent) redacted, as every stored event: no configured key, no secret-looking text
    const leakThread = await client.threads.create();
    const leaked = JSON.stringify(events(((await collect(client.runs.stream(leakThread.thread_id, "leak", { input: { messages: [] }, streamMode: ["events"] }))) as Part[]).slice(1)));
    expect(leaked).toContain("on_chain_end");
    expect(leaked).not.toContain(TEST_KEYS.alice);
    expect(leaked).not.toContain("sk-live1234567890abcdef");
    expect(leaked).toContain("[REDACTED]");

    // the cap is bounded
    await expect(server.runtime.runs.create({ threadId: capped.thread_id, assistantId: "chat", input: INPUT, limits: { maxStreamEvents: 0 } })).rejects.toMatchObject({ code: "RUN_INPUT_INVALID" });

    // a resume is a new run (the Platform's model): it records events when it asks for them, even
    // when the run it resumes did not
    const asking = await client.threads.create();
    await client.runs.wait(asking.thread_id, "ask", { input: { messages: [] } });
    const [waiting] = await client.runs.list(asking.thread_id);
    expect(waiting).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await storedTypes(server.runtime, waiting?.run_id as string)).filter((type) => type.startsWith("events"))).toEqual([]);
    const answered = ((await collect(client.runs.stream(asking.thread_id, "ask", { command: { resume: "yes" }, streamMode: ["values", "events"] }))) as Part[]).slice(1);
    expect(outline(answered)[0]).toBe("on_chain_start LangGraph");
    expect(outline(answered).at(-1)).toBe("on_chain_end LangGraph");
    const [answering] = await client.runs.list(asking.thread_id);
    expect(answering).toMatchObject({ status: "success", resumes_run: waiting?.run_id });
    const recording = await client.threads.create();
    const first = await client.runs.create(recording.thread_id, "ask", { input: { messages: [] }, streamMode: ["events"] });
    await client.runs.join(recording.thread_id, first.run_id);
    const resumed = ((await collect(client.runs.stream(recording.thread_id, "ask", { command: { resume: "yes" }, streamMode: ["events"] }))) as Part[]).slice(1);
    // the resumed attempt's events: its graph again from the start (the Command as input) to its end
    expect(outline(resumed)[0]).toBe("on_chain_start LangGraph");
    expect(outline(resumed)).toContain("on_chain_start ask");
    expect(outline(resumed).at(-1)).toBe("on_chain_end LangGraph");
  });

  itOnPrimary(backend)("recording events leaves the other modes' parts as they are, with a subgraph; stream_subgraphs leaves out on_chain_stream events", async () => {
    const { client } = await start();
    const bare = (parts: Part[]): Part[] => parts.map(({ event, data }) => ({ event, data }));
    const run = async (modes: StreamMode[], subgraphs = false): Promise<Part[]> => {
      const thread = await client.threads.create();
      return ((await collect(client.runs.stream(thread.thread_id, "nested", { input: { notes: [] }, streamMode: modes, streamSubgraphs: subgraphs }))) as Part[]).slice(1);
    };
    const without = await run(["tasks", "custom", "updates"]);
    const withEvents = await run(["tasks", "custom", "updates", "events"]);
    const others = withEvents.filter((part) => part.event !== "events");
    // task ids differ between threads: compare names, kinds and payloads without them
    const shape = (parts: Part[]): unknown[] => bare(parts).map((part) => JSON.parse(JSON.stringify(part).replace(/"id":"[^"]+"/g, '"id":"-"')) as unknown);
    expect(shape(others)).toEqual(shape(without));
    expect(others.map((part) => part.event)).toContain("custom");
    const lines = outline(withEvents);
    expect(lines[0]).toBe("on_chain_start LangGraph");
    expect(lines.at(-1)).toBe("on_chain_end LangGraph");
    // the subgraph's own run and its node are among the events
    expect(lines).toEqual(expect.arrayContaining(["on_chain_start sub", "on_chain_start inner", "on_chain_end inner", "on_chain_end sub"]));
    expect(lines.indexOf("on_chain_start inner")).toBeGreaterThan(lines.indexOf("on_chain_start sub"));
    const nestedStreams = lines.filter((line) => line.startsWith("on_chain_stream")).length;
    const sub = outline(await run(["events"], true));
    expect(sub.filter((line) => line.startsWith("on_chain_stream"))).toEqual([]);
    expect(sub.length).toBe(lines.length - nestedStreams);
  });

  itOnPrimary(backend)("the built-in agent with its scripted model: graph, node and chat model events, replayed identically; not in its custom parts", async () => {
    const { client } = await start([{ tool_calls: [{ id: "a1", name: "add", args: { a: 1, b: 2 } }] }, { content: "it is 3" }]);
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["events", "custom"];
    const live = ((await collect(client.runs.stream(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "add 1 and 2" }] }, streamMode: modes }))) as Part[]).slice(1);
    const lines = outline(live);
    expect(lines[0]).toBe("on_chain_start LangGraph");
    expect(lines.at(-1)).toBe("on_chain_end LangGraph");
    expect(lines.filter((line) => line.startsWith("on_chat_model_start") || line.startsWith("on_chat_model_end"))).toEqual([
      "on_chat_model_start ScriptedChatModel",
      "on_chat_model_end ScriptedChatModel",
      "on_chat_model_start ScriptedChatModel",
      "on_chat_model_end ScriptedChatModel",
    ]);
    expect(lines).toEqual(expect.arrayContaining(["on_chain_start model", "on_chain_end model", "on_chain_start tools", "on_chain_end tools"]));
    const answer = events(live).filter((event) => event.event === "on_chat_model_stream").map((event) => (event.data["chunk"] as { content: string }).content);
    expect(answer.join("")).toContain("it is 3");
    // the agent's custom parts are the steps its nodes wrote (model rounds, tool calls), never stream events
    const custom = live.filter((part) => part.event === "custom").map((part) => (part.data as { type: string }).type);
    expect(custom).toEqual(["model.started", "model.finished", "tool.call.started", "tool.call.finished", "model.started", "model.finished"]);
    expect(custom.filter((type) => type.startsWith("events"))).toEqual([]);
    // replayed: the same parts with the same ids, and after a live id the rest
    const [run] = await client.runs.list(thread.thread_id);
    expect(((await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes }))) as Part[]).slice(1)).toEqual(live);
    const cut = live.findIndex((part) => part.event === "events" && (part.data as StreamEvent).event === "on_chat_model_start") + 1;
    const rest = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: modes, lastEventId: live[cut - 1]?.id as string }))) as Part[];
    expect(rest).toEqual(live.slice(cut));
  });
});
