import type { StateSnapshot } from "@langchain/langgraph";
import type { RunRecord } from "../queue/run-record.js";

/**
 * Whether `after` (the thread's state when the graph returned without an interrupt pending) is a
 * stop at a static breakpoint: the graph returned with tasks still to run and none failed — the
 * run's own `interrupt_before` / `interrupt_after`, or one compiled into the graph or a subgraph
 * (`compile({ interruptBefore })`), since LangGraph returns early only there.
 */
export function stoppedAtBreakpoint(after: StateSnapshot): boolean {
  return after.next.length > 0 && after.tasks.every((task) => task.error === undefined || task.error === null);
}

/**
 * Whether the run's own latest checkpoint `state` is one where LangGraph stops for the run's
 * `interrupt_before`: a step's checkpoint (not the run's entry, where a breakpoint is passed)
 * whose next tasks include a breakpoint node. A later attempt finds the run stopped there.
 */
export function reachedBreakpoint(run: Pick<RunRecord, "interrupt_before">, state: StateSnapshot): boolean {
  const nodes = run.interrupt_before;
  if (nodes === null || state.metadata?.source !== "loop") return false;
  return state.next.some((node) => nodes.includes("*") || nodes.includes(node));
}
