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

