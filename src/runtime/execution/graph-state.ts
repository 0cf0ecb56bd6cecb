import type { StateSnapshot } from "@langchain/langgraph";
import type { RunInterrupt } from "../queue/run-record.js";

/**
 * The interrupts a graph's state waits on, in task order: each with LangGraph's interrupt id,
 * its value, and the namespace of the task that raised it (`["node:taskId"]`; an interrupt
 * raised inside a subgraph surfaces on the parent task that runs the subgraph). A snapshot read
 * with `subgraphs: true` is walked down to the subgraph's own task.
 */
export function interruptsOf(state: StateSnapshot | { tasks?: StateSnapshot["tasks"] }): RunInterrupt[] {
  const found: RunInterrupt[] = [];
  const seen = new Set<string>();
  for (const task of state.tasks ?? []) {
    for (const item of task.interrupts ?? []) {
      const id = typeof item.id === "string" ? item.id : `${task.id}:${found.length}`;
      if (seen.has(id)) continue;
      seen.add(id);
      found.push({ id, value: item.value === undefined ? null : item.value, ns: [`${task.name}:${task.id}`] });
    }
  }
  return found;
}

/** The parts of a compiled graph `nodesGone` reads: its nodes and its checkpointer. */
interface GraphWithNodes {
  nodes?: Record<string, unknown>;
  checkpointer?: unknown;
}

const BRANCH_TO = "branch:to:";

/**
 * The nodes a checkpoint waits at that `graph` does not have: a checkpoint written by an earlier
 * version of the graph whose next node was renamed or removed (its `branch:to:<node>` channel
 * updated since that node last ran). LangGraph plans no task for them, so the run looks ended.
 * Empty when the graph has every one, or the checkpoint cannot be read.
 */
export async function nodesGone(graph: GraphWithNodes, state: StateSnapshot): Promise<string[]> {
  const nodes = graph.nodes;
  const saver = graph.checkpointer as { getTuple?: (config: unknown) => Promise<{ checkpoint: { channel_versions: Record<string, unknown>; versions_seen: Record<string, Record<string, unknown>> } } | undefined> } | undefined;
  if (nodes === undefined || typeof saver?.getTuple !== "function") return [];
  const tuple = await saver.getTuple(state.config);
  if (tuple === undefined) return [];
  const { channel_versions: versions, versions_seen: seen } = tuple.checkpoint;
  const gone: string[] = [];
  for (const [channel, version] of Object.entries(versions)) {
    if (!channel.startsWith(BRANCH_TO)) continue;
    const node = channel.slice(BRANCH_TO.length);
    if (node in nodes) continue;
    const last = seen[node]?.[channel];
    if (last === undefined || String(version) > String(last)) gone.push(node);
  }
  return gone;
}
