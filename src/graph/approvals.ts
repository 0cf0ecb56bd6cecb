import type { ProposedToolCall } from "../tools/types.js";
import { parseDecision, type Decision } from "../vocabulary/decisions.js";
import type { ActionRequest, ApprovalRequest, ReviewConfig } from "../vocabulary/hitl.js";
export type { ActionRequest, ApprovalRequest, DecisionType, ReviewConfig } from "../vocabulary/hitl.js";

/** What a decision (`Decision` of ./decisions.ts) means for the call it decides. */
export type DecisionOutcome =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject"; message: string | null };

/** A call that needs approval, as the guard found it. */
export interface ApprovalCandidate {
  call: ProposedToolCall;
  description: string;
  risk: "low" | "medium" | "high";
}

/** Builds the interrupt value for the calls still undecided, in the model's order. */
export function approvalRequest(open: readonly ApprovalCandidate[]): ApprovalRequest {
  const names = [...new Set(open.map((c) => c.call.name))];
  const requests = (): ActionRequest[] =>
    open.map((c) => ({ name: c.call.name, args: c.call.args, description: c.description, tool_call_id: c.call.id, risk: c.risk }));
  const configs = (): ReviewConfig[] =>
    names.map((name) => ({ actionName: name, allowedDecisions: ["approve", "edit", "reject"], action_name: name, allowed_decisions: ["approve", "edit", "reject"] }));
  return { actionRequests: requests(), reviewConfigs: configs(), action_requests: requests(), review_configs: configs() };
}

function outcome(decision: Decision, call: ProposedToolCall): DecisionOutcome {
  if (decision.type === "approve") return { type: "approve" };
  if (decision.type === "reject") return { type: "reject", message: decision.message ?? null };
  const name = decision.editedAction.name;
  if (name !== undefined && name !== call.name) {
    return { type: "reject", message: `the edit changed the tool from ${call.name} to ${name}, which is not allowed` };
  }
  return { type: "edit", args: decision.editedAction.args };
}

/**
 * Applies a resume value `{decisions: [...]}` to the open calls: a decision with `tool_call_id`
 * decides that call; decisions without one are matched to the open calls in order. Malformed
 * entries and unknown ids are ignored, so the guard asks again for whatever is still open.
 */
export function applyDecisions(resume: unknown, open: readonly ApprovalCandidate[], decided: Map<string, DecisionOutcome>): void {
  const list = (resume !== null && typeof resume === "object" ? (resume as { decisions?: unknown }).decisions : undefined) ?? [];
  if (!Array.isArray(list)) return;
  const byId = new Map(open.map((c) => [c.call.id, c]));
  const inOrder = [...open];
  for (const [index, entry] of list.entries()) {
    let decision: Decision;
    try {
      decision = parseDecision(entry, index);
    } catch {
      continue;
    }
    const id = decision.tool_call_id;
    const candidate = id !== undefined ? byId.get(id) : inOrder.find((c) => !decided.has(c.call.id));
    if (candidate === undefined || decided.has(candidate.call.id)) continue;
    decided.set(candidate.call.id, outcome(decision, candidate.call));
  }
}
