/**
 * The graph of `npm run bench -- crash`: `plan` asks for one call of a slow tool, LangGraph's
 * ToolNode runs it (ledgered by devmind when the graph loads). The server running it is SIGKILLed
 * while the call is in flight.
 */
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

const slowCall = tool(
  async ({ label }: { label: string }) => {
    await new Promise((resolve) => setTimeout(resolve, 120_000));
    return `done ${label}`;
  },
  { name: "slow_call", description: "A slow side effect (two minutes).", schema: z.object({ label: z.string() }) },
);

export const crash = new StateGraph(MessagesAnnotation)
  .addNode("plan", () => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: "call_slow", name: "slow_call", args: { label: "x" } }] })] }))
  .addNode("tools", new ToolNode([slowCall]))
  .addEdge(START, "plan")
  .addEdge("plan", "tools")
  .addEdge("tools", END)
  .compile();
