import { describe, expect, it } from "vitest";

// The web page's pure modules (no DOM): the graph layout, the HITL shape reader and where a run
// is in its graph. Browser modules without type declarations: imported by path so the typecheck
// does not need them.
interface LaidNode {
  id: string;
  label: string;
  depth: number;
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Layout {
  width: number;
  height: number;
  nodes: LaidNode[];
  edges: { source: string; target: string; conditional: boolean; back: boolean; path: string }[];
}
interface ReviewAction {
  index: number;
  name: string;
  args: Record<string, unknown>;
  description: string | null;
  toolCallId: string | null;
  risk: string | null;
  allowed: string[];
}
const layoutPath = "../../src/server/web/assets/graph-layout.js";
const shapePath = "../../src/server/web/assets/hitl-shape.js";
const nodesPath = "../../src/server/web/assets/run-nodes.js";
const { layoutGraph } = (await import(layoutPath)) as { layoutGraph: (drawing: unknown) => Layout };
const { reviewRequest, decisionFor } = (await import(shapePath)) as {
  reviewRequest: (value: unknown) => { actions: ReviewAction[]; named: boolean } | null;
  decisionFor: (action: ReviewAction, choice: Record<string, unknown>) => Record<string, unknown>;
};
const { RunNodes } = (await import(nodesPath)) as { RunNodes: new () => { apply(event: Record<string, unknown>): boolean; setNext(next: unknown): void; states(): Map<string, string> } };

/** createAgent's drawing with the HITL middleware, as `GET /assistants/{id}/graph` gives it. */
const AGENT_DRAWING = {
  nodes: [{ id: "__start__" }, { id: "HumanInTheLoopMiddleware.after_model" }, { id: "model_request" }, { id: "tools" }, { id: "__end__" }],
  edges: [
    { source: "__start__", target: "model_request", conditional: false },
    { source: "model_request", target: "HumanInTheLoopMiddleware.after_model", conditional: false },
    { source: "tools", target: "model_request", conditional: false },
    { source: "HumanInTheLoopMiddleware.after_model", target: "tools", conditional: true },
    { source: "HumanInTheLoopMiddleware.after_model", target: "model_request", conditional: true },
    { source: "HumanInTheLoopMiddleware.after_model", target: "__end__", conditional: true },
  ],
};

describe("the web page's graph layout", () => {
  it("layers nodes by breadth-first depth from start, puts end at the bottom, and marks back edges", () => {
    const layout = layoutGraph(AGENT_DRAWING);
    const depth = Object.fromEntries(layout.nodes.map((node) => [node.id, node.depth]));
    expect(depth).toEqual({ __start__: 0, model_request: 1, "HumanInTheLoopMiddleware.after_model": 2, tools: 3, __end__: 4 });
    expect(layout.nodes.map((node) => node.label)).toEqual(["start", "HumanInTheLoopMiddleware.after_model", "model_request", "tools", "end"]);
    // layers go down, nothing overlaps, everything fits the drawing
    const byDepth = [...layout.nodes].sort((a, b) => a.depth - b.depth);
    for (let i = 1; i < byDepth.length; i += 1) expect((byDepth[i] as LaidNode).y).toBeGreaterThan((byDepth[i - 1] as LaidNode).y + (byDepth[i - 1] as LaidNode).height);
    for (const node of layout.nodes) {
      expect(node.x).toBeGreaterThanOrEqual(0);
      expect(node.x + node.width).toBeLessThanOrEqual(layout.width);
      expect(node.y + node.height).toBeLessThanOrEqual(layout.height);
    }
    expect(layout.edges.filter((edge) => edge.back).map((edge) => `${edge.source}>${edge.target}`)).toEqual(["tools>model_request", "HumanInTheLoopMiddleware.after_model>model_request"]);
    expect(layout.edges.filter((edge) => edge.conditional)).toHaveLength(3);
    for (const edge of layout.edges) expect(edge.path).toMatch(/^M [\d.]+ [\d.]+( C [\d.]+ [\d.]+, [\d.]+ [\d.]+, [\d.]+ [\d.]+| L [\d.]+ [\d.]+)+$/);
  });

  it("places siblings side by side in one layer, and a node nothing reaches below the rest", () => {
    const layout = layoutGraph({
      nodes: [{ id: "__start__" }, { id: "a" }, { id: "b" }, { id: "join" }, { id: "orphan" }, { id: "__end__" }],
      edges: [
        { source: "__start__", target: "a" },
        { source: "__start__", target: "b" },
        { source: "a", target: "join" },
        { source: "b", target: "join" },
        { source: "join", target: "__end__" },
        { source: "join", target: "join" },
        { source: "a", target: "nowhere" },
      ],
    });
    const at = Object.fromEntries(layout.nodes.map((node) => [node.id, node]));
    expect(at["a"]?.y).toBe(at["b"]?.y);
    expect((at["a"]?.x ?? 0) + (at["a"]?.width ?? 0)).toBeLessThan(at["b"]?.x ?? 0);
    expect([at["join"]?.depth, at["orphan"]?.depth, at["__end__"]?.depth]).toEqual([2, 3, 4]);
    // the edge to an unknown node is left out; the self-loop is kept
    expect(layout.edges.map((edge) => `${edge.source}>${edge.target}`)).toEqual(["__start__>a", "__start__>b", "a>join", "b>join", "join>__end__", "join>join"]);
  });

  it("never throws on what is not a drawing", () => {
    for (const junk of [null, 42, "graph", [], { nodes: "x" }, { nodes: [null, { id: {} }], edges: [null, 1] }]) {
      expect(layoutGraph(junk)).toMatchObject({ nodes: [], edges: [] });
    }
  });
});

describe("the web page's HITL shape", () => {
  it("reads LangChain's camelCase and snake_case shapes, with each action's allowed decisions", () => {
    const camel = reviewRequest({
      actionRequests: [{ name: "append_line", args: { line: "a" }, description: "Append?" }, { name: "delete_line", args: { line: "b" } }],
      reviewConfigs: [{ actionName: "append_line", allowedDecisions: ["approve", "edit", "reject"] }, { actionName: "delete_line", allowedDecisions: ["reject", "approve"] }],
    });
    expect(camel).toEqual({
      named: false,
      actions: [
        { index: 0, name: "append_line", args: { line: "a" }, description: "Append?", toolCallId: null, risk: null, allowed: ["approve", "edit", "reject"] },
        { index: 1, name: "delete_line", args: { line: "b" }, description: null, toolCallId: null, risk: null, allowed: ["approve", "reject"] },
      ],
    });
    const snake = reviewRequest({ action_requests: [{ name: "send", args: {} }], review_configs: [{ action_name: "send", allowed_decisions: ["approve"] }] });
    expect(snake?.actions[0]?.allowed).toEqual(["approve"]);
    // devmind's agent names each call: decided on its own
    const agent = reviewRequest({ actionRequests: [{ name: "write_file", args: { path: "a" }, tool_call_id: "call_1", risk: "high" }] });
    expect(agent).toMatchObject({ named: true, actions: [{ toolCallId: "call_1", risk: "high", allowed: ["approve", "edit", "reject"] }] });
  });

  it("is null for any other interrupt value (answered with JSON)", () => {
    for (const value of [null, "text", { question: "ok?" }, { actionRequests: [] }, { actionRequests: [{ args: {} }] }, { action_requests: "x" }]) expect(reviewRequest(value)).toBeNull();
  });

  it("builds decisions in LangChain's shape: respond is a reject carrying the reply, the call named when it has an id", () => {
    const [plain] = reviewRequest({ actionRequests: [{ name: "append_line", args: { line: "a" } }] })?.actions ?? [];
    const [named] = reviewRequest({ actionRequests: [{ name: "write_file", args: {}, tool_call_id: "call_9" }] })?.actions ?? [];
    expect(decisionFor(plain as ReviewAction, { type: "approve" })).toEqual({ type: "approve" });
    expect(decisionFor(plain as ReviewAction, { type: "edit", args: { line: "b" } })).toEqual({ type: "edit", editedAction: { name: "append_line", args: { line: "b" } } });
    expect(decisionFor(plain as ReviewAction, { type: "reject", message: "  " })).toEqual({ type: "reject" });
    expect(decisionFor(plain as ReviewAction, { type: "respond", message: "use b instead" })).toEqual({ type: "reject", message: "use b instead" });
    expect(decisionFor(named as ReviewAction, { type: "reject", message: "no" })).toEqual({ type: "reject", tool_call_id: "call_9", message: "no" });
  });
});

describe("where a run is in its graph", () => {
  it("follows node events: running, then waiting at the interrupt, then the end after the resume", () => {
    const nodes = new RunNodes();
    nodes.apply({ type: "run.started" });
    nodes.apply({ type: "node.started", node: "work", ns: [] });
    // a subgraph's own tasks do not move the top-level highlight
    nodes.apply({ type: "node.started", node: "inner", ns: ["work:1"] });
    expect(Object.fromEntries(nodes.states())).toEqual({ work: "running" });
    nodes.apply({ type: "node.finished", node: "work", ns: [], error: null, interrupted: false });
    nodes.apply({ type: "node.started", node: "ask", ns: [] });
    nodes.apply({ type: "node.finished", node: "ask", ns: [], error: null, interrupted: true });
    nodes.apply({ type: "run.interrupted" });
    expect(Object.fromEntries(nodes.states())).toEqual({ work: "visited", ask: "waiting" });
    nodes.apply({ type: "resume.given" });
    nodes.apply({ type: "node.started", node: "ask", ns: [] });
    expect(Object.fromEntries(nodes.states())).toEqual({ work: "visited", ask: "running" });
    nodes.apply({ type: "node.finished", node: "ask", ns: [], error: null, interrupted: false });
    nodes.apply({ type: "run.succeeded" });
    expect(Object.fromEntries(nodes.states())).toEqual({ work: "visited", ask: "visited", __end__: "ended" });
  });

  it("uses the thread's next nodes for a pause it saw no node events of, and marks a failed node", () => {
    const paused = new RunNodes();
    paused.apply({ type: "run.interrupted" });
    paused.setNext(["review", 3]);
    expect(Object.fromEntries(paused.states())).toEqual({ review: "waiting" });
    const failed = new RunNodes();
    failed.apply({ type: "node.started", node: "fetch", ns: [] });
    failed.apply({ type: "run.failed" });
    expect(Object.fromEntries(failed.states())).toEqual({ fetch: "failed" });
  });
});
