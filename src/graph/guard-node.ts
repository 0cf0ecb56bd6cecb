import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Command, END, Send, interrupt, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import type { ProposedToolCall, ToolErrorCode } from "../tools/types.js";
import { applyDecisions, approvalRequest, type ApprovalCandidate, type Decision } from "./approvals.js";
import { emit, type EventSink } from "./events.js";
import type { AgentLimits } from "./limits.js";
import { readRunContext } from "./run-context.js";
import { messageText, viewRun, type RunView } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue, RunError, StopReason } from "./state.js";
import { firstStopBeforeModel } from "./stop-rules.js";

/** Payload of one `Send` to the tools node. */
export interface ToolTask {
  call: ProposedToolCall;
}

interface GuardDeps {
  registry: ToolRegistry;
  limits: AgentLimits;
  events?: EventSink | undefined;
}

function refusal(call: ProposedToolCall, code: ToolErrorCode, message: string): ToolMessage {
  return new ToolMessage({ content: toolMessageContent(failureResult(call.name, code, message)), tool_call_id: call.id, name: call.name, status: "error" });
}

/** Ends the run: answers any unanswered call (so the thread stays valid for the next run), records why. */
function stop(state: AgentStateValue, view: RunView, reason: StopReason, error: RunError | null, sinks: EventSink[]): Command {
  const closing = view.pending.map((call) => refusal(call, "PERMISSION_DENIED", `not run: the run stopped (${reason})`));
  const answerSource = [...view.messages].reverse().find((m) => m.getType() === "ai" && messageText(m).trim() !== "");
  const answer = answerSource === undefined ? null : messageText(answerSource);
  for (const sink of sinks) emit(sink, { type: "graph.stopped", stop_reason: reason });
  const update: AgentStateUpdate = {
    stop_reason: reason,
    answer,
    error,
    run_start: state.messages.length + closing.length,
    model_rounds: view.modelRounds,
    tool_calls: view.toolCalls + closing.length,
    usage: view.usage,
  };
  if (closing.length > 0) update.messages = closing;
  return new Command({ update, goto: END });
}

function askForApproval(candidates: ApprovalCandidate[], sinks: EventSink[]): Map<string, Decision> {
  const decided = new Map<string, Decision>();
  // each pass either returns the next resume value or pauses the run; the node re-runs on
  // resume, so everything before this loop must be deterministic
  for (let pass = 0; pass <= candidates.length * 4 + 8; pass += 1) {
    const open = candidates.filter((c) => !decided.has(c.call.id));
    if (open.length === 0) break;
    const request = approvalRequest(open);
    let resume: unknown;
    try {
      resume = interrupt(request);
    } catch (error) {
      if (isGraphInterrupt(error)) for (const sink of sinks) emit(sink, { type: "approval.requested", requests: request.actionRequests });
      throw error;
    }
    applyDecisions(resume, open, decided);
  }
  return decided;
}

/**
 * The hub: every step comes back here and only the guard decides where to go next. It enforces
 * the stop rules, answers calls that must not run (unknown tool, invalid arguments, policy
 * denial, limits), pauses for approval with `interrupt()`, and sends each approved call to the
 * tools node as its own task so a finished call is saved on its own and never re-run.
 */
export function createGuardNode(deps: GuardDeps) {
  return async function guard(state: AgentStateValue, config: LangGraphRunnableConfig): Promise<Command> {
    const context = readRunContext(config);
    const limits = { ...deps.limits, ...(context.limits ?? {}) };
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    const view = viewRun(state.messages, state.run_start);

    if (state.stop_reason !== null) return stop(state, view, state.stop_reason, state.error, sinks);
    if (context.cancelSignal?.aborted === true) return stop(state, view, "cancelled", null, sinks);

    if (view.pending.length === 0) {
      if (view.finalAnswer !== undefined) return stop(state, view, "completed", null, sinks);
      const reason = firstStopBeforeModel(view, state, limits, Date.now());
      if (reason !== null) return stop(state, view, reason.reason, reason.error, sinks);
      // nothing to write: every write would store a new channel version in the checkpoint
      return new Command({ goto: "model" });
    }

    if (state.deadline_at !== null && Date.now() >= state.deadline_at) return stop(state, view, "deadline", null, sinks);
    const remaining = limits.maxToolCalls - view.toolCalls;
    if (view.pending.length > remaining) {
      const message = `the model asked for ${view.pending.length} tool calls but only ${Math.max(0, remaining)} of ${limits.maxToolCalls} remain`;
      return stop(state, view, "max_tool_calls", { code: "MAX_TOOL_CALLS", message }, sinks);
    }

    const answered: BaseMessage[] = [];
    const ready: ProposedToolCall[] = [];
    const candidates: ApprovalCandidate[] = [];
    for (const call of view.pending) {
      const checked = deps.registry.check(call);
      if (checked.kind === "not_found") answered.push(refusal(call, "TOOL_NOT_FOUND", `no tool named ${JSON.stringify(call.name)}; available: ${deps.registry.names().join(", ")}`));
      else if (checked.kind === "invalid") answered.push(refusal(call, "INVALID_ARGUMENTS", checked.message));
      else if (checked.kind === "denied") answered.push(refusal(call, "PERMISSION_DENIED", checked.reason));
      else if (checked.needsApproval) candidates.push({ call, description: checked.tool.description, risk: checked.risk });
      else ready.push(call);
    }
    if (candidates.length > 0) {
      const decisions = askForApproval(candidates, sinks);
      for (const candidate of candidates) {
        const decision = decisions.get(candidate.call.id);
        if (decision === undefined || decision.type === "reject") {
          const reason = decision?.type === "reject" && decision.message ? `rejected by a reviewer: ${decision.message}` : "rejected by a reviewer";
          answered.push(refusal(candidate.call, "APPROVAL_REJECTED", reason));
        } else if (decision.type === "edit") ready.push({ ...candidate.call, args: decision.args });
        else ready.push(candidate.call);
      }
    }
    for (const message of answered) {
      const call = view.pending.find((c) => c.id === (message as ToolMessage).tool_call_id);
      for (const sink of sinks) {
        emit(sink, { type: "tool.call.finished", tool_call_id: call?.id ?? "", tool: call?.name ?? "", ok: false, error_code: JSON.parse(String(message.content)).error.code, duration_ms: 0, truncated: false });
      }
    }
    const update: AgentStateUpdate = { tool_calls: view.toolCalls + view.pending.length };
    if (answered.length > 0) update.messages = answered;
    if (ready.length === 0) return new Command({ update, goto: "guard" });
    return new Command({ update, goto: ready.map((call) => new Send("tools", { call } satisfies ToolTask)) });
  };
}
