import type { AgentStatus, AgentStatusEntry, AgentTreeNode, Event as ProtocolEvent, LifecycleData } from "@langchain/protocol";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { Runtime } from "../../runtime/runtime.js";
import { runProjection } from "./thread-projection.js";

/**
 * Every protocol event of runs `fromOrdinal`.. of the thread (`runs`, oldest first) after
 * `since`, as a subscription gets them, up to what is stored now: a finished run whole, the
 * running one up to where its stream waits for more. For a reconnect's count and an agent tree.
 */
export async function* eventsUntilNow(runtime: Runtime, runs: readonly RunRecord[], fromOrdinal: number, since: number | undefined): AsyncGenerator<ProtocolEvent> {
  for (let ordinal = Math.max(fromOrdinal, 1); ordinal <= runs.length; ordinal += 1) {
    const run = runs[ordinal - 1] as RunRecord;
    const now = new AbortController();
    yield* runProjection(runtime, run, ordinal, since, now.signal, { idle: () => now.abort() });
    // a run that is still running is the thread's last one worth reading now
    if (now.signal.aborted) return;
  }
}

interface Known {
  namespace: string[];
  status: AgentStatus;
  graphName: string;
}

/**
 * The agent tree of one run (`@langchain/protocol`'s `AgentTreeNode`), as the official server
 * builds it from the lifecycle it tracks: the root (the run's graph; `running` until it ends,
 * then its end) and each subgraph namespace the run started, with its latest lifecycle status,
 * children sorted by namespace. Derived from the run's stored events and checkpoints (the
 * `lifecycle` events a subscription gets), so any process answers alike.
 */
export async function runAgentTree(runtime: Runtime, runs: readonly RunRecord[], run: RunRecord): Promise<AgentTreeNode> {
  const ordinal = runs.findIndex((candidate) => candidate.run_id === run.run_id) + 1;
  const known = new Map<string, Known>();
  let root: AgentStatus = "running";
  const now = new AbortController();
  for await (const event of runProjection(runtime, run, ordinal, undefined, now.signal, { idle: () => now.abort() })) {
    if (event.method !== "lifecycle") continue;
    const namespace = event.params.namespace;
    const data = event.params.data as LifecycleData;
    if (namespace.length === 0) {
      if (data.event !== "started") root = data.event;
      continue;
    }
    const key = JSON.stringify(namespace);
    const graphName = known.get(key)?.graphName ?? data.graph_name ?? namespace[namespace.length - 1] ?? "";
    known.set(key, { namespace, status: data.event, graphName });
  }
  const build = (namespace: string[], status: AgentStatus, graphName: string): AgentTreeNode => {
    const children = [...known.values()]
      .filter((candidate) => candidate.namespace.length === namespace.length + 1 && namespace.every((segment, index) => candidate.namespace[index] === segment))
      .sort((left, right) => JSON.stringify(left.namespace).localeCompare(JSON.stringify(right.namespace)))
      .map((child) => build(child.namespace, child.status, child.graphName));
    return { namespace, status, graph_name: graphName, ...(children.length > 0 ? { children } : {}) };
  };
  return build([], root, run.graph_id);
}

/** A tree's nodes, depth first: the `current_namespaces` of a reconnect's answer. */
export function treeStatuses(tree: AgentTreeNode): AgentStatusEntry[] {
  return [{ namespace: tree.namespace, status: tree.status }, ...(tree.children ?? []).flatMap(treeStatuses)];
}
