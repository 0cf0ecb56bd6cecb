import { ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent } from "../tools/registry.js";
import { emit, type EventSink } from "../vocabulary/events.js";
import { readRunContext } from "./run-context.js";
import { messageText, viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";
import { runError } from "../vocabulary/stop-reasons.js";

/**
 * Ends a run the guard decided to stop, with the stop reason and error the guard recorded: keeps
 * the answer (the last AI text of the run, partial or not) and the run's counts, answers every
 * call left unanswered with TOOL_NOT_RUN (the run stopped before it started; the thread stays
 * valid for the next run) and moves `run_start` past this run. It decides nothing.
 */
export function createFinishNode(deps: { events?: EventSink | undefined }) {
  return function finish(state: AgentStateValue, config: LangGraphRunnableConfig): AgentStateUpdate {
    const context = readRunContext(config);
    const sinks = [deps.events, context.events];
    const view = viewRun(state.messages, state.run_start);
    // the guard always records why before routing here; a missing reason is a bug, said as such
    const reason = state.stop_reason ?? "internal_error";
    const error = runError("INTERNAL_ERROR", "the run reached finish without a stop reason");
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
    for (const sink of sinks) emit(sink, { type: "graph.stopped", stop_reason: reason });
    const update: AgentStateUpdate = {
      ...(state.stop_reason === null ? { stop_reason: reason, error } : {}),
      answer: answerSource === undefined ? null : messageText(answerSource),
      run_start: state.messages.length + closing.length,
      model_rounds: view.modelRounds,
      // executed calls only: the TOOL_NOT_RUN answers above are not calls that ran
      tool_calls: view.toolCalls,
      usage: view.usage,
    };
    if (closing.length > 0) update.messages = closing;
    return update;
  };
}
