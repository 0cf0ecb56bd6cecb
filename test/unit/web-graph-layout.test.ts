import { describe, expect, it } from "vitest";

// The page's graph drawing (graph-layout.js): no edge passes through a node box, for the drawings
// `GET /assistants/{id}/graph` gives of devmind's agent, the examples and a wide fan-out. The
// check reads the SVG path each edge is drawn with, as the browser would: its curves sampled
// finely, every piece tested against every box (shrunk by half a pixel, so an edge may touch the
// border it starts or ends on).
interface LaidNode {
  id: string;
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
  edges: { source: string; target: string; back: boolean; path: string }[];
}
const layoutPath = "../../src/server/web/assets/graph-layout.js";
const { layoutGraph } = (await import(layoutPath)) as { layoutGraph: (drawing: unknown) => Layout };

type Point = [number, number];
const edge = (source: string, target: string, conditional = false) => ({ source, target, conditional });
const nodes = (...ids: string[]) => ids.map((id) => ({ id }));

/** devmind's agent: every step back to guard, guard to model, tools, approval or end. */
const AGENT = {
  nodes: nodes("__start__", "guard", "model", "tools", "approval", "__end__"),
  edges: [edge("__start__", "guard"), edge("approval", "guard"), edge("model", "guard"), edge("tools", "guard"), edge("guard", "model", true), edge("guard", "tools", true), edge("guard", "approval", true), edge("guard", "__end__", true)],
};
/** examples/hitl-agent (createAgent with the human-in-the-loop middleware). */
const HITL = {
  nodes: nodes("__start__", "HumanInTheLoopMiddleware.after_model", "model_request", "tools", "__end__"),
  edges: [
    edge("__start__", "model_request"),
    edge("model_request", "HumanInTheLoopMiddleware.after_model"),
    edge("tools", "model_request"),
    edge("HumanInTheLoopMiddleware.after_model", "tools", true),
    edge("HumanInTheLoopMiddleware.after_model", "model_request", true),
    edge("HumanInTheLoopMiddleware.after_model", "__end__", true),
  ],
};
/** examples/parallel-research: plan fans out (Send) to the research subgraph, summarise joins. */
const RESEARCH = {
  nodes: nodes("__start__", "plan", "research", "summarise", "__end__"),
  edges: [edge("__start__", "plan"), edge("research", "summarise"), edge("summarise", "__end__"), edge("plan", "research", true)],
};
/** A wide fan-out: twelve workers, a join, edges skipping layers both ways, one within a layer, a self loop. */
const WORKERS = Array.from({ length: 12 }, (_, i) => `worker_${i + 1}`);
const FAN_OUT = {
  nodes: nodes("__start__", "split", ...WORKERS, "join", "check", "__end__"),
  edges: [
    edge("__start__", "split"),
    ...WORKERS.map((w) => edge("split", w, true)),
    ...WORKERS.map((w) => edge(w, "join")),
    edge("join", "check"),
    edge("check", "split", true),
    edge("check", "__end__", true),
    edge("split", "__end__", true),
    edge("__start__", "check", true),
    edge("worker_3", "worker_9", true),
    edge("join", "join", true),
    edge("check", "worker_5", true),
  ],
};

/** The points an SVG path of M, L and C commands draws, curves sampled at `steps` points each. */
function pathPoints(d: string, steps = 64): Point[] {
  const tokens = d.replace(/,/g, " ").trim().split(/\s+/);
  const points: Point[] = [];
  let at: Point = [0, 0];
  for (let i = 0; i < tokens.length; ) {
    const command = tokens[i];
    const num = (k: number): number => Number(tokens[i + k]);
    if (command === "M" || command === "L") {
      at = [num(1), num(2)];
      points.push(at);
      i += 3;
    } else if (command === "C") {
      const [p0, p1, p2, p3]: [Point, Point, Point, Point] = [at, [num(1), num(2)], [num(3), num(4)], [num(5), num(6)]];
      for (let s = 1; s <= steps; s += 1) {
        const t = s / steps;
        const u = 1 - t;
        const f = (k: 0 | 1): number => u * u * u * p0[k] + 3 * u * u * t * p1[k] + 3 * u * t * t * p2[k] + t * t * t * p3[k];
        points.push([f(0), f(1)]);
      }
      at = p3;
      i += 7;
    } else throw new Error(`unexpected path command ${command} in ${d}`);
  }
  return points;
}

/** Whether the segment a-b enters the open box (Liang-Barsky clipping). */
function segmentEntersBox(a: Point, b: Point, box: LaidNode, inset = 0.5): boolean {
  const [x0, y0] = a;
  const dx = b[0] - x0;
  const dy = b[1] - y0;
  let t0 = 0;
  let t1 = 1;
  const sides: [number, number][] = [
    [-dx, x0 - (box.x + inset)],
    [dx, box.x + box.width - inset - x0],
    [-dy, y0 - (box.y + inset)],
    [dy, box.y + box.height - inset - y0],
  ];
  for (const [p, q] of sides) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return t1 - t0 > 1e-9;
}

/** Every (edge, node) pair where the edge's drawn path passes through the node's box. */
function crossings(layout: Layout): string[] {
  const found: string[] = [];
  for (const item of layout.edges) {
    const points = pathPoints(item.path);
    for (const box of layout.nodes) {
      for (let i = 1; i < points.length; i += 1) {
        if (segmentEntersBox(points[i - 1] as Point, points[i] as Point, box)) {
          found.push(`${item.source} -> ${item.target} through ${box.id}`);
          break;
        }
      }
    }
  }
  return found;
}

function near(a: Point, b: Point): boolean {
  return Math.abs(a[0] - b[0]) < 0.11 && Math.abs(a[1] - b[1]) < 0.11;
}

/** Whether p lies on the border of the box. */
function onBorder(p: Point, box: LaidNode): boolean {
  const inX = p[0] >= box.x - 0.11 && p[0] <= box.x + box.width + 0.11;
  const inY = p[1] >= box.y - 0.11 && p[1] <= box.y + box.height + 0.11;
  const onX = Math.abs(p[0] - box.x) < 0.11 || Math.abs(p[0] - box.x - box.width) < 0.11;
  const onY = Math.abs(p[1] - box.y) < 0.11 || Math.abs(p[1] - box.y - box.height) < 0.11;
  return (inX && onY) || (inY && onX);
}

describe("the page's graph drawing routes edges around nodes", () => {
  const graphs = { agent: AGENT, "examples/hitl-agent": HITL, "examples/parallel-research": RESEARCH, "a wide fan-out": FAN_OUT };

  for (const [name, drawing] of Object.entries(graphs)) {
    it(`${name}: no edge passes through a node box; each starts on its source and ends on its target; nothing overlaps or leaves the drawing`, () => {
      const layout = layoutGraph(drawing);
      expect(layout.nodes.map((node) => node.id)).toEqual(drawing.nodes.map((node) => node.id));
      expect(layout.edges).toHaveLength(drawing.edges.length);
      expect(crossings(layout)).toEqual([]);
      const at = new Map(layout.nodes.map((node) => [node.id, node]));
      for (const item of layout.edges) {
        const points = pathPoints(item.path);
        expect(onBorder(points[0] as Point, at.get(item.source) as LaidNode), `${item.source} -> ${item.target} starts on its source`).toBe(true);
        expect(onBorder(points.at(-1) as Point, at.get(item.target) as LaidNode), `${item.source} -> ${item.target} ends on its target`).toBe(true);
        for (const [x, y] of points) {
          expect(x).toBeGreaterThanOrEqual(0);
          expect(y).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThanOrEqual(layout.width);
          expect(y).toBeLessThanOrEqual(layout.height);
        }
      }
      // no two boxes overlap, each inside the drawing
      for (const a of layout.nodes) {
        expect(a.x).toBeGreaterThanOrEqual(0);
        expect(a.x + a.width).toBeLessThanOrEqual(layout.width);
        expect(a.y + a.height).toBeLessThanOrEqual(layout.height);
        for (const b of layout.nodes) {
          if (a === b) continue;
          const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
          expect(apart, `${a.id} and ${b.id} overlap`).toBe(true);
        }
      }
      // two edges never end at the same point of a box (each arrow head is seen)
      const ends = layout.edges.filter((item) => item.source !== item.target).map((item) => pathPoints(item.path).at(-1) as Point);
      for (let i = 0; i < ends.length; i += 1) for (let j = i + 1; j < ends.length; j += 1) expect(near(ends[i] as Point, ends[j] as Point)).toBe(false);
    });
  }

  it("the agent: start, guard, its four destinations below with end at the bottom, guard -> end around the rest", () => {
    const layout = layoutGraph(AGENT);
    const depth = Object.fromEntries(layout.nodes.map((node) => [node.id, node.depth]));
    expect(depth).toEqual({ __start__: 0, guard: 1, model: 2, tools: 2, approval: 2, __end__: 3 });
    const toEnd = layout.edges.find((item) => item.target === "__end__");
    expect(toEnd?.back).toBe(false);
    // the edges back to guard go up, entering guard from below
    const guard = layout.nodes.find((node) => node.id === "guard") as LaidNode;
    for (const item of layout.edges.filter((e) => e.target === "guard" && e.source !== "__start__")) {
      expect(item.back).toBe(true);
      expect((pathPoints(item.path).at(-1) as Point)[1]).toBeCloseTo(guard.y + guard.height, 1);
    }
  });

  it("the check finds a line through a box: it can fail", () => {
    const layout = layoutGraph(AGENT);
    const model = layout.nodes.find((node) => node.id === "model") as LaidNode;
    const through = `M ${model.x + model.width / 2} ${model.y - 10} L ${model.x + model.width / 2} ${model.y + model.height + 10}`;
    expect(crossings({ ...layout, edges: [{ source: "x", target: "y", back: false, path: through }] })).toEqual(["x -> y through model"]);
  });
});
