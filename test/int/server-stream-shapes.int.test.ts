import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { StreamMode } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkServers } from "../helpers/sdk-server.js";
import { collect } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };

const RouteState = Annotation.Root({ ...MessagesAnnotation.spec, route: Annotation<string>() });

/** A subgraph whose one node answers. */
const forecast = new StateGraph(RouteState)
  .addNode("forecast", () => ({ messages: [new AIMessage({ id: "ai-forecast", content: "sunny" })] }))
  .addEdge(START, "forecast")
  .addEdge("forecast", END)
  .compile();

/** As the official tests' `weather` graph: a router, then a subgraph. */
const weather = new StateGraph(RouteState)
  .addNode("router", () => ({ route: "weather" }))
  .addNode("weather_graph", forecast)
  .addEdge(START, "router")
  .addEdge("router", "weather_graph")
  .addEdge("weather_graph", END)
  .compile();

class CustomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustomError";
  }
}

/** As the official tests' `error` graph: its node throws a named error. */
const failing = new StateGraph(MessagesAnnotation)
  .addNode("error_node", async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    throw new CustomError("Boo!");
  })
  .addEdge(START, "error_node")
  .compile();

/** Writes custom parts while it works, then answers, then a node returns a tool message without an id (as the official `agent` graph's tool node). */
const worker = new StateGraph(MessagesAnnotation)
  .addNode("work", async (_state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => {
    for (let step = 0; step < 3; step += 1) {
      config.writer?.({ type: "sleep", step });
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    return { messages: [new AIMessage({ id: "ai-work", content: "done" })] };
  })
  .addNode("tool", () => ({ messages: [new ToolMessage({ content: "tool_call__done", tool_call_id: "tool_call_id" })] }))
  .addEdge(START, "work")
  .addEdge("work", "tool")
  .addEdge("tool", END)
  .compile();

const HUMAN = { messages: [{ type: "human", content: "SF", id: "initial-message" }] };

describe.each(BACKENDS)("LangGraph stream and state shapes as the official server's, through the official SDK on %s", (backend) => {
  const start = sdkServers(backend, { agent: false, weather, failing, worker });

  itOnPrimary(backend)("a stream's parts are numbered 0, 1, … from its metadata {run_id, attempt: 1}; a breakpoint ends it with values {__interrupt__: []}; a subgraph task's checkpoint is LangGraph's", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "weather", { input: HUMAN, interruptBefore: ["weather_graph"] }))) as Part[];
    const human = { type: "human", content: "SF", id: "initial-message", additional_kwargs: {}, response_metadata: {} };
    expect(parts).toEqual([
      { event: "metadata", data: { run_id: expect.any(String), attempt: 1 }, id: "0" },
      { event: "values", data: { messages: [expect.objectContaining(human)] }, id: "1" },
      { event: "values", data: { messages: [expect.objectContaining(human)], route: "weather" }, id: "2" },
      { event: "values", data: { __interrupt__: [] }, id: "3" },
    ]);
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["weather_graph"]);
    expect(state.tasks).toEqual([
      {
        id: expect.any(String),
        name: "weather_graph",
        path: ["__pregel_pull", "weather_graph"],
        error: null,
        interrupts: [],
        checkpoint: { checkpoint_ns: expect.stringMatching(/^weather_graph:/), thread_id: thread.thread_id },
        state: null,
        result: null,
      },
    ]);
    // with `updates` too: the breakpoint's interrupt in both modes, updates first (LangGraph's order)
    const other = await client.threads.create();
    const both = (await collect(client.runs.stream(other.thread_id, "weather", { input: HUMAN, interruptBefore: ["weather_graph"], streamMode: ["updates", "values"] }))) as Part[];
    expect(both.slice(-2)).toEqual([
      { event: "updates", data: { __interrupt__: [] }, id: String(both.length - 2) },
      { event: "values", data: { __interrupt__: [] }, id: String(both.length - 1) },
    ]);
    // a run that is not stopped at a breakpoint ends without it
    const done = (await collect(client.runs.stream(other.thread_id, "weather", { input: null }))) as Part[];
    expect(done.map((part) => part.id)).toEqual(done.map((_, index) => String(index)));
    expect(done.some((part) => JSON.stringify(part.data).includes("__interrupt__"))).toBe(false);
  });

  itOnPrimary(backend)("joinStream without modes streams the run's own (custom parts included); Last-Event-ID -1 replays it all, N the parts after N, with the same ids", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const modes: StreamMode[] = ["values", "custom"];
    const source = (await collect(client.runs.stream(thread.thread_id, "worker", { input: HUMAN, streamMode: modes, streamResumable: true }))) as Part[];
    expect(source.map((part) => part.event)).toEqual(["metadata", "values", "custom", "custom", "custom", "values", "values"]);
    expect(source.map((part) => part.id)).toEqual(source.map((_, index) => String(index)));
    const [run] = await client.runs.list(thread.thread_id);
    const runId = run?.run_id as string;
    // the official server joins with the modes the run was created with
    expect(await collect(client.runs.joinStream(thread.thread_id, runId))).toEqual(source);
    expect(await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" }))).toEqual(source);
    for (const cut of [0, 2, 5]) {
      expect(await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: String(cut) }))).toEqual(source.slice(cut + 1));
    }
    // asked for other modes, the join sends those
    const values = (await collect(client.runs.joinStream(thread.thread_id, runId, { streamMode: ["values"] }))) as Part[];
    expect(values.map((part) => part.event)).toEqual(["metadata", "values", "values", "values"]);
    // a run created (not streamed) keeps its modes too
    const created = await client.runs.create(thread.thread_id, "worker", { input: HUMAN, streamMode: ["custom"] });
    const joined = (await collect(client.runs.joinStream(thread.thread_id, created.run_id))) as Part[];
    expect(joined.map((part) => part.event)).toEqual(["metadata", "custom", "custom", "custom"]);
  });

  itOnPrimary(backend)("the tool message a node returned without an id has, in `updates` and `tasks`, the id the state gave it", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "worker", { input: HUMAN, streamMode: ["updates", "tasks"] }))) as Part[];
    const state = await client.threads.getState<{ messages: { type: string; id?: string }[] }>(thread.thread_id);
    const stored = state.values.messages.find((message) => message.type === "tool");
    expect(stored?.id).toEqual(expect.any(String));
    const update = parts.find((part) => part.event === "updates" && "tool" in (part.data as object))?.data as { tool: { messages: { id?: string }[] } };
    expect(update.tool.messages).toEqual([expect.objectContaining({ type: "tool", content: "tool_call__done", tool_call_id: "tool_call_id", id: stored?.id })]);
    const result = parts.find((part) => part.event === "tasks" && (part.data as { name: string }).name === "tool" && "result" in (part.data as object))?.data as { result: { messages: { id?: string }[] } };
    expect(result.result.messages[0]?.id).toBe(stored?.id);
    // so a thread rebuilt from the updates (the official "batch update state") has the same messages
    const clone = await client.threads.create({ graphId: "worker", supersteps: parts.filter((part) => part.event === "updates").map((part) => ({ updates: Object.entries(part.data as object).map(([asNode, values]) => ({ asNode, values })) })) });
    const cloned = await client.threads.getState<{ messages: unknown[] }>(clone.thread_id);
    expect(cloned.values.messages).toEqual(state.values.messages.slice(1));
  });

  it("a failed graph's stream and joined stream end with {error: its class name, message}; the run records the name", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "failing", { input: { messages: [] }, streamMode: ["debug", "values"] }))) as Part[];
    expect(parts.at(-1)).toEqual({ event: "error", data: { error: "CustomError", message: "Boo!" }, id: String(parts.length - 1) });
    const created = await client.runs.create(thread.thread_id, "failing", { input: { messages: [] } });
    const joined = (await collect(client.runs.joinStream(thread.thread_id, created.run_id))) as Part[];
    expect(joined.at(-1)).toMatchObject({ event: "error", data: { error: "CustomError", message: "Boo!" } });
    const run = (await client.runs.get(thread.thread_id, created.run_id)) as unknown as { status: string; error: unknown };
    expect(run.status).toBe("error");
    expect(run.error).toEqual({ code: "GRAPH_FAILED", message: "CustomError: Boo!", name: "CustomError" });
  });

  itOnPrimary(backend)("a run continued from a checkpoint streams that checkpoint first (debug), its state (values) and the tasks it starts, as LangGraph does", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const checkpointsOf = (parts: Part[]): Record<string, unknown>[] => parts.filter((part) => part.event === "debug" && (part.data as { type: string }).type === "checkpoint").map((part) => (part.data as { payload: Record<string, unknown> }).payload);
    const first = (await collect(client.runs.stream(thread.thread_id, "weather", { input: HUMAN, streamMode: "debug", interruptBefore: ["weather_graph"] }))) as Part[];
    const initial = checkpointsOf(first);
    const history = (await client.threads.getHistory(thread.thread_id)).reverse();
    const checkpoint = history[history.length - 1]?.checkpoint;
    const again = (await collect(client.runs.stream(thread.thread_id, "weather", { streamMode: ["debug", "values", "tasks"], checkpoint: checkpoint as never }))) as Part[];
    const continued = checkpointsOf(again);
    expect(continued[0]?.["checkpoint"]).toEqual(checkpoint);
    const after = (await client.threads.getHistory(thread.thread_id)).reverse();
    const outline = (payload: Record<string, unknown>): unknown => ({ step: (payload["metadata"] as { step: number }).step, checkpoint: payload["checkpoint"], parent_checkpoint: payload["parent_checkpoint"] });
    // the official "continue after interrupt must have checkpoint present"
    expect([...initial, ...continued.slice(1)].map(outline)).toEqual(after.map((state) => outline(state as unknown as Record<string, unknown>)));
    // LangGraph's order: the state it continues, that checkpoint, then the task it starts
    expect(again.slice(1, 4).map((part) => [part.event, (part.data as { type?: string; name?: string }).type ?? (part.data as { name?: string }).name ?? Object.keys(part.data as object).join(",")])).toEqual([
      ["values", "messages,route"],
      ["debug", "checkpoint"],
      ["tasks", "weather_graph"],
    ]);
    expect(again[3]?.data).toMatchObject({ name: "weather_graph", input: { route: "weather" }, triggers: ["branch:to:weather_graph"] });
  });

  itOnPrimary(backend)("history filtered by metadata: a run's checkpoints (its input's included) carry its metadata, assistant_id and graph_id", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "worker", { input: HUMAN });
    await client.runs.wait(thread.thread_id, "worker", { input: { messages: [{ type: "human", content: "bar" }] }, metadata: { run_metadata: "run_metadata" } });
    const full = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    const filtered = await client.threads.getHistory<{ messages: unknown[] }>(thread.thread_id, { metadata: { run_metadata: "run_metadata" } });
    // input (step -1), __start__, work, tool: per run
    expect(full.length).toBe(8);
    expect(filtered.length).toBe(4);
    expect(filtered.at(-1)?.metadata).toMatchObject({ source: "input", run_metadata: "run_metadata" });
    expect(filtered.at(-1)?.values.messages.length).toBe(3);
    const [run] = await client.runs.list(thread.thread_id);
    expect(filtered.every((state) => (state.metadata as { run_id?: string }).run_id === run?.run_id)).toBe(true);
    const assistant = await client.assistants.get("worker");
    expect((await client.threads.getHistory(thread.thread_id, { limit: 50, metadata: { assistant_id: assistant.assistant_id, graph_id: "worker" } })).length).toBe(8);
  });
});
