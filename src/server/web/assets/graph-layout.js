// Lays out a graph drawing (`GET /assistants/{id}/graph`: LangGraph's `getGraph().toJSON()`,
// `{nodes: [{id}], edges: [{source, target, conditional}]}`) for the page's SVG, layered from
// `__start__` with `__end__` at the bottom. Edges never pass through a node box: an edge spanning
// several layers goes through a slot of its own in each layer between (a "waypoint" that the
// layer keeps free, as in Sugiyama layouts), and between two layers it stays inside the gap that
// separates them, where there are no boxes. Back edges (to the same or an earlier layer) go up the
// same way, leaving the top of their source and entering the bottom of their target.
// Pure (no DOM), so it is unit-tested in Node.

import { edgePath } from "./graph-paths.js";

const NODE = { height: 32, minWidth: 72, charWidth: 7.5, padding: 24 };
const GAP = { layer: 56, node: 28, waypoint: 14, margin: 16, loop: 28 };
const SWEEPS = 4;
const START = "__start__";
const END = "__end__";

/**
 * @typedef {{ id: string, label: string, depth: number, x: number, y: number, width: number, height: number }} LaidNode
 * @typedef {{ source: string, target: string, conditional: boolean, back: boolean, path: string, label: string | null }} LaidEdge
 * @typedef {{ width: number, height: number, nodes: LaidNode[], edges: LaidEdge[] }} GraphLayout
 * @typedef {{ source: string, target: string, conditional: boolean, label: string | null }} Edge
 * @typedef {{ id: string, layer: number, width: number, waypoint: boolean, x: number, up: Slot[], down: Slot[] }} Slot
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
  const { ids, edges } = readDrawing(drawing);
  const depth = depths(ids, edges);
  const layerCount = ids.length === 0 ? 0 : Math.max(...depth.values()) + 1;

  /** @type {Map<string, Slot>} */
  const slots = new Map();
  /** @type {Slot[][]} */
  const layers = Array.from({ length: layerCount }, () => []);
  const addSlot = (/** @type {string} */ id, /** @type {number} */ layer, /** @type {boolean} */ waypoint) => {
    const slot = { id, layer, width: waypoint ? 0 : nodeWidth(id), waypoint, x: 0, up: [], down: [] };
    slots.set(id, slot);
    /** @type {Slot[]} */ (layers[layer]).push(slot);
    return slot;
  };
  for (const id of ids) addSlot(id, /** @type {number} */ (depth.get(id)), false);

  // each edge as a vertical chain, top to bottom: its upper end, a waypoint per layer between, its lower end
  /** @type {Slot[][]} */
  const chains = edges.map((edge, index) => {
    const source = /** @type {Slot} */ (slots.get(edge.source));
    const target = /** @type {Slot} */ (slots.get(edge.target));
    if (source === target || source.layer === target.layer) return [source, target];
    const [upper, lower] = source.layer < target.layer ? [source, target] : [target, source];
    const chain = [upper];
    for (let layer = upper.layer + 1; layer < lower.layer; layer += 1) chain.push(addSlot(`~${index}~${layer}`, layer, true));
    chain.push(lower);
    for (let i = 1; i < chain.length; i += 1) {
      /** @type {Slot} */ (chain[i - 1]).down.push(/** @type {Slot} */ (chain[i]));
      /** @type {Slot} */ (chain[i]).up.push(/** @type {Slot} */ (chain[i - 1]));
    }
    return chain;
  });

  orderLayers(layers);
  placeLayers(layers);
  const left = Math.min(0, ...[...slots.values()].map((slot) => slot.x));
  for (const slot of slots.values()) slot.x += GAP.margin - left;

  const layerY = (/** @type {number} */ layer) => GAP.margin + layer * (NODE.height + GAP.layer);
  /** @type {Map<string, LaidNode>} */
  const placed = new Map(ids.map((id) => {
    const slot = /** @type {Slot} */ (slots.get(id));
    return [id, { id, label: nodeLabel(id), depth: slot.layer, x: slot.x, y: layerY(slot.layer), width: slot.width, height: NODE.height }];
  }));
  const ports = assignPorts(edges, chains, placed);

  const laid = edges.map((edge, index) => {
    const from = /** @type {LaidNode} */ (placed.get(edge.source));
    const to = /** @type {LaidNode} */ (placed.get(edge.target));
    const back = to.depth <= from.depth;
    const chain = /** @type {Slot[]} */ (chains[index]);
    const [start, end] = /** @type {[number, number]} */ (ports[index]);
    const stops = chain.map((slot) => ({ x: slot.x, top: layerY(slot.layer) }));
    return { ...edge, back, path: edgePath(from, to, stops, start, end, { nodeHeight: NODE.height, loop: GAP.loop, dip: GAP.layer * 0.6 }) };
  });

  const loops = edges.some((edge) => edge.source === edge.target);
  const sameLayerBottom = edges.some((edge) => edge.source !== edge.target && placed.get(edge.source)?.depth === layerCount - 1 && placed.get(edge.target)?.depth === layerCount - 1);
  const right = Math.max(NODE.minWidth + GAP.margin, ...[...slots.values()].map((slot) => slot.x + slot.width));
  return {
    width: Math.ceil(right + GAP.margin + (loops ? GAP.loop : 0)),
    height: Math.ceil(2 * GAP.margin + Math.max(1, layerCount) * NODE.height + Math.max(0, layerCount - 1) * GAP.layer + (sameLayerBottom ? GAP.layer / 2 : 0)),
    nodes: ids.map((id) => /** @type {LaidNode} */ (placed.get(id))),
    edges: laid,
  };
}

/**
 * The well-formed nodes and edges of a drawing.
 * @param {unknown} drawing
 * @returns {{ ids: string[], edges: Edge[] }}
 */
function readDrawing(drawing) {
  const raw = /** @type {Record<string, unknown> | null} */ (drawing !== null && typeof drawing === "object" ? drawing : null);
  /** @type {string[]} */
  const ids = [];
  for (const node of Array.isArray(raw?.["nodes"]) ? /** @type {unknown[]} */ (raw["nodes"]) : []) {
    const id = /** @type {Record<string, unknown> | null} */ (node)?.["id"];
    if ((typeof id === "string" || typeof id === "number") && !ids.includes(String(id))) ids.push(String(id));
  }
  const known = new Set(ids);
  /** @type {Edge[]} */
  const edges = [];
  for (const edge of Array.isArray(raw?.["edges"]) ? /** @type {unknown[]} */ (raw["edges"]) : []) {
    const record = /** @type {Record<string, unknown> | null} */ (edge !== null && typeof edge === "object" ? edge : null);
    const source = String(record?.["source"]);
    const target = String(record?.["target"]);
    if (!known.has(source) || !known.has(target)) continue;
    const data = record?.["data"];
    edges.push({ source, target, conditional: record?.["conditional"] === true, label: typeof data === "string" && data !== "" && data !== target ? data : null });
  }
  return { ids, edges };
}

/** @param {string} id */
function nodeWidth(id) {
  return Math.max(NODE.minWidth, Math.round(nodeLabel(id).length * NODE.charWidth + NODE.padding));
}

/**
 * Breadth-first depth from `__start__` (or, without it, from the nodes nothing points at); nodes
 * not reached go one layer below the deepest; `__end__` always goes to the bottom. Layers are
 * numbered without gaps.
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
  const used = [...new Set(depth.values())].sort((a, b) => a - b);
  for (const [id, value] of depth) depth.set(id, used.indexOf(value));
  return depth;
}

/**
 * Orders each layer by the mean position of its neighbours in the layer above (sweeping down),
 * then below (sweeping up), a few times: fewer crossings. Ties keep their order.
 * @param {Slot[][]} layers
 */
function orderLayers(layers) {
  const position = (/** @type {Slot[]} */ layer) => new Map(layer.map((slot, index) => [slot, index]));
  const sortBy = (/** @type {Slot[]} */ layer, /** @type {Map<Slot, number>} */ other, /** @type {"up" | "down"} */ side) => {
    const key = new Map(layer.map((slot, index) => {
      const near = slot[side].map((n) => other.get(n)).filter((p) => p !== undefined);
      return [slot, near.length === 0 ? index : near.reduce((a, b) => a + /** @type {number} */ (b), 0) / near.length];
    }));
    const original = position(layer);
    layer.sort((a, b) => /** @type {number} */ (key.get(a)) - /** @type {number} */ (key.get(b)) || /** @type {number} */ (original.get(a)) - /** @type {number} */ (original.get(b)));
  };
  for (let sweep = 0; sweep < SWEEPS; sweep += 1) {
    for (let i = 1; i < layers.length; i += 1) sortBy(/** @type {Slot[]} */ (layers[i]), position(/** @type {Slot[]} */ (layers[i - 1])), "up");
    for (let i = layers.length - 2; i >= 0; i -= 1) sortBy(/** @type {Slot[]} */ (layers[i]), position(/** @type {Slot[]} */ (layers[i + 1])), "down");
  }
}

/**
 * Gives every slot an x: packed left to right, then moved toward the mean centre of its
 * neighbours (down, then up, a few times) as far as the layer's order and gaps allow.
 * @param {Slot[][]} layers
 */
function placeLayers(layers) {
  for (const layer of layers) {
    let x = 0;
    layer.forEach((slot, index) => {
      if (index > 0) x += separation(/** @type {Slot} */ (layer[index - 1]), slot);
      slot.x = x;
      x += slot.width;
    });
  }
  const centre = (/** @type {Slot} */ slot) => slot.x + slot.width / 2;
  const pull = (/** @type {Slot[]} */ layer, /** @type {"up" | "down"} */ side) => {
    const desired = layer.map((slot) => (slot[side].length === 0 ? slot.x : slot[side].reduce((sum, n) => sum + centre(n), 0) / slot[side].length - slot.width / 2));
    const placed = packInOrder(layer, desired);
    layer.forEach((slot, index) => (slot.x = /** @type {number} */ (placed[index])));
  };
  for (let sweep = 0; sweep < SWEEPS; sweep += 1) {
    for (let i = 1; i < layers.length; i += 1) pull(/** @type {Slot[]} */ (layers[i]), "up");
    for (let i = layers.length - 2; i >= 0; i -= 1) pull(/** @type {Slot[]} */ (layers[i]), "down");
  }
}

/** The least distance between the right side of `a` and the left side of `b` in one layer. @param {Slot} a @param {Slot} b */
function separation(a, b) {
  return a.waypoint || b.waypoint ? GAP.waypoint : GAP.node;
}

/**
 * The x of each slot of a layer closest (least squares) to `desired`, keeping the layer's order
 * and gaps: with offsets removed the constraint is "non-decreasing", solved by pooling adjacent
 * violators.
 * @param {Slot[]} layer
 * @param {number[]} desired
 * @returns {number[]}
 */
function packInOrder(layer, desired) {
  /** @type {number[]} */
  const offset = [];
  let sum = 0;
  layer.forEach((slot, index) => {
    if (index > 0) sum += /** @type {Slot} */ (layer[index - 1]).width + separation(/** @type {Slot} */ (layer[index - 1]), slot);
    offset.push(sum);
  });
  /** @type {{ mean: number, count: number }[]} */
  const blocks = [];
  desired.forEach((value, index) => {
    blocks.push({ mean: value - /** @type {number} */ (offset[index]), count: 1 });
    while (blocks.length > 1 && /** @type {{ mean: number }} */ (blocks.at(-2)).mean > /** @type {{ mean: number }} */ (blocks.at(-1)).mean) {
      const last = /** @type {{ mean: number, count: number }} */ (blocks.pop());
      const prev = /** @type {{ mean: number, count: number }} */ (blocks.at(-1));
      prev.mean = (prev.mean * prev.count + last.mean * last.count) / (prev.count + last.count);
      prev.count += last.count;
    }
  });
  /** @type {number[]} */
  const result = [];
  for (const block of blocks) for (let i = 0; i < block.count; i += 1) result.push(block.mean + /** @type {number} */ (offset[result.length]));
  return result;
}

/**
 * Where each edge leaves its source and enters its target, as x on the box's bottom or top side:
 * the edges on one side of a box are spread along it, ordered by where they go, so arrows do not
 * share a point.
 * @param {Edge[]} edges
 * @param {Slot[][]} chains
 * @param {Map<string, LaidNode>} placed
 * @returns {[number, number][]}
 */
function assignPorts(edges, chains, placed) {
  /** @type {Map<string, { toward: number, set: (x: number) => void }[]>} */
  const sides = new Map();
  /** @type {[number, number][]} */
  const ports = edges.map(() => [0, 0]);
  const add = (/** @type {string} */ key, /** @type {number} */ toward, /** @type {(x: number) => void} */ set) => {
    const list = sides.get(key) ?? [];
    list.push({ toward, set });
    sides.set(key, list);
  };
  const centreOf = (/** @type {Slot} */ slot) => slot.x + slot.width / 2;
  edges.forEach((edge, index) => {
    if (edge.source === edge.target) return;
    const chain = /** @type {Slot[]} */ (chains[index]);
    const port = /** @type {[number, number]} */ (ports[index]);
    const from = /** @type {LaidNode} */ (placed.get(edge.source));
    const to = /** @type {LaidNode} */ (placed.get(edge.target));
    if (from.depth === to.depth) {
      add(`${edge.source} bottom`, to.x, (x) => (port[0] = x));
      add(`${edge.target} bottom`, from.x, (x) => (port[1] = x));
      return;
    }
    const upper = /** @type {Slot} */ (chain[0]);
    const lower = /** @type {Slot} */ (chain.at(-1));
    const setUpper = (/** @type {number} */ x) => (port[from.depth < to.depth ? 0 : 1] = x);
    const setLower = (/** @type {number} */ x) => (port[from.depth < to.depth ? 1 : 0] = x);
    add(`${upper.id} bottom`, centreOf(/** @type {Slot} */ (chain[1])), setUpper);
    add(`${lower.id} top`, centreOf(/** @type {Slot} */ (chain.at(-2))), setLower);
  });
  for (const [key, list] of sides) {
    const node = /** @type {LaidNode} */ (placed.get(key.slice(0, key.lastIndexOf(" "))));
    list.sort((a, b) => a.toward - b.toward);
    list.forEach((item, index) => item.set(node.x + (node.width * (index + 1)) / (list.length + 1)));
  }
  return ports;
}
