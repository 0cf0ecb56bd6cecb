import { DECISION_LIMITS } from "../constants.js";
import { DevmindError } from "../errors.js";

/** What a human decided about one call waiting for approval. */
export type DecisionType = "approve" | "edit" | "reject";

/**
 * One decision as callers send it (CONTRACT section 5), parsed: `tool_call_id` names the call
 * (without it, decisions go to the waiting calls in order); `message` is the why (sent as
 * `message` or `reason`); an edit carries the arguments that will run instead (`editedAction`,
 * sent as `editedAction` or snake_case `edited_action`; its `name`, when given, must be the
 * call's tool — checked against the call, not here).
 */
export type Decision = (
  | { type: "approve"; tool_call_id?: string; message?: string }
  | { type: "edit"; tool_call_id?: string; editedAction: { name?: string; args: Record<string, unknown> }; message?: string }
  | { type: "reject"; tool_call_id?: string; message?: string }
) & {
  /**
   * The sha256 of the arguments the reviewer was shown (as `/approvals` and the audit give it):
   * when given, the decision holds only for exactly those arguments — a call whose arguments
   * differ is refused, never decided.
   */
  args_digest?: string;
};

/** True for the text of a sha256 digest as devmind writes them (64 lowercase hex characters): `args_digest`, the ledger's digests. */
export function isArgsDigest(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
}

/** A decision body (CONTRACT section 5) plus an optional audit `reason` for decisions without their own. */
export interface DecisionsBody {
  decisions: Decision[];
  reason?: string;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function invalid(message: string, details: Record<string, unknown> = {}): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details });
}

/**
 * Parses one decision (entry `index` of a body, named in errors). DevmindError RUN_INPUT_INVALID
 * for anything that is not a decision: not an object, an unknown `type`, a non-string
 * `tool_call_id` / `message` / `reason`, an edit without `editedAction: { args: {...} }` or
 * whose `name` is not a string.
 */
export function parseDecision(raw: unknown, index = 0): Decision {
  const fail = (message: string): DevmindError => invalid(`decision ${index}: ${message}`, { index });
  const entry = asRecord(raw);
  if (entry === undefined) throw fail("must be an object");
  const id = entry["tool_call_id"];
  if (id !== undefined && typeof id !== "string") throw fail("tool_call_id must be a string");
  for (const field of ["message", "reason"] as const) {
    const value = entry[field];
    if (value !== undefined && value !== null && typeof value !== "string") throw fail(`${field} must be a string`);
  }
  const message = typeof entry["message"] === "string" ? entry["message"] : typeof entry["reason"] === "string" ? entry["reason"] : undefined;
  const digest = entry["args_digest"];
  if (digest !== undefined && digest !== null && !isArgsDigest(digest)) throw fail("args_digest must be the 64 hex characters of a sha256");
  const common = { ...(id === undefined ? {} : { tool_call_id: id }), ...(message === undefined ? {} : { message }), ...(typeof digest === "string" ? { args_digest: digest } : {}) };
  const type = entry["type"];
  if (type === "approve" || type === "reject") return { type, ...common };
  if (type !== "edit") throw fail('type must be "approve", "edit" or "reject"');
  const action = asRecord(entry["editedAction"]) ?? asRecord(entry["edited_action"]);
  const args = asRecord(action?.["args"]);
  if (action === undefined || args === undefined) throw fail("an edit needs editedAction: { name, args }");
  const name = action["name"];
  if (name !== undefined && typeof name !== "string") throw fail("editedAction.name must be a string");
  return { type: "edit", ...common, editedAction: { ...(name === undefined ? {} : { name }), args } };
}

/**
 * The one parser of decision bodies (CONTRACT section 5), used by the runtime (`runs.decide`),
 * the server (`POST /runs/{id}/decisions`, `command.resume`) and the CLI: `{ decisions: [...],
 * reason? }` with 1 to DECISION_LIMITS.maxDecisions decisions (each as `parseDecision` reads it)
 * and a reason of at most DECISION_LIMITS.reasonMaxChars characters. DevmindError
 * RUN_INPUT_INVALID otherwise. Whether the decisions fit the calls that are waiting is the
 * runtime's check, not the parser's.
 *
 * @example
 *   parseDecisions({ decisions: [{ type: "edit", edited_action: { args: { path: "b.txt" } } }] })
 *   // { decisions: [{ type: "edit", editedAction: { args: { path: "b.txt" } } }] }
 */
export function parseDecisions(body: unknown): DecisionsBody {
  const record = asRecord(body);
  const list = record?.["decisions"];
  if (!Array.isArray(list) || list.length === 0) throw invalid('expected { "decisions": [ ... ] } with at least one decision');
  if (list.length > DECISION_LIMITS.maxDecisions) throw invalid(`at most ${DECISION_LIMITS.maxDecisions} decisions at once, got ${list.length}`);
  const reason = record?.["reason"];
  if (reason !== undefined && reason !== null && typeof reason !== "string") throw invalid("reason must be a string");
  if (typeof reason === "string" && reason.length > DECISION_LIMITS.reasonMaxChars) throw invalid(`reason is longer than ${DECISION_LIMITS.reasonMaxChars} characters`);
  return { decisions: list.map((entry, index) => parseDecision(entry, index)), ...(typeof reason === "string" ? { reason } : {}) };
}
