/**
 * The model and tool metrics count a user graph's own calls (issue 39): a node that calls
 * ChatOpenAI (the real client, against the loopback OpenAI-compatible server, which reports
 * usage), a node that calls LangChain's fake chat model (no usage) and then a tool directly, and
 * a ToolNode. The metrics are read as Prometheus reads them: `GET /metrics` of a real server
 * whose runtime carries the observer `startOperations` builds.
 */
import { Writable } from "node:stream";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createLogger } from "../../src/logger.js";
import { startOperations, type Operations } from "../../src/operations/operations.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { tempWorkspace } from "../helpers/agent.js";
import { PRIMARY_ENGINE, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { OpenAiTestServer, errorReply, textReply } from "../helpers/openai-server.js";

const RUNS = 3;
const MODEL = "gpt-metrics-test";
const USAGE = { prompt_tokens: 13, completion_tokens: 4, total_tokens: 17 };

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), { name: "add", description: "Adds two numbers.", schema: z.object({ a: z.number(), b: z.number() }) });

/** One node asking ChatOpenAI (the loopback server) once. */
function openaiGraph(baseURL: string) {
  const model = new ChatOpenAI({ model: MODEL, apiKey: "sk-test", maxRetries: 0, configuration: { baseURL } });
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile();
}

/** One node asking LangChain's fake chat model (it reports no usage), then calling `add` itself (no ToolNode). */
function fakeGraph() {
  const model = new FakeListChatModel({ responses: ["fine"] });
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", async (state) => {
      const answer = await model.invoke(state.messages);
      const sum = await add.invoke({ a: 2, b: 3 });
      return { messages: [answer, new AIMessage(`sum ${sum}`)] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile();
}

/** A node that asks for an `add` call, then LangGraph's ToolNode runs it. */
function toolNodeGraph() {
  let n = 0;
  return new StateGraph(MessagesAnnotation)
    .addNode("plan", () => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${(n += 1)}`, name: "add", args: { a: 1, b: 2 } }] })] }))
    .addNode("tools", new ToolNode([add]))
    .addEdge(START, "plan")
    .addEdge("plan", "tools")
    .addEdge("tools", END)
    .compile();
}

/** The value of the series `name{labels}` in a Prometheus text exposition (exact label set), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] as string).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe(`a user graph's own model and tool calls in /metrics (${PRIMARY_ENGINE})`, () => {
  const openai = new OpenAiTestServer();
  const workspace = tempWorkspace();
  let owner: Database;
  let drop: () => Promise<void>;
  let operations: Operations;
  let runtime: Runtime;
  let server: RunningServer;

  beforeAll(async () => {
    await openai.start();
    owner = await openBackend(PRIMARY_ENGINE);
    const fresh = await freshMigratedSchema(owner);
    drop = fresh.drop;
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_METRICS_PUBLIC: "true" });
    const logger = createLogger({ level: "warn", destination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
    operations = await startOperations(config, logger);
    const graphs = { agent: false as const, chat: openaiGraph(openai.baseUrl), fake: fakeGraph(), toolnode: toolNodeGraph() };
    runtime = createRuntime({ db: fresh.db, config, graphs, ...(operations.observer === undefined ? {} : { observer: operations.observer }) });
    server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 1, metrics: operations.metrics ?? undefined });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await runtime?.close();
    await operations?.close();
    await drop?.();
    await owner?.close();
    await openai.close();
    workspace.cleanup();
  }, 60_000);

  async function runOf(graph: string) {
    const created = await runtime.runs.create({ assistantId: graph, input: { messages: [{ role: "user", content: "hello" }] }, executeHere: true });
    return runtime.runs.execute(created.run_id);
  }

  it("counts tokens by the model's own name, model-call durations, and tool calls of a plain node and a ToolNode", async () => {
    for (let i = 0; i < RUNS; i += 1) openai.enqueue(textReply(["hi ", "there"], { usage: USAGE }));
    for (let i = 0; i < RUNS; i += 1) {
      expect(await runOf("chat")).toMatchObject({ status: "success", model_rounds: 1, usage: { input_tokens: 13, output_tokens: 4 } });
      expect(await runOf("fake")).toMatchObject({ status: "success", model_rounds: 1, tool_calls: 1, usage: { input_tokens: 0, output_tokens: 0 } });
      expect(await runOf("toolnode")).toMatchObject({ status: "success", tool_calls: 1 });
    }
    // a model call that fails: an error outcome, no tokens
    openai.enqueue(errorReply(400, "bad request"));
    expect(await runOf("chat")).toMatchObject({ status: "error" });
    expect(openai.requests).toHaveLength(RUNS + 1);

    const text = await (await fetch(`${server.url}/metrics`)).text();
    const tokens = (graph: string, model: string, direction: string) => sample(text, "devmind_model_tokens_total", { graph, model, direction });
    expect(tokens("chat", MODEL, "input")).toBe(13 * RUNS);
    expect(tokens("chat", MODEL, "output")).toBe(4 * RUNS);
    expect(tokens("fake", "FakeListChatModel", "input")).toBe(0);
    expect(tokens("fake", "FakeListChatModel", "output")).toBe(0);
    const calls = (graph: string, model: string, outcome: string) => sample(text, "devmind_model_call_duration_seconds_count", { graph, model, outcome });
    expect(calls("chat", MODEL, "success")).toBe(RUNS);
    expect(calls("chat", MODEL, "error")).toBe(1);
    expect(calls("fake", "FakeListChatModel", "success")).toBe(RUNS);
    // a tool called in a plain node (the call tally) and one a ToolNode ran (LangGraph's tools stream): each counted once
    expect(sample(text, "devmind_tool_calls_total", { graph: "fake", tool: "add", outcome: "success" })).toBe(RUNS);
    expect(sample(text, "devmind_tool_calls_total", { graph: "toolnode", tool: "add", outcome: "success" })).toBe(RUNS);
    expect(sample(text, "devmind_tool_call_duration_seconds_count", { graph: "fake", tool: "add", outcome: "success" })).toBe(RUNS);
    expect(sample(text, "devmind_tool_call_duration_seconds_count", { graph: "toolnode", tool: "add", outcome: "success" })).toBe(RUNS);
    // no other model or tool series: nothing labelled with the (unconfigured) agent model, nothing counted twice
    const series = text.split("\n").filter((line) => /^devmind_(model_tokens_total|tool_calls_total|model_call_duration_seconds_count)\{/.test(line));
    expect(series).toHaveLength(4 + 3 + 2);
  }, 120_000);
});
