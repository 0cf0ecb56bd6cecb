/**
 * Counts of a user graph's run (a graph with no counters of its own): every chat model call that
 * finished is a model round with its reported tokens, every tool call that ran (answered or
 * failed) a tool call, across the runs of an interrupt; a call refused before it ran (arguments
 * failing the schema) is not counted.
 */
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), { name: "add", description: "Add.", schema: z.object({ a: z.number(), b: z.number() }) });
const broken = tool(async (): Promise<string> => {
  throw new Error("down");
}, { name: "broken", description: "Always fails.", schema: z.object({}) });

/** model -> tools -> model -> ask (interrupt) -> model -> end, on a scripted model. */
function countingGraph(model: ScriptedChatModel) {
  const bound = model.bindTools([add, broken]);
  return new StateGraph(MessagesAnnotation)
    .addNode("model", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([add, broken], { handleToolErrors: true }))
    .addNode("ask", () => {
      interrupt({ question: "go on?" });
      return {};
    })
    .addEdge(START, "model")
    .addConditionalEdges("model", (state) => {
      const last = state.messages.at(-1) as AIMessage;
      if ((last.tool_calls ?? []).length > 0) return "tools";
      return state.messages.filter((message) => message.getType() === "ai").length === 2 ? "ask" : END;
    })
    .addEdge("tools", "model")
    .addEdge("ask", "model");
}

describe.each(BACKENDS)("a user graph's model rounds and tool calls on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  it("counts finished model calls with their tokens and tool calls that ran, not one refused by its schema, per run", async () => {
    const model = new ScriptedChatModel([
      {
        tool_calls: [
          { id: "c1", name: "add", args: { a: 2, b: 3 } },
          { id: "c2", name: "broken", args: {} },
          { id: "c3", name: "add", args: { a: "two" } },
        ],
        usage: { input_tokens: 10, output_tokens: 4 },
      },
      { content: "2 + 3 = 5", usage: { input_tokens: 20, output_tokens: 6 } },
      { content: "done", usage: { input_tokens: 30, output_tokens: 2 } },
    ]);
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: "3000" }), graphs: { agent: false, counting: countingGraph(model) } });
    try {
      const created = await runtime.runs.create({ assistantId: "counting", input: { messages: [{ role: "user", content: "add" }] } });
      const paused = await runtime.runs.execute(created.run_id);
      expect(paused).toMatchObject({ status: "success", stop_reason: "interrupt", model_rounds: 2, tool_calls: 2, usage: { input_tokens: 30, output_tokens: 10 } });
      const next = await runtime.runs.resume(created.run_id, { value: "yes" }, { principal: "test" });
      const done = await runtime.runs.execute(next.run_id);
      // the run that resumed the thread counts its own calls
      expect(done).toMatchObject({ status: "success", stop_reason: "completed", model_rounds: 1, tool_calls: 0, usage: { input_tokens: 30, output_tokens: 2 } });
      expect((await runtime.runs.list({ limit: 5 })).map((run) => [run.model_rounds, run.tool_calls])).toEqual([[1, 0], [2, 2]]);
    } finally {
      await runtime.close();
    }
  });
});
