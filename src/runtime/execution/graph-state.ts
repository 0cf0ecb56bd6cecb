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
