import { DevmindError } from "../../errors.js";
import { refuseChangedArgs } from "./decide.js";
import type { HitlRequest } from "../../vocabulary/hitl.js";
import { isArgsDigest } from "../../vocabulary/decisions.js";
export { isHitlRequest, type HitlRequest } from "../../vocabulary/hitl.js";

function fail(message: string, details: Record<string, unknown> = {}): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details });
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Validates decisions for a HITL interrupt of a user graph exactly as LangChain's middleware will
 * read them — before anything is stored: one decision per action request, in order; each type
 * among the request's `allowedDecisions`; an edit with `editedAction: { name, args }` (args an
 * object; snake_case `edited_action` accepted); a reject's `message` a string. Returns the
 * resume value `{ decisions }` in LangChain's camelCase form. RUN_INPUT_INVALID otherwise.
 */
export function planHitlResume(body: unknown, request: HitlRequest): { decisions: Record<string, unknown>[] } {
  const list = record(body)?.["decisions"];
  if (!Array.isArray(list)) throw fail('expected { "decisions": [ ... ] }, one decision per action request');
  const actions = request.actionRequests;
  if (list.length !== actions.length) {
    throw fail(`this interrupt has ${actions.length} action request(s); give exactly one decision for each, in order (got ${list.length})`, { expected: actions.length, got: list.length });
  }
  return {
    decisions: list.map((entry, index) => {
      const raw = record(entry);
      if (raw === undefined) throw fail(`decision ${index}: must be an object`, { index });
      const action = actions[index] as HitlRequest["actionRequests"][number];
      const review = request.reviewConfigs?.find((config) => config.actionName === action.name);
      const allowed = review?.allowedDecisions ?? ["approve", "edit", "reject"];
      const type = raw["type"];
      if (typeof type !== "string" || !["approve", "edit", "reject"].includes(type)) throw fail(`decision ${index}: type must be "approve", "edit" or "reject"`, { index });
      if (!allowed.includes(type)) throw fail(`decision ${index}: ${type} is not allowed for ${action.name} (allowed: ${allowed.join(", ")})`, { index, allowed });
      const seen = raw["args_digest"];
      if (seen !== undefined && seen !== null && !isArgsDigest(seen)) throw fail(`decision ${index}: args_digest must be the 64 hex characters of a sha256`, { index });
      refuseChangedArgs(typeof seen === "string" ? seen : undefined, action, index);
      if (type === "approve") return { type };
      if (type === "reject") {
        const message = raw["message"] ?? raw["reason"];
        if (message !== undefined && message !== null && typeof message !== "string") throw fail(`decision ${index}: message must be a string`, { index });
        return typeof message === "string" ? { type, message } : { type };
      }
      const edited = record(raw["editedAction"]) ?? record(raw["edited_action"]);
      const args = record(edited?.["args"]);
      if (edited === undefined || args === undefined) throw fail(`decision ${index}: an edit needs editedAction: { name, args } with args an object`, { index });
      const name = edited["name"] ?? action.name;
      if (typeof name !== "string") throw fail(`decision ${index}: editedAction.name must be a string`, { index });
      return { type, editedAction: { name, args } };
    }),
  };
}
