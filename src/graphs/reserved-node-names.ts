import { GraphDefinitionError } from "../errors.js";
import type { CompiledGraphLike } from "./graph-kinds.js";
import { graphNodes } from "./tool-nodes.js";

/**
 * Node names starting with `__` that LangGraph gives nodes of its own: the graph's start, and the
 * error handlers `addNode(..., { errorHandler })` and `setNodeDefaults({ errorHandler })` register.
 */
function isLangGraphsOwn(name: string): boolean {
  return name === "__start__" || name === "__default_error_handler__" || name.startsWith("__error_handler__");
}

/**
 * The nodes of `graph` (and of its subgraphs, as `sub|node`) whose names collide with devmind's
 * own: a name starting with `__` is LangGraph's and devmind's (`__interrupt__`, `__error__`,
 * `__pregel_*`, `__devmind_*`); devmind's streams, history and timelines treat such tasks as
 * internal and leave them out, so the node's updates would silently vanish. LangGraph's own nodes
 * (its start and error handlers) are not counted.
 */
export function reservedNodeNames(graph: CompiledGraphLike): string[] {
  const found: string[] = [];
  for (const { path } of graphNodes(graph)) {
    const name = path.slice(path.lastIndexOf("|") + 1);
    if (name.startsWith("__") && !isLangGraphsOwn(name)) found.push(path);
  }
  return found;
}

/**
 * Refuses a graph with a node named like devmind's own (`reservedNodeNames`): a
 * GraphDefinitionError (GRAPH_INVALID; the CLI exits 2) naming the graph and the nodes, before
 * anything of it runs or is stored.
 */
export function refuseReservedNodeNames(graph: CompiledGraphLike, id: string): void {
  const reserved = reservedNodeNames(graph);
  if (reserved.length === 0) return;
  throw new GraphDefinitionError(`graph ${id}: ${reservedNamesMessage(reserved)}`, { graph: id, nodes: reserved.slice(0, 20) });
}

/** What is wrong with the `reserved` nodes of a graph, naming them (the first five). */
export function reservedNamesMessage(reserved: readonly string[]): string {
  const named = reserved.slice(0, 5).map((name) => JSON.stringify(name)).join(", ");
  const one = reserved.length === 1;
  return `node ${named} ${one ? "has a name" : "have names"} reserved for LangGraph and devmind (starting with "__"; their streams leave such nodes out): rename ${one ? "it" : "them"}`;
}
