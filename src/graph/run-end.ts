import { ToolMessage } from "@langchain/core/messages";
import { failureResult, toolMessageContent } from "../tools/registry.js";
import { messageText, viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue, StopReason } from "./state.js";

/** What ending a run writes: the state update and the TOOL_NOT_RUN answers it adds to the messages. */
export interface RunEnd {
  /** `answer`, `run_start` and the run's counts (`model_rounds`, `tool_calls`, `usage`). */
  update: AgentStateUpdate;
  /** One answer per call left unanswered, to append after `added`. */
  closing: ToolMessage[];
}

/**
 * How the guard ends a run it decided to stop with `reason`, given the messages its own step adds
 * first (`added`: its refusals): keeps the answer (the last AI text of the run, partial or not) and
 * the run's counts, answers every call left unanswered with TOOL_NOT_RUN (the run stopped before
 * it started; the thread stays valid for the next run) and moves `run_start` past this run.
 */
export function endRun(state: AgentStateValue, reason: StopReason, added: readonly ToolMessage[]): RunEnd {
  const all = added.length === 0 ? state.messages : [...state.messages, ...added];
  const view = viewRun(all, state.run_start);
  const closing = view.pending.map(
    (call) =>
      new ToolMessage({
        content: toolMessageContent(failureResult(call.name, "TOOL_NOT_RUN", `not run: the run stopped (${reason}) before this call started`)),
        tool_call_id: call.id,
        name: call.name,
        status: "error",
      }),
  );
  const answerSource = [...view.messages].reverse().find((m) => m.getType() === "ai" && messageText(m).trim() !== "");
  return {
    update: {
      answer: answerSource === undefined ? null : messageText(answerSource),
      run_start: all.length + closing.length,
      model_rounds: view.modelRounds,
      // executed calls only: refusals and the TOOL_NOT_RUN answers are not calls that ran
      tool_calls: view.toolCalls,
      usage: view.usage,
    },
    closing,
  };
}
