import { ToolMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { DrainError, RunCancelledError } from "../errors.js";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import type { ProposedToolCall, SideEffect, ToolResult } from "../tools/types.js";
import { emit, type EventSink } from "../vocabulary/events.js";
import type { ToolTask } from "./guard.js";
import { readRunContext } from "./run-context.js";
import type { AgentStateUpdate } from "./state.js";

interface ToolsDeps {
  registry: ToolRegistry;
  events?: EventSink | undefined;
}

function answer(call: ProposedToolCall, result: ToolResult): ToolMessage {
  return new ToolMessage({ content: toolMessageContent(result), tool_call_id: call.id, name: call.name, status: result.ok ? "success" : "error" });
}

function notRun(call: ProposedToolCall): ToolResult {
  return failureResult(call.name, "TOOL_NOT_RUN", "not run: the run was cancelled before this call started");
}

/** A call a cancel aborted mid-flight: cancelled, or of unknown outcome when it may have changed something. */
function cancelled(call: ProposedToolCall, sideEffect: SideEffect): ToolResult {
  return sideEffect === "none"
    ? failureResult(call.name, "TOOL_CANCELLED", "the run was cancelled while this call was running; it was stopped")
    : failureResult(call.name, "TOOL_OUTCOME_UNKNOWN", "the run was cancelled while this call was running; it may or may not have taken effect");
}

/**
 * Runs one tool call (one `Send` from the guard): validation, timeout, envelope and truncation
 * happen in the registry, which never throws for a tool failure. With a ledger in the run context
 * a call it already knows is not run again: its stored result is used. A cancel still answers the
 * call, so the thread stays valid: TOOL_NOT_RUN before it started, TOOL_CANCELLED mid-call
 * (TOOL_OUTCOME_UNKNOWN for a tool with side effects); the guard then stops the run.
 */
export function createToolsNode(deps: ToolsDeps) {
  return async function tools(task: ToolTask, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const context = readRunContext(config);
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    if (context.drainSignal?.aborted === true) throw new DrainError();
    const { call } = task;
    const started = Date.now();
    const checked = deps.registry.check(call);
    // a call the cancel stopped before it began leaves no ledger row: it never started
    const entry = context.cancelSignal?.aborted === true
      ? ({ state: "done", result: notRun(call) } as const)
      : context.ledger
      ? await context.ledger.begin(call, {
          tool: call.name,
          idempotent: checked.kind === "ready" && checked.tool.idempotent,
          needsApproval: checked.kind === "ready" && checked.needsApproval,
        })
      : ({ state: "run" } as const);
    let result: ToolResult;
    if (entry.state === "done") {
      result = entry.result;
    } else if (context.cancelSignal?.aborted === true) {
      result = notRun(call);
      await context.ledger?.complete(call, result);
    } else {
      for (const sink of sinks) emit(sink, { type: "tool.call.started", tool_call_id: call.id, tool: call.name, args: call.args });
      try {
        result = await deps.registry.execute(call, { signal: context.cancelSignal, runId: context.runId, threadId: context.threadId });
      } catch (error) {
        if (!(error instanceof RunCancelledError)) throw error;
        result = cancelled(call, checked.kind === "ready" ? checked.tool.sideEffect : "none");
      }
      await context.ledger?.complete(call, result);
    }
    for (const sink of sinks) {
      emit(sink, {
        type: "tool.call.finished",
        tool_call_id: call.id,
        tool: call.name,
        ok: result.ok,
        error_code: result.ok ? null : result.error.code,
        duration_ms: Date.now() - started,
        truncated: result.truncated === true,
      });
    }
    return { messages: [answer(call, result)] };
  };
}
