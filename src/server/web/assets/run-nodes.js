// Where a run is in its graph, from its events (`node.started` / `node.finished` of the top level,
// the run's end) and, between events, from the thread's state (`next`: the nodes that run when it
// continues). Pure (no DOM), so it is unit-tested in Node; the graph drawing paints its `states()`.

const END = "__end__";

/** @typedef {import("./graph-view.js").NodeState} NodeState */

/** The node states of one run view (it follows a thread's runs across resumes). */
export class RunNodes {
  constructor() {
    /** @type {Set<string>} */
    this.running = new Set();
    /** @type {Set<string>} */
    this.visited = new Set();
    /** @type {Set<string>} */
    this.waiting = new Set();
    /** @type {Set<string>} */
    this.failed = new Set();
    /** @type {string[]} */
    this.next = [];
    this.ended = false;
    /** The run stopped at an interrupt and its thread waits. */
    this.paused = false;
  }

  /**
   * Applies one run event; returns whether the node states changed.
   * @param {Record<string, any>} event
   * @returns {boolean}
   */
  apply(event) {
    const top = Array.isArray(event.ns) ? event.ns.length === 0 : true;
    switch (event.type) {
      case "node.started":
        if (!top || typeof event.node !== "string") return false;
        this.running.add(event.node);
        this.waiting.delete(event.node);
        this.failed.delete(event.node);
        this.ended = false;
        this.paused = false;
        return true;
      case "node.finished":
        if (!top || typeof event.node !== "string") return false;
        this.running.delete(event.node);
        this.visited.add(event.node);
        if (event.error) this.failed.add(event.node);
        if (event.interrupted === true) this.waiting.add(event.node);
        return true;
      case "run.started":
      case "run.resumed":
        this.ended = false;
        this.paused = false;
        return true;
      case "resume.given":
        this.waiting.clear();
        this.paused = false;
        return true;
      case "run.interrupted":
        this.running.clear();
        this.paused = true;
        return true;
      case "run.succeeded":
        this.running.clear();
        this.waiting.clear();
        this.ended = true;
        return true;
      case "run.failed":
      case "run.timeout":
        for (const node of this.running) this.failed.add(node);
        this.running.clear();
        return true;
      case "run.cancelled":
        this.running.clear();
        return true;
      default:
        return false;
    }
  }

  /**
   * The thread's `next` nodes (from `GET /threads/{id}/state`): where a paused run continues.
   * @param {unknown} next
   */
  setNext(next) {
    this.next = Array.isArray(next) ? next.filter((item) => typeof item === "string") : [];
  }

  /**
   * Each node's state for the drawing: the ones running; else (paused) the ones waiting — those
   * an interrupt stopped, or the thread's next ones; the failed ones; the end once reached;
   * every node that ran as visited.
   * @returns {Map<string, NodeState>}
   */
  states() {
    /** @type {Map<string, NodeState>} */
    const states = new Map();
    for (const node of this.visited) states.set(node, "visited");
    if (this.paused && this.running.size === 0) {
      const waiting = this.waiting.size > 0 ? [...this.waiting] : this.next;
      for (const node of waiting) states.set(node, "waiting");
    }
    for (const node of this.failed) states.set(node, "failed");
    for (const node of this.running) states.set(node, "running");
    if (this.ended && this.running.size === 0) states.set(END, "ended");
    return states;
  }
}
