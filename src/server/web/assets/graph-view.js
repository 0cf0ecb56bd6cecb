// The drawing of a run's graph (`GET /assistants/{id}/graph`) as SVG, laid out by graph-layout.js,
// with the run's current node(s) highlighted: running, waiting at an interrupt, failed, or the end
// reached. Built with createElementNS and text nodes only (node names are data, not markup).

import { ApiError, request } from "./api.js";
import { el } from "./dom.js";
import { layoutGraph, nodeLabel } from "./graph-layout.js";

const SVG = "http://www.w3.org/2000/svg";
let serial = 0;

/**
 * @typedef {"running" | "waiting" | "failed" | "ended" | "visited"} NodeState
 */

/** What each highlighted state says in the caption under the drawing. */
const CAPTION = { running: "running", waiting: "waiting for an answer", failed: "failed", ended: "reached the end" };

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @returns {SVGElement}
 */
function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return /** @type {SVGElement} */ (node);
}

/** The graph panel of the run view. */
export class GraphView {
  /**
   * @param {HTMLElement} container  where the drawing (or why there is none) goes
   * @param {HTMLElement} caption  one line naming the current node(s)
   */
  constructor(container, caption) {
    this.container = container;
    this.caption = caption;
    /** @type {string | null} */
    this.graphId = null;
    /** @type {Map<string, SVGElement>} */
    this.nodes = new Map();
    /** @type {Map<string, NodeState>} */
    this.states = new Map();
  }

  /**
   * Draws graph `graphId` (once per graph: a continued run keeps the drawing). A graph the
   * server cannot build (it failed to load, or is not loaded here) gets a message instead; the
   * rest of the run view works without it.
   * @param {string} graphId
   */
  async load(graphId) {
    if (this.graphId === graphId) return;
    this.graphId = graphId;
    this.nodes.clear();
    this.container.replaceChildren(el("p", { class: "muted", text: "Drawing the graph…" }));
    let drawing;
    try {
      drawing = await request("GET", `/assistants/${encodeURIComponent(graphId)}/graph`);
    } catch (error) {
      if (this.graphId !== graphId) return;
      const why = error instanceof ApiError ? (error.status === 404 ? `this server has no graph "${graphId}" (${error.message})` : `${error.code === `HTTP_${error.status}` ? "" : `${error.code}: `}${error.message}`) : String(error);
      this.container.replaceChildren(el("p", { class: "error graph-error", role: "alert", "data-testid": "graph-error", text: `The graph "${graphId}" cannot be drawn: ${why}. The run's timeline and state are shown without it.` }));
      return;
    }
    if (this.graphId !== graphId) return;
    this.draw(drawing);
  }

  /** @param {unknown} drawing */
  draw(drawing) {
    const layout = layoutGraph(drawing);
    serial += 1;
    const arrow = `graph-arrow-${serial}`;
    const root = svg("svg", { class: "graph-svg", "data-testid": "graph-svg", viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width, height: layout.height, role: "img", "aria-label": `Graph ${this.graphId ?? ""}: ${layout.nodes.map((node) => node.label).join(", ")}` });
    const marker = svg("marker", { id: arrow, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "graph-arrow" }));
    const defs = svg("defs");
    defs.append(marker);
    root.append(defs);
    for (const edge of layout.edges) {
      const path = svg("path", { d: edge.path, class: `graph-edge${edge.conditional ? " conditional" : ""}`, "marker-end": `url(#${arrow})`, "data-source": edge.source, "data-target": edge.target, "data-conditional": String(edge.conditional) });
      if (edge.conditional) path.setAttribute("stroke-dasharray", "5 4");
      const title = svg("title");
      title.textContent = `${nodeLabel(edge.source)} → ${nodeLabel(edge.target)}${edge.conditional ? " (conditional)" : ""}${edge.label === null ? "" : `: ${edge.label}`}`;
      path.append(title);
      root.append(path);
    }
    for (const node of layout.nodes) {
      const group = svg("g", { class: `graph-node${node.id.startsWith("__") ? " marker" : ""}`, "data-testid": "graph-node", "data-node": node.id, transform: `translate(${node.x} ${node.y})` });
      group.append(svg("rect", { width: node.width, height: node.height, rx: node.id.startsWith("__") ? node.height / 2 : 6 }));
      const text = svg("text", { x: node.width / 2, y: node.height / 2, "text-anchor": "middle", "dominant-baseline": "central" });
      text.textContent = node.label;
      const title = svg("title");
      title.textContent = node.id;
      group.append(title, text);
      root.append(group);
      this.nodes.set(node.id, group);
    }
    this.container.replaceChildren(root);
    this.paint();
  }

  /**
   * Sets every node's state (nodes not in `states` are plain) and names the current ones in the
   * caption.
   * @param {Map<string, NodeState>} states
   */
  highlight(states) {
    this.states = new Map(states);
    this.paint();
  }

  paint() {
    for (const [id, node] of this.nodes) {
      const state = this.states.get(id);
      if (state === undefined) node.removeAttribute("data-state");
      else node.setAttribute("data-state", state);
      if (state !== undefined && state !== "visited") node.setAttribute("aria-current", "step");
      else node.removeAttribute("aria-current");
    }
    const current = [...this.states.entries()].filter(([, state]) => state !== "visited");
    this.caption.textContent = current.length === 0 ? "" : `Now: ${current.map(([id, state]) => `${nodeLabel(id)} (${CAPTION[/** @type {keyof typeof CAPTION} */ (state)]})`).join(", ")}`;
  }
}
