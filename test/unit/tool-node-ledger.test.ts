import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveGraph, type CompiledGraphLike } from "../../src/graphs/graph-kinds.js";
import { ledgeredInner } from "../../src/graphs/ledgered-call.js";
import { ledgeredTool, ledgeredToolNode } from "../../src/graphs/ledgered-tools.js";
import { describeToolNodes, ledgerToolNodes } from "../../src/graphs/tool-node-ledger.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";

const NoArgs = z.object({});
const plainTool = () => tool(async () => ["plain content", { kept: true }], { name: "plain", description: "d", schema: NoArgs, responseFormat: "content_and_artifact" });
const idempotentTool = () => tool(async () => "again", { name: "again", description: "d", schema: NoArgs, metadata: { idempotent: true } });
const optedOutTool = () => tool(async () => "free", { name: "free", description: "d", schema: NoArgs, metadata: { devmind_ledger: false } });

function toolGraph(node: unknown) {
  return new StateGraph(MessagesAnnotation)
    .addNode("plan", () => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: "p", name: "plain", args: {} }, { id: "a", name: "again", args: {} }, { id: "f", name: "free", args: {} }] })] }))
    .addNode("tools", node as never)
    .addEdge(START, "plan")
    .addEdge("plan", "tools")
    .addEdge("tools", END);
}

const saver = new MemorySaver();
const resolve = (entry: unknown) => resolveGraph(entry, { checkpointer: saver, id: "g" });
const toolsOf = (node: ToolNode) => node.tools as unknown as object[];

describe("ledgerToolNodes: every tool node of a graph devmind loads is on the run's ledger", () => {
  it("wraps a plain ToolNode's tools (idempotent flagged, opted-out left alone) once, and reports them", async () => {
    const node = new ToolNode([plainTool(), idempotentTool(), optedOutTool()]);
    const originals = [...toolsOf(node)];
    const graph = await resolve(toolGraph(node));
    expect(describeToolNodes(graph)).toEqual([
      { node: "tools", kind: "ToolNode", tools: [{ name: "plain", ledger: "ledgered" }, { name: "again", ledger: "idempotent" }, { name: "free", ledger: "opted_out" }] },
    ]);
    const wrapped = [...toolsOf(node)];
    expect(wrapped.map((item) => ledgeredInner(item))).toEqual([originals[0], originals[1], undefined]);
    expect(wrapped[2]).toBe(originals[2]);
    // the view is the tool for everything but invoke: name, schema, response format, class
    expect(wrapped[0]).toBeInstanceOf((originals[0] as object).constructor);
    expect(wrapped[0]).toMatchObject({ name: "plain", responseFormat: "content_and_artifact", metadata: { ledgered: true, idempotent: false } });
    // resolving again (a second runtime, a factory returning the same graph) wraps nothing twice
    expect(describeToolNodes(await resolve(graph))).toHaveLength(1);
    expect(toolsOf(node).every((item, index) => item === wrapped[index])).toBe(true);
  });

  it("outside a devmind run the ledgered node returns what the plain one did (content, status, artifact)", async () => {
    const plain = await toolGraph(new ToolNode([plainTool(), idempotentTool(), optedOutTool()])).compile().invoke({ messages: [] });
    const graph = await resolve(toolGraph(new ToolNode([plainTool(), idempotentTool(), optedOutTool()])));
    const ledgered = (await graph.invoke({ messages: [] }, { configurable: { thread_id: "t" } })) as typeof plain;
    const shape = (messages: typeof plain.messages) =>
      (messages.filter((message) => message.getType() === "tool") as ToolMessage[]).map(({ content, status, artifact, name, tool_call_id }) => ({ content, status, artifact, name, tool_call_id }));
    expect(shape(ledgered.messages)).toEqual(shape(plain.messages));
    expect(shape(ledgered.messages)[0]).toMatchObject({ content: "plain content", artifact: { kept: true } });
  });

  it("finds tool nodes in subgraphs, behind withConfig and in sequences, in StateGraphs, promises and factories; keeps ledgeredToolNode's tools", async () => {
    const inner = new StateGraph(MessagesAnnotation).addNode("tools", new ToolNode([plainTool()])).addEdge(START, "tools").addEdge("tools", END).compile();
    const outer = new StateGraph(MessagesAnnotation)
      .addNode("sub", inner)
      .addNode("bound", new ToolNode([idempotentTool()]).withConfig({ runName: "bound" }) as never)
      .addEdge(START, "sub")
      .addEdge("sub", "bound")
      .addEdge("bound", END);
    expect(describeToolNodes(await resolve(Promise.resolve(outer)))).toEqual([
      { node: "bound", kind: "ToolNode", tools: [{ name: "again", ledger: "idempotent" }] },
      { node: "sub|tools", kind: "ToolNode", tools: [{ name: "plain", ledger: "ledgered" }] },
    ]);
    expect(ledgeredInner(toolsOf(inner.nodes["tools"]?.bound as ToolNode)[0] as object)).toBeDefined();

    const already = ledgeredToolNode([plainTool()]);
    const before = toolsOf(already)[0];
    await resolve(() => toolGraph(already));
    expect(toolsOf(already)[0]).toBe(before);
    expect(ledgeredInner(ledgeredTool(before as never))).toBe(ledgeredInner(before as object));
  });

  it("finds createAgent's tool node (it runs wrapToolCall middleware) through the agent object", async () => {
    const agent = createAgent({ model: new ScriptedChatModel([{ content: "hi" }]), tools: [plainTool(), optedOutTool()] });
    const graph: CompiledGraphLike = await resolve(agent);
    expect(ledgerToolNodes(graph)).toEqual([{ node: "tools", kind: "createAgent", tools: [{ name: "plain", ledger: "ledgered" }, { name: "free", ledger: "opted_out" }] }]);
    const node = (agent.graph as unknown as { nodes: Record<string, { bound: ToolNode }> }).nodes["tools"]?.bound as ToolNode;
    expect(ledgeredInner(toolsOf(node)[0] as object)).toBeDefined();
  });

  it("a graph without tool nodes has none to report", async () => {
    const graph = new StateGraph(MessagesAnnotation).addNode("a", () => ({})).addEdge(START, "a").addEdge("a", END);
    expect(describeToolNodes(await resolve(graph))).toEqual([]);
  });
});
