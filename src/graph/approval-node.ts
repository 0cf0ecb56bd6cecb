import { ToolMessage } from "@langchain/core/messages";
import { interrupt, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import { applyDecisions, approvalRequest, type ApprovalCandidate, type DecisionOutcome } from "./approvals.js";
import { emit, type EventSink } from "../vocabulary/events.js";
import { approvalCandidates } from "./guard.js";
import { readRunContext } from "./run-context.js";
import { viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

interface ApprovalDeps {
  registry: ToolRegistry;
  events?: EventSink | undefined;
}

function askForApproval(candidates: ApprovalCandidate[], sinks: EventSink[]): Map<string, DecisionOutcome> {
  const decided = new Map<string, DecisionOutcome>();
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
 * Asks a human about the calls the guard sent here (its decision's `requests`): pauses the run
 * with `interrupt()` in LangChain's human-in-the-loop shape, stays paused until each call has a
 * decision (the node re-runs from the top on resume, so everything before the interrupt is
 * deterministic), then records approved (possibly edited) arguments for the guard, answers
 * rejected calls with APPROVAL_REJECTED, and moves the deadline by the time the pause took (from
 * the decision's `at`). The guard decides what happens next.
 */
export function createApprovalNode(deps: ApprovalDeps) {
  return function approval(state: AgentStateValue, config: LangGraphRunnableConfig): AgentStateUpdate {
    const context = readRunContext(config);
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    const decision = state.decision;
    // a thread paused before the guard recorded its requests (an older checkpoint) is asked about
    // the calls that need approval, as the guard would list them
    const candidates =
      decision?.next === "approval" ? decision.requests : approvalCandidates(viewRun(state.messages, state.run_start).pending, state.approvals, deps.registry);
    if (candidates.length === 0) return {};
    // inside a run, the runtime reports every HITL interrupt as approval.requested, whichever graph raised it
    const decisions = askForApproval(candidates, deps.events === undefined ? [] : [deps.events]);
    // the time a human took does not count toward the run's deadline
    const pausedMs = decision?.next === "approval" ? Math.max(0, Date.now() - decision.at) : 0;
    const timing: AgentStateUpdate = state.deadline_at === null || pausedMs === 0 ? {} : { deadline_at: state.deadline_at + pausedMs };
    const approvals = { ...state.approvals };
    const rejected: ToolMessage[] = [];
    for (const { call } of candidates) {
      const decided = decisions.get(call.id);
      if (decided?.type === "approve") approvals[call.id] = { args: call.args };
      else if (decided?.type === "edit") approvals[call.id] = { args: decided.args };
      else {
        const reason = decided?.type === "reject" && decided.message ? `rejected by a reviewer: ${decided.message}` : "rejected by a reviewer";
        rejected.push(new ToolMessage({ content: toolMessageContent(failureResult(call.name, "APPROVAL_REJECTED", reason)), tool_call_id: call.id, name: call.name, status: "error" }));
        for (const sink of sinks) emit(sink, { type: "tool.call.finished", tool_call_id: call.id, tool: call.name, ok: false, error_code: "APPROVAL_REJECTED", duration_ms: 0, truncated: false });
      }
    }
    return rejected.length > 0 ? { ...timing, approvals, messages: rejected } : { ...timing, approvals };
  };
}
