/**
 * The graphs of `npm run bench -- server`, served by `devmind serve` from here and by the official
 * in-memory server from a copy in its install directory (each resolves its own one copy of
 * LangGraph). Both are deterministic and need no network: a 3-node chain, and an agent whose fake
 * chat model asks for one `add` call (run by LangGraph's own ToolNode), then answers.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const ChainState = Annotation.Root({
  path: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
  /** When the last node wrote (ms since the epoch): the protocol case's write-to-client latency. */
  at: Annotation<number>(),
});

/** Three nodes, each appending its name to `path` and stamping `at` with the time of its write. */
export const chain = new StateGraph(ChainState)
  .addNode("a", () => ({ path: ["a"], at: Date.now() }))
  .addNode("b", () => ({ path: ["b"], at: Date.now() }))
  .addNode("c", () => ({ path: ["c"], at: Date.now() }))
  .addEdge(START, "a")
  .addEdge("a", "b")
  .addEdge("b", "c")
  .addEdge("c", END)
  .compile();

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

/** A chat model that asks for `add` once per human message, then answers with the tool's result. */
class FakeToolModel extends BaseChatModel {
  override _llmType(): string {
    return "bench-fake-tool-model";
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages[messages.length - 1];
    const message = ToolMessage.isInstance(last)
      ? new AIMessage({ content: `the sum is ${String(last.content)}` })
      : new AIMessage({ content: "", tool_calls: [{ id: `call_${messages.length}`, name: "add", args: { a: 2, b: 3 }, type: "tool_call" }] });
    return { generations: [{ message, text: typeof message.content === "string" ? message.content : "" }] };
  }
}

const model = new FakeToolModel({});

/** model -> ToolNode(add) -> model -> end: one tool round. */
export const agent = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode("tools", new ToolNode([add]))
  .addEdge(START, "model")
  .addConditionalEdges("model", toolsCondition, ["tools", END])
  .addEdge("tools", "model")
  .compile();
