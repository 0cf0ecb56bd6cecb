import type { ProposedToolCall } from "../tools/types.js";

/** One call waiting for a human, in LangChain's human-in-the-loop shape plus devmind's fields. */
export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description: string;
  tool_call_id: string;
  risk: "low" | "medium" | "high";
}

/** A decision a reviewer may make on an action. */
export type DecisionType = "approve" | "edit" | "reject";

/**
 * How one tool's calls may be decided, under both spellings: `@langchain/langgraph-sdk`'s
 * `useStream` keeps `reviewConfigs` over `review_configs` when both exist and aliases only
 * `allowedDecisions` in it, so Agent Chat UI (which reads `review_configs[].action_name`) needs
 * `action_name` in the camelCase list too.
 */
export interface ReviewConfig {
  actionName: string;
  allowedDecisions: DecisionType[];
  action_name: string;
  allowed_decisions: DecisionType[];
}

/**
 * The interrupt value of an approval pause (CONTRACT section 5): LangChain JS's camelCase
 * human-in-the-loop shape, with the snake_case copies that Python-first UIs (Agent Chat UI) read.
 */
export interface ApprovalRequest {
  actionRequests: ActionRequest[];
  reviewConfigs: ReviewConfig[];
  action_requests: ActionRequest[];
  review_configs: ReviewConfig[];
}

/** One human decision, normalised. */
export type Decision =
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

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function normalise(raw: Record<string, unknown>, call: ProposedToolCall): Decision | undefined {
  const type = raw["type"];
  if (type === "approve") return { type: "approve" };
  if (type === "reject") return { type: "reject", message: typeof raw["message"] === "string" ? raw["message"] : null };
  if (type === "edit") {
    const action = asRecord(raw["editedAction"]) ?? asRecord(raw["edited_action"]);
    const args = asRecord(action?.["args"]);
    if (action === undefined || args === undefined) return undefined;
    if (action["name"] !== undefined && action["name"] !== call.name) {
      return { type: "reject", message: `the edit changed the tool from ${call.name} to ${String(action["name"])}, which is not allowed` };
    }
    return { type: "edit", args };
  }
  return undefined;
}

/**
 * Applies a resume value `{decisions: [...]}` to the open calls: a decision with `tool_call_id`
 * decides that call; decisions without one are matched to the open calls in order. Malformed
 * entries and unknown ids are ignored, so the guard asks again for whatever is still open.
 */
export function applyDecisions(resume: unknown, open: readonly ApprovalCandidate[], decided: Map<string, Decision>): void {
  const list = asRecord(resume)?.["decisions"];
  if (!Array.isArray(list)) return;
  const byId = new Map(open.map((c) => [c.call.id, c]));
  const inOrder = [...open];
  for (const entry of list) {
    const raw = asRecord(entry);
    if (raw === undefined) continue;
    const id = raw["tool_call_id"];
    const candidate = typeof id === "string" ? byId.get(id) : inOrder.find((c) => !decided.has(c.call.id));
    if (candidate === undefined || decided.has(candidate.call.id)) continue;
    const decision = normalise(raw, candidate.call);
    if (decision !== undefined) decided.set(candidate.call.id, decision);
  }
}
