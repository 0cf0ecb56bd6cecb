/**
 * The human-in-the-loop vocabulary shared by every graph and the runtime: LangChain JS's HITL
 * middleware interrupt shape (what `createAgent`'s middleware raises and devmind's agent raises),
 * checked wherever an interrupt comes from.
 */

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

/** An interrupt value in LangChain's human-in-the-loop shape (`actionRequests` + `reviewConfigs`). */
export interface HitlRequest {
  actionRequests: { name: string; args?: unknown; description?: string; tool_call_id?: string }[];
  reviewConfigs?: { actionName: string; allowedDecisions: string[] }[];
}

/** True when an interrupt value has LangChain's human-in-the-loop shape. */
export function isHitlRequest(value: unknown): value is HitlRequest {
  const actions = (value as { actionRequests?: unknown } | null)?.actionRequests;
  return value !== null && typeof value === "object" && Array.isArray(actions) && actions.every((a) => typeof (a as { name?: unknown } | null)?.name === "string");
}


/**
 * An interrupt value as UIs read it: a value in LangChain's human-in-the-loop shape, whichever
 * graph raised it, gets the snake_case copies Python-first UIs read (`action_requests`,
 * `review_configs: [{action_name, allowed_decisions}]`, and both spellings in each review config:
 * `useStream` keeps `reviewConfigs` over `review_configs`, see ReviewConfig); anything else, and
 * the value's own fields, as they are. The stored value is never changed.
 */
export function withHitlCopies(value: unknown): unknown {
  if (!isHitlRequest(value)) return value;
  const raw = value as HitlRequest & Record<string, unknown>;
  const configs = (raw.reviewConfigs ?? []).map((config) => {
    const name = config.actionName ?? (config as { action_name?: string }).action_name;
    const allowed = config.allowedDecisions ?? (config as { allowed_decisions?: string[] }).allowed_decisions;
    return { ...config, actionName: name, allowedDecisions: allowed, action_name: name, allowed_decisions: allowed };
  });
  return { ...raw, reviewConfigs: configs, action_requests: raw.actionRequests, review_configs: configs };
}
