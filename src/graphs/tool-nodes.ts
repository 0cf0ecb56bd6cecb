import type { CompiledGraphLike } from "./graph-kinds.js";

/** A Pregel node as LangGraph keeps it: its runnable and the subgraphs it declared. */
interface PregelNodeLike {
  bound?: unknown;
  subgraphs?: unknown[];
}

interface PregelLike {
  nodes?: Record<string, PregelNodeLike>;
  getSubgraphs?: (namespace?: string, recurse?: boolean) => Iterable<[string, unknown]>;
}

const known = new WeakMap<object, boolean>();

/**
 * True for a runnable that runs LangChain tools: a tool node (LangGraph's `ToolNode`,
 * LangChain's agent tool node, `ledgeredToolNode`: a runnable holding a `tools` array) or a
 * LangChain tool used as a node; a sequence is looked into step by step.
 */
function runsTools(runnable: unknown): boolean {
  if (runnable === null || typeof runnable !== "object") return false;
  const candidate = runnable as { tools?: unknown; lc_namespace?: unknown; steps?: unknown };
  if (Array.isArray(candidate.tools)) return true;
  if (Array.isArray(candidate.lc_namespace) && candidate.lc_namespace.includes("tools")) return true;
  return Array.isArray(candidate.steps) && candidate.steps.some(runsTools);
}

function nodesRunTools(graph: PregelLike): boolean {
  for (const node of Object.values(graph.nodes ?? {})) {
    if (runsTools(node.bound) || (node.subgraphs ?? []).some(runsTools)) return true;
  }
  return false;
}

/**
 * Whether runs of `graph` record LangGraph's `tools` stream: when the graph, or a subgraph
 * LangGraph finds in it (`getSubgraphs`, recursively), has a tool node or a tool as a node, and
 * for any graph that is not a Pregel graph (nothing to look into). A graph without one runs
 * without LangGraph's tool callback handler, which would otherwise be called around every node,
 * edge and channel write of every step. Decided once per compiled graph.
 */
export function graphRunsTools(graph: CompiledGraphLike): boolean {
  const cached = known.get(graph);
  if (cached !== undefined) return cached;
  const pregel = graph as CompiledGraphLike & PregelLike;
  let answer: boolean;
  if (pregel.nodes === undefined || typeof pregel.nodes !== "object" || typeof pregel.getSubgraphs !== "function") {
    answer = true;
  } else {
    answer = nodesRunTools(pregel);
    if (!answer) {
      for (const [, subgraph] of pregel.getSubgraphs(undefined, true)) {
        if (nodesRunTools(subgraph as PregelLike)) {
          answer = true;
          break;
        }
      }
    }
  }
  known.set(graph, answer);
  return answer;
}

/**
 * Every node of `graph` and of the subgraphs LangGraph finds in it (`getSubgraphs`, recursively):
 * its path (`node`, or `sub|node` inside subgraph `sub`) and its runnable. Nothing for a graph
 * that is not a Pregel graph.
 */
export function* graphNodes(graph: CompiledGraphLike): Generator<{ path: string; runnable: unknown }> {
  const pregel = graph as CompiledGraphLike & PregelLike;
  if (pregel.nodes === undefined || typeof pregel.nodes !== "object") return;
  const levels: [string, PregelLike][] = [["", pregel]];
  if (typeof pregel.getSubgraphs === "function") for (const [namespace, subgraph] of pregel.getSubgraphs(undefined, true)) levels.push([`${namespace}|`, subgraph as PregelLike]);
  for (const [prefix, level] of levels) {
    for (const [name, node] of Object.entries(level.nodes ?? {})) {
      yield { path: `${prefix}${name}`, runnable: node.bound };
    }
  }
}

