import { ToolMessage } from "@langchain/core/messages";
import { interrupt, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import { applyDecisions, approvalRequest, type ApprovalCandidate, type Decision } from "./approvals.js";
import { emit, type EventSink } from "./events.js";
import { readRunContext } from "./run-context.js";
import { viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

interface ApprovalDeps {
  registry: ToolRegistry;
  events?: EventSink | undefined;
}

function askForApproval(candidates: ApprovalCandidate[], sinks: EventSink[]): Map<string, Decision> {
  const decided = new Map<string, Decision>();
  // each pass returns the next resume value or pauses the run; the node re-runs from the top on
  // resume, so everything before the first interrupt is deterministic
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
 * The approval gate: pauses the run with `interrupt()` for every call of the step that needs a
 * human (LangChain's human-in-the-loop shape), stays paused until each has a decision, then
 * records approved (possibly edited) arguments for the guard, answers rejected calls with
 * APPROVAL_REJECTED, and moves the deadline by the time the pause took (from `paused_at`, set by
 * the `pause` step before it, since nothing can be written before an interrupt).
 */
export function createApprovalNode(deps: ApprovalDeps) {
  return function approval(state: AgentStateValue, config: LangGraphRunnableConfig): AgentStateUpdate {
    const context = readRunContext(config);
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    const view = viewRun(state.messages, state.run_start);
    const candidates: ApprovalCandidate[] = [];
    for (const call of view.pending) {
      if (state.approvals[call.id] !== undefined) continue;
      const checked = deps.registry.check(call);
      if (checked.kind === "ready" && checked.needsApproval) candidates.push({ call, description: checked.tool.description, risk: checked.risk });
    }
    if (candidates.length === 0) return {};
    const decisions = askForApproval(candidates, sinks);
    // the time a human took does not count toward the run's deadline
    const pausedMs = state.paused_at === null ? 0 : Math.max(0, Date.now() - state.paused_at);
    const timing: AgentStateUpdate = { paused_at: null, ...(state.deadline_at === null ? {} : { deadline_at: state.deadline_at + pausedMs }) };
    const approvals = { ...state.approvals };
    const rejected: ToolMessage[] = [];
    for (const { call } of candidates) {
      const decision = decisions.get(call.id);
      if (decision?.type === "approve") approvals[call.id] = { args: call.args };
      else if (decision?.type === "edit") approvals[call.id] = { args: decision.args };
      else {
        const reason = decision?.type === "reject" && decision.message ? `rejected by a reviewer: ${decision.message}` : "rejected by a reviewer";
        rejected.push(new ToolMessage({ content: toolMessageContent(failureResult(call.name, "APPROVAL_REJECTED", reason)), tool_call_id: call.id, name: call.name, status: "error" }));
        for (const sink of sinks) emit(sink, { type: "tool.call.finished", tool_call_id: call.id, tool: call.name, ok: false, error_code: "APPROVAL_REJECTED", duration_ms: 0, truncated: false });
      }
    }
    return rejected.length > 0 ? { ...timing, approvals, messages: rejected } : { ...timing, approvals };
  };
}
