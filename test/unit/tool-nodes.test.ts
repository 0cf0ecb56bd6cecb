import { tool } from "@langchain/core/tools";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import type { CompiledGraphLike } from "../../src/graphs/graph-kinds.js";
import { ledgeredToolNode } from "../../src/graphs/ledgered-tools.js";
import { graphRunsTools } from "../../src/graphs/tool-nodes.js";

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });
const echo = tool(async () => "echoed", { name: "echo", description: "Echoes." });

function plain() {
  return new StateGraph(Counter)
    .addNode("a", (state) => ({ count: state.count + 1 }))
    .addNode("b", (state) => ({ count: state.count + 1 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", END)
    .compile();
}

function withTools(node: unknown) {
  return new StateGraph(MessagesAnnotation)
    .addNode("tools", node as never)
    .addEdge(START, "tools")
    .addEdge("tools", END)
    .compile();
}

const asGraph = (graph: unknown) => graph as CompiledGraphLike;

describe("graphRunsTools: which user graphs record LangGraph's tools stream", () => {
  it("is false for a graph of function nodes and true for one with a ToolNode, a ledgered tool node or a tool as a node", () => {
    expect(graphRunsTools(asGraph(plain()))).toBe(false);
    expect(graphRunsTools(asGraph(withTools(new ToolNode([echo]))))).toBe(true);
    expect(graphRunsTools(asGraph(withTools(ledgeredToolNode([echo]))))).toBe(true);
    expect(graphRunsTools(asGraph(withTools(echo)))).toBe(true);
  });

  it("looks into subgraphs, nested ones too", () => {
    const inner = withTools(new ToolNode([echo]));
    const middle = new StateGraph(MessagesAnnotation).addNode("inner", inner).addEdge(START, "inner").addEdge("inner", END).compile();
    const outer = new StateGraph(MessagesAnnotation).addNode("middle", middle).addEdge(START, "middle").addEdge("middle", END).compile();
    expect(graphRunsTools(asGraph(outer))).toBe(true);
    const quiet = new StateGraph(Counter).addNode("sub", plain()).addEdge(START, "sub").addEdge("sub", END).compile();
    expect(graphRunsTools(asGraph(quiet))).toBe(false);
  });

  it("is true for a graph it cannot look into (not a Pregel graph)", () => {
    const opaque = { invoke: async () => null, stream: async () => [], getState: async () => null, getGraph: () => null };
    expect(graphRunsTools(asGraph(opaque))).toBe(true);
  });
});
