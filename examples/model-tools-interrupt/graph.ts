/**
 * Example (d): a model, a `ToolNode` and an `interrupt()` in one plain `StateGraph`. The model
 * (`agent`) asks for tool calls; `review` shows them to a human with `interrupt()` and waits for
 * `{ "approved": boolean }`; approved calls run in LangGraph's own `ToolNode` (devmind puts it on
 * the run's tool ledger when the graph loads: a finished call never runs twice), rejected ones
 * reach the model as tool messages saying so; then the model answers. The model is devmind's
 * configured one (DEVMIND_MODEL, or OPENAI_API_KEY); with none configured the scripted model
 * plays this folder's `turns.json`, so the example runs offline as shipped.
 */
import { fileURLToPath } from "node:url";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { createChatModel, loadConfig } from "devmind";

/** The offline script beside this file: two tool calls, then the answer. */
const TURNS = fileURLToPath(new URL("./turns.json", import.meta.url));

const numbers = z.object({ a: z.number(), b: z.number() });
const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), { name: "add", description: "Add two numbers.", schema: numbers });
const multiply = tool(async ({ a, b }: { a: number; b: number }) => String(a * b), { name: "multiply", description: "Multiply two numbers.", schema: numbers });
const tools = [add, multiply];

/** devmind's configured model, or the scripted one playing `turns.json` when none is configured. */
function chatModel(): ReturnType<typeof createChatModel> {
  const config = loadConfig(process.env);
  return createChatModel(config.model === null ? loadConfig({ ...process.env, DEVMIND_MODEL: `scripted:${TURNS}` }) : config);
}

/** What the reviewer answers. */
interface Review {
  approved: boolean;
  reason?: string;
}

/** The last message, when it is the model's and asks for tools. */
function pendingCalls(messages: (typeof MessagesAnnotation.State)["messages"]): AIMessage | undefined {
  const last = messages.at(-1);
  return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? last : undefined;
}

const model = chatModel().bindTools(tools);

/** Uncompiled: devmind compiles it with its own checkpointer (and lists its tool node in `devmind graphs`). */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode(
    "review",
    (state) => {
      const calls = pendingCalls(state.messages)?.tool_calls ?? [];
      const review = interrupt<{ question: string; calls: { name: string; args: unknown }[] }, Review>({
        question: "Run these tool calls?",
        calls: calls.map((call) => ({ name: call.name, args: call.args })),
      });
      if (review.approved) return new Command({ goto: "tools" });
      const refused = calls.map((call) => new ToolMessage({ tool_call_id: call.id ?? "", name: call.name, content: `rejected by the reviewer${review.reason ? `: ${review.reason}` : ""}` }));
      return new Command({ goto: "agent", update: { messages: refused } });
    },
    { ends: ["tools", "agent"] },
  )
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", (state) => (pendingCalls(state.messages) === undefined ? END : "review"), ["review", END])
  .addEdge("tools", "agent");
