import { ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import { emit, type EventSink } from "./events.js";
import { decide, guardInputs } from "./guard.js";
import type { AgentLimits } from "./limits.js";
import { readRunContext } from "./run-context.js";
import { messageText, viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

interface FinishDeps {
  registry: ToolRegistry;
  limits: AgentLimits;
  events?: EventSink | undefined;
}

/**
 * Ends a run the guard decided to stop: records the stop reason, the answer (the last AI text of
 * the run, partial or not), the error and the run's counts, answers any call left unanswered (so
 * the thread stays valid for the next run) and moves `run_start` past this run. The guard's
 * conditions only ever become true with time, so re-deciding here gives the same reason.
 */
export function createFinishNode(deps: FinishDeps) {
  return function finish(state: AgentStateValue, config: LangGraphRunnableConfig): AgentStateUpdate {
    const context = readRunContext(config);
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    const view = viewRun(state.messages, state.run_start);
    const decision = decide(state, view, guardInputs(deps.registry, deps.limits, config));
    const { reason, error } =
      decision.kind === "stop" ? decision : { reason: "internal_error" as const, error: { code: "INTERNAL_ERROR", message: `finish reached while the guard says ${decision.kind}` } };
    const closing = view.pending.map(
      (call) =>
        new ToolMessage({
          content: toolMessageContent(failureResult(call.name, "PERMISSION_DENIED", `not run: the run stopped (${reason})`)),
          tool_call_id: call.id,
          name: call.name,
          status: "error",
        }),
    );
    const answerSource = [...view.messages].reverse().find((m) => m.getType() === "ai" && messageText(m).trim() !== "");
    for (const sink of sinks) emit(sink, { type: "graph.stopped", stop_reason: reason });
    const update: AgentStateUpdate = {
      stop_reason: reason,
      answer: answerSource === undefined ? null : messageText(answerSource),
      error,
      run_start: state.messages.length + closing.length,
      model_rounds: view.modelRounds,
      tool_calls: view.toolCalls + closing.length,
      usage: view.usage,
    };
    if (closing.length > 0) update.messages = closing;
    return update;
  };
}
