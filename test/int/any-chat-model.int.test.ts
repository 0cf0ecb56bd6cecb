/**
 * Any chat model works in the agent and in a user graph (issue 37 item 1): a model with
 * `_generate` only (LangChain's stream falls back to its one whole message), LangChain's own fake
 * chat models, and the real ChatOpenAI against the loopback server with streamed tool-call deltas,
 * a call whole in one delta, and no streaming at all, with usage and without. Every call a model
 * makes runs (lines written N of N), and bad answers (unparsable arguments, an empty stream, a
 * call without an id) are a clear error or a stable id, nothing lost.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { AIMessage, AIMessageChunk, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { FakeListChatModel, FakeStreamingChatModel } from "@langchain/core/utils/testing";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { appendFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { EmptyStreamModel, GenerateOnlyModel, turnsSinceHuman, type GeneratedTurn } from "../helpers/generate-only-model.js";
import { OpenAiTestServer, textReply, toolCallReply, type Reply } from "../helpers/openai-server.js";

let owner: Database;
let db: Database;
let drop: () => Promise<void>;
let workspace: { dir: string; cleanup: () => void };
const runtimes: Runtime[] = [];
const server = new OpenAiTestServer();

beforeAll(async () => {
  owner = await openBackend("pglite");
  ({ db, drop } = await freshMigratedSchema(owner));
  await server.start();
});
afterAll(async () => {
  await server.close();
  await drop();
  await owner.close();
});
beforeEach(() => {
  workspace = tempWorkspace();
  server.reset();
});
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  workspace.cleanup();
});

function agentWith(model: BaseChatModel, env: Record<string, string> = {}): Runtime {
  const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_MAX_MODEL_ROUNDS: "12", DEVMIND_MAX_TOOL_CALLS: "12", ...env });
  const runtime = createRuntime({ db, model, config });
  runtimes.push(runtime);
  return runtime;
}

async function runAgent(runtime: Runtime, task: string, threadId?: string) {
  const created = await runtime.runs.create({ input: { messages: [task] }, ...(threadId === undefined ? {} : { threadId }) });
  return runtime.runs.execute(created.run_id);
}

const linesOf = (file: string): string[] => readFileSync(join(workspace.dir, file), "utf8").split("\n").filter((line) => line !== "");

async function toolMessages(runtime: Runtime, threadId: string): Promise<ToolMessage[]> {
  const state = (await runtime.threads.state(threadId)) as { values: { messages: BaseMessage[] } };
  return state.values.messages.filter((message): message is ToolMessage => message.getType() === "tool");
}

/** One `append_file` call per turn until `turns` of this task ran, then the answer "done". */
const appendTurns = (turns: number, file: string, ids: boolean) => (messages: BaseMessage[]): GeneratedTurn => {
  const done = turnsSinceHuman(messages);
  if (done >= turns) return { content: "done", usage: { input_tokens: 5, output_tokens: 1 } };
  const task = messages.filter((message) => message.getType() === "human").length;
  return { tool_calls: [{ ...(ids ? { id: `t${task}_c${done}` } : {}), name: "append_file", args: { path: file, content: `task ${task} line ${done + 1}\n` } }] };
};

describe("the agent with a model that implements _generate only", () => {
  it("runs every call: 3 runs of 10 turns write 30 lines of 30", async () => {
    const model = new GenerateOnlyModel(appendTurns(10, "log.txt", true));
    const runtime = agentWith(model);
    const thread = `gen-${Date.now()}`;
    for (let task = 0; task < 3; task += 1) {
      const run = await runAgent(runtime, `append ten lines (${task})`, thread);
      expect(run).toMatchObject({ status: "success", stop_reason: "completed", answer: "done", model_rounds: 11, tool_calls: 10, usage: { input_tokens: 5, output_tokens: 1 } });
    }
    expect(model.calls.count).toBe(33);
    const lines = linesOf("log.txt");
    expect(lines).toHaveLength(30);
    expect(lines.slice(0, 2)).toEqual(["task 1 line 1", "task 1 line 2"]);
    expect(lines.at(-1)).toBe("task 3 line 10");
    const answers = await toolMessages(runtime, thread);
    expect(answers.map((message) => message.tool_call_id).slice(0, 3)).toEqual(["t1_c0", "t1_c1", "t1_c2"]);
    expect(answers.every((message) => JSON.parse(message.content as string).ok === true)).toBe(true);
  });

  it("a call without an id gets a stable one of its answer, and runs once", async () => {
    const model = new GenerateOnlyModel(appendTurns(3, "ids.txt", false));
    const runtime = agentWith(model);
    const run = await runAgent(runtime, "append three lines");
    expect(run).toMatchObject({ status: "success", tool_calls: 3 });
    expect(linesOf("ids.txt")).toEqual(["task 1 line 1", "task 1 line 2", "task 1 line 3"]);
    const ids = (await toolMessages(runtime, run.thread_id)).map((message) => message.tool_call_id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{16}_0$/);
  });

  it("unparsable arguments reach the model as INVALID_ARGUMENTS; nothing is written and the run goes on", async () => {
    let round = 0;
    const model = new GenerateOnlyModel(() => {
      round += 1;
      if (round === 1) return { invalid_tool_calls: [{ type: "invalid_tool_call", id: "bad1", name: "append_file", args: '{"path": "x.txt", content: oops}', error: "not JSON" }] };
      return { content: "gave up" };
    });
    const runtime = agentWith(model);
    const run = await runAgent(runtime, "append badly");
    expect(run).toMatchObject({ status: "success", stop_reason: "completed", answer: "gave up", model_rounds: 2, tool_calls: 0 });
    const [answer] = await toolMessages(runtime, run.thread_id);
    expect(answer?.tool_call_id).toBe("bad1");
    expect(JSON.parse(answer?.content as string)).toMatchObject({ ok: false, tool: "append_file", error: { code: "INVALID_ARGUMENTS" } });
    expect(() => readFileSync(join(workspace.dir, "x.txt"))).toThrow();
  });

  it("an empty stream is a model error that says so", async () => {
    const runtime = agentWith(new EmptyStreamModel({}));
    const run = await runAgent(runtime, "anything");
    expect(run).toMatchObject({ status: "error", stop_reason: "model_failed", error: { code: "MODEL_FAILED" } });
    expect(run.error?.message).toContain("empty stream");
  });
});

describe("the agent with LangChain's own fake chat models", () => {
  it("FakeListChatModel: streamed text, answered in order", async () => {
    const runtime = agentWith(new FakeListChatModel({ responses: ["first answer", "second answer"] }));
    expect(await runAgent(runtime, "one")).toMatchObject({ status: "success", answer: "first answer", model_rounds: 1 });
    expect(await runAgent(runtime, "two")).toMatchObject({ status: "success", answer: "second answer", model_rounds: 1 });
  });

  it("FakeStreamingChatModel: whole calls in a streamed chunk, without ids, each round's run", async () => {
    // it streams the same chunk every time: one id-less append_file call per round, until the round limit
    const chunk = new AIMessageChunk({ content: "", tool_calls: [{ name: "append_file", args: { path: "fake.txt", content: "again\n" }, type: "tool_call" }] });
    const runtime = agentWith(new FakeStreamingChatModel({ chunks: [chunk], sleep: 0 }), { DEVMIND_MAX_MODEL_ROUNDS: "4" });
    const run = await runAgent(runtime, "append until stopped");
    expect(run).toMatchObject({ status: "error", stop_reason: "max_model_rounds", model_rounds: 4, tool_calls: 4 });
    expect(linesOf("fake.txt")).toEqual(["again", "again", "again", "again"]);
  });
});

describe("the agent with the real ChatOpenAI against the loopback server", () => {
  const openai = (env: Record<string, string> = {}) => createChatModel(loadConfig({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "test-model", DEVMIND_MODEL_MAX_RETRIES: "0", ...env }));
  const append = (id: string, line: string, parts: number, usage = true): Reply => {
    const json = JSON.stringify({ path: "wire.txt", content: `${line}\n` });
    const size = Math.ceil(json.length / parts);
    return toolCallReply(
      [{ id, name: "append_file", argumentParts: Array.from({ length: parts }, (_, i) => json.slice(i * size, (i + 1) * size)) }],
      usage ? { usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } } : {},
    );
  };

  it("streamed deltas (with usage) and a call whole in one delta: every call runs", async () => {
    const runtime = agentWith(openai());
    server.enqueue(append("w1", "streamed", 5), append("w2", "whole", 1), textReply(["all ", "done"], { usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }));
    const run = await runAgent(runtime, "append twice");
    expect(run).toMatchObject({ status: "success", answer: "all done", model_rounds: 3, tool_calls: 2, usage: { input_tokens: 50, output_tokens: 6 } });
    expect(linesOf("wire.txt")).toEqual(["streamed", "whole"]);
    expect(server.pending).toBe(0);
  });

  it("without usage: the calls still run, usage counts zero", async () => {
    const runtime = agentWith(openai());
    server.enqueue(append("n1", "no usage", 3, false), textReply(["ok"]));
    const run = await runAgent(runtime, "append once");
    expect(run).toMatchObject({ status: "success", answer: "ok", tool_calls: 1, usage: { input_tokens: 0, output_tokens: 0 } });
    expect(linesOf("wire.txt")).toEqual(["no usage"]);
  });

  it("with streaming disabled (whole answers, LangChain's fallback): every call runs", async () => {
    const model = new ChatOpenAI({ model: "test-model", apiKey: "sk-test", configuration: { baseURL: server.baseUrl }, maxRetries: 0, disableStreaming: true });
    const runtime = agentWith(model);
    server.enqueue(append("d1", "one", 2), append("d2", "two", 2), textReply(["finished"], { usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 } }));
    const run = await runAgent(runtime, "append twice, unstreamed");
    expect(run).toMatchObject({ status: "success", answer: "finished", tool_calls: 2 });
    expect(linesOf("wire.txt")).toEqual(["one", "two"]);
    expect(server.requests.map((request) => (request.body as { stream?: boolean }).stream ?? false)).toEqual([false, false, false]);
  });
});

describe("a user graph (a model node and a ToolNode) with any model", () => {
  /** A model node calling `model` (tools bound when it can), a ToolNode with `append_line`, and the loop between them. */
  function userGraph(model: BaseChatModel, written: string[], freshIds: boolean) {
    const appendLine = tool(
      async ({ line }: { line: string }) => {
        appendFileSync(join(workspace.dir, "user.txt"), `${line}\n`);
        written.push(line);
        return "appended";
      },
      { name: "append_line", description: "appends a line", schema: z.object({ line: z.string() }) },
    );
    const bound = model.bindTools?.([appendLine]) ?? model;
    return new StateGraph(MessagesAnnotation)
      .addNode("model", async (state) => {
        const reply = await bound.invoke(state.messages);
        // a server that repeats its response ids (the loopback one does, as some OpenAI-compatible
        // servers do) would make LangGraph's messages reducer replace the earlier answers
        return { messages: [freshIds ? new AIMessage({ content: reply.content, tool_calls: reply.tool_calls ?? [], id: randomUUID() }) : reply] };
      })
      .addNode("tools", new ToolNode([appendLine]))
      .addEdge(START, "model")
      .addConditionalEdges("model", toolsCondition, ["tools", END])
      .addEdge("tools", "model");
  }

  async function runUserGraph(model: BaseChatModel, written: string[], freshIds = false) {
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_MODEL_MAX_RETRIES: "0" }), graphs: { agent: false, user: userGraph(model, written, freshIds) } });
    runtimes.push(runtime);
    const created = await runtime.runs.create({ assistantId: "user", input: { messages: [{ role: "user", content: "append lines" }] } });
    const run = await runtime.runs.execute(created.run_id);
    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[] } };
    return { run, messages: state.values.messages };
  }

  it("a _generate-only model: 10 turns write 10 lines of 10 (the 21 steps fit LangGraph's recursion limit)", async () => {
    const written: string[] = [];
    const model = new GenerateOnlyModel((messages) => {
      const done = turnsSinceHuman(messages);
      return done >= 10 ? { content: "ten" } : { tool_calls: [{ id: `u${done}`, name: "append_line", args: { line: `line ${done + 1}` } }] };
    });
    const { run } = await runUserGraph(model, written);
    expect(run.error).toBeNull();
    expect(run).toMatchObject({ status: "success" });
    expect(written).toHaveLength(10);
    expect(linesOf("user.txt")).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`));
    expect(model.calls.count).toBe(11);
  });

  it("the real ChatOpenAI: streamed deltas, a call whole in one delta, no usage: 3 lines of 3", async () => {
    const written: string[] = [];
    const call = (id: string, line: string, parts: number, usage: boolean): Reply => {
      const json = JSON.stringify({ line });
      const size = Math.ceil(json.length / parts);
      return toolCallReply([{ id, name: "append_line", argumentParts: Array.from({ length: parts }, (_, i) => json.slice(i * size, (i + 1) * size)) }], usage ? { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } } : {});
    };
    server.enqueue(call("o1", "streamed", 4, true), call("o2", "whole", 1, true), call("o3", "no usage", 3, false), textReply(["three"]));
    const model = createChatModel(loadConfig({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "test-model", DEVMIND_MODEL_MAX_RETRIES: "0" }));
    const { run, messages } = await runUserGraph(model, written, true);
    expect(run).toMatchObject({ status: "success" });
    expect(linesOf("user.txt")).toEqual(["streamed", "whole", "no usage"]);
    expect(messages.at(-1)?.content).toBe("three");
    expect(server.pending).toBe(0);
  });

  it("LangChain's FakeListChatModel: its answer ends the graph, no tool runs", async () => {
    const written: string[] = [];
    const { run, messages } = await runUserGraph(new FakeListChatModel({ responses: ["nothing to append"] }), written);
    expect(run).toMatchObject({ status: "success" });
    expect(written).toEqual([]);
    expect(messages.map((message) => [message.getType(), message.content])).toEqual([
      ["human", "append lines"],
      ["ai", "nothing to append"],
    ]);
  });
});
