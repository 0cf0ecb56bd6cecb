// Lays out a graph drawing (`GET /assistants/{id}/graph`: LangGraph's `getGraph().toJSON()`,
// `{nodes: [{id}], edges: [{source, target, conditional}]}`) for the page's SVG: layers top to
// bottom by breadth-first depth from `__start__`, `__end__` at the bottom, each layer centred and
// ordered by its parents' positions; edges as curves, back edges bending out to the right.
// Pure (no DOM), so it is unit-tested in Node.

const NODE = { height: 32, minWidth: 72, charWidth: 7.5, padding: 24 };
const GAP = { layer: 56, node: 28, margin: 16, backEdge: 18 };
const START = "__start__";
const END = "__end__";

/**
 * @typedef {{ id: string, label: string, depth: number, x: number, y: number, width: number, height: number }} LaidNode
 * @typedef {{ source: string, target: string, conditional: boolean, back: boolean, path: string, label: string | null }} LaidEdge
 * @typedef {{ width: number, height: number, nodes: LaidNode[], edges: LaidEdge[] }} GraphLayout
 */

/** The label a node is drawn with: `start` / `end` for LangGraph's markers, else its id. @param {string} id */
export function nodeLabel(id) {
  return id === START ? "start" : id === END ? "end" : id;
}

/**
 * Lays out a drawing. Nodes and edges that are not well formed are left out; an edge to an
 * unknown node too. Never throws for any JSON input.
 * @param {unknown} drawing
 * @returns {GraphLayout}
 */
export function layoutGraph(drawing) {
  const raw = /** @type {Record<string, unknown> | null} */ (drawing !== null && typeof drawing === "object" ? drawing : null);
  /** @type {string[]} */
  const ids = [];
  for (const node of Array.isArray(raw?.["nodes"]) ? /** @type {unknown[]} */ (raw["nodes"]) : []) {
    const id = /** @type {Record<string, unknown> | null} */ (node)?.["id"];
    if ((typeof id === "string" || typeof id === "number") && !ids.includes(String(id))) ids.push(String(id));
  }
  const known = new Set(ids);
  /** @type {{ source: string, target: string, conditional: boolean, label: string | null }[]} */
  const edges = [];
  for (const edge of Array.isArray(raw?.["edges"]) ? /** @type {unknown[]} */ (raw["edges"]) : []) {
    const record = /** @type {Record<string, unknown> | null} */ (edge !== null && typeof edge === "object" ? edge : null);
    const source = String(record?.["source"]);
    const target = String(record?.["target"]);
    if (!known.has(source) || !known.has(target)) continue;
    const data = record?.["data"];
    edges.push({ source, target, conditional: record?.["conditional"] === true, label: typeof data === "string" && data !== "" && data !== target ? data : null });
  }

  const depth = depths(ids, edges);
  /** @type {string[][]} */
  const layers = [];
  for (const id of ids) (layers[/** @type {number} */ (depth.get(id))] ??= []).push(id);
  const layerList = layers.filter((layer) => layer !== undefined);
  // renumber (a depth may be empty when __end__ moved to the bottom)
  layerList.forEach((layer, index) => layer.forEach((id) => depth.set(id, index)));

  /** @type {Map<string, LaidNode>} */
  const placed = new Map();
  const widths = layerList.map((layer) => layer.reduce((sum, id) => sum + nodeWidth(id), 0) + GAP.node * Math.max(0, layer.length - 1));
  const inner = Math.max(NODE.minWidth, ...widths);
  layerList.forEach((layer, index) => {
    if (index > 0) orderByParents(layer, edges, placed);
    const width = layer.reduce((sum, id) => sum + nodeWidth(id), 0) + GAP.node * Math.max(0, layer.length - 1);
    let x = GAP.margin + (inner - width) / 2;
    const y = GAP.margin + index * (NODE.height + GAP.layer);
    for (const id of layer) {
      const w = nodeWidth(id);
      placed.set(id, { id, label: nodeLabel(id), depth: index, x, y, width: w, height: NODE.height });
      x += w + GAP.node;
    }
  });

  let backEdges = 0;
  /** @type {LaidEdge[]} */
  const laid = edges.map((edge) => {
    const from = /** @type {LaidNode} */ (placed.get(edge.source));
    const to = /** @type {LaidNode} */ (placed.get(edge.target));
    const back = to.depth <= from.depth;
    const bend = back ? GAP.backEdge * (1 + backEdges++) : 0;
    return { ...edge, back, path: edgePath(from, to, bend, inner) };
  });
  return {
    width: Math.ceil(inner + 2 * GAP.margin + (backEdges > 0 ? GAP.backEdge * (backEdges + 1) : 0)),
    height: Math.ceil(2 * GAP.margin + layerList.length * NODE.height + Math.max(0, layerList.length - 1) * GAP.layer),
    nodes: ids.map((id) => /** @type {LaidNode} */ (placed.get(id))),
    edges: laid,
  };
}

/** @param {string} id */
function nodeWidth(id) {
  return Math.max(NODE.minWidth, Math.round(nodeLabel(id).length * NODE.charWidth + NODE.padding));
}

/**
 * Breadth-first depth from `__start__` (or, without it, from the nodes nothing points at); nodes
 * not reached go one layer below the deepest; `__end__` always goes to the bottom.
 * @param {string[]} ids
 * @param {{ source: string, target: string }[]} edges
 * @returns {Map<string, number>}
 */
function depths(ids, edges) {
  /** @type {Map<string, number>} */
  const depth = new Map();
  const targets = new Set(edges.map((edge) => edge.target));
  const roots = ids.includes(START) ? [START] : ids.filter((id) => !targets.has(id));
  const queue = [...(roots.length > 0 ? roots : ids.slice(0, 1))];
  for (const id of queue) depth.set(id, 0);
  for (let head = 0; head < queue.length; head += 1) {
    const id = /** @type {string} */ (queue[head]);
    for (const edge of edges) {
      if (edge.source !== id || depth.has(edge.target)) continue;
      depth.set(edge.target, /** @type {number} */ (depth.get(id)) + 1);
      queue.push(edge.target);
    }
  }
  const reached = [...depth.entries()].filter(([id]) => id !== END).map(([, value]) => value);
  const deepest = reached.length === 0 ? 0 : Math.max(...reached);
  for (const id of ids) if (!depth.has(id) && id !== END) depth.set(id, deepest + 1);
  const below = Math.max(0, ...[...depth.entries()].filter(([id]) => id !== END).map(([, value]) => value));
  if (ids.includes(END)) depth.set(END, ids.length === 1 ? 0 : below + 1);
  return depth;
}

/**
 * Orders a layer by the mean x of each node's parents already placed (fewer crossings); nodes
 * without placed parents keep their order after those with.
 * @param {string[]} layer
 * @param {{ source: string, target: string }[]} edges
 * @param {Map<string, LaidNode>} placed
 */
function orderByParents(layer, edges, placed) {
  const key = new Map(
    layer.map((id, index) => {
      const xs = edges.filter((edge) => edge.target === id && placed.has(edge.source)).map((edge) => {
        const parent = /** @type {LaidNode} */ (placed.get(edge.source));
        return parent.x + parent.width / 2;
      });
      return [id, xs.length === 0 ? Number.POSITIVE_INFINITY : xs.reduce((a, b) => a + b, 0) / xs.length + index * 1e-6];
    }),
  );
  const original = new Map(layer.map((id, index) => [id, index]));
  layer.sort((a, b) => /** @type {number} */ (key.get(a)) - /** @type {number} */ (key.get(b)) || /** @type {number} */ (original.get(a)) - /** @type {number} */ (original.get(b)));
}

/**
 * The SVG path of an edge: down from the source's bottom to the target's top; a back edge (to
 * the same or an earlier layer) leaves the source's right side and bends out past the widest
 * layer by `bend`; a node's edge to itself is a small loop on its right.
 * @param {LaidNode} from
 * @param {LaidNode} to
 * @param {number} bend
 * @param {number} inner  width of the widest layer
 */
function edgePath(from, to, bend, inner) {
  const r = (/** @type {number} */ value) => Math.round(value * 10) / 10;
  if (from.id === to.id) {
    const x = from.x + from.width;
    const y = from.y + from.height / 2;
    return `M ${r(x)} ${r(y - 6)} C ${r(x + 28)} ${r(y - 22)}, ${r(x + 28)} ${r(y + 22)}, ${r(x)} ${r(y + 6)}`;
  }
  if (to.depth > from.depth) {
    const x1 = from.x + from.width / 2;
    const y1 = from.y + from.height;
    const x2 = to.x + to.width / 2;
    const y2 = to.y;
    const mid = (y2 - y1) / 2;
    return `M ${r(x1)} ${r(y1)} C ${r(x1)} ${r(y1 + mid)}, ${r(x2)} ${r(y2 - mid)}, ${r(x2)} ${r(y2)}`;
  }
  const x1 = from.x + from.width;
  const y1 = from.y + from.height / 2;
  const x2 = to.x + to.width;
  const y2 = to.y + to.height / 2;
  const out = GAP.margin + inner + bend;
  return `M ${r(x1)} ${r(y1)} C ${r(out)} ${r(y1)}, ${r(out)} ${r(y2)}, ${r(x2)} ${r(y2)}`;
}
