import type { StateSnapshot } from "@langchain/langgraph";
import type { RunRecord } from "../queue/run-record.js";

/**
 * Whether `after` (the thread's state when the graph returned without an interrupt pending) is a
 * stop at one of the run's static breakpoints: the graph still has tasks and the run set any.
 */
export function stoppedAtBreakpoint(run: Pick<RunRecord, "interrupt_before" | "interrupt_after">, after: StateSnapshot): boolean {
  return after.next.length > 0 && (run.interrupt_before !== null || run.interrupt_after !== null);
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
