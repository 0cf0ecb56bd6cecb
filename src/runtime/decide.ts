import { RunConflictError, DevmindError } from "../errors.js";
import type { ActionRequest } from "../graph/approvals.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { DecisionRecord, NewDecision } from "./decision-store.js";

/** A decision as callers send it (CONTRACT section 5), before validation. */
export type DecisionInput = Record<string, unknown>;

function fail(message: string, index: number): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", `decision ${index}: ${message}`, { details: { index } });
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * Validates decisions against the calls still waiting (in order, or by `tool_call_id` for a
 * subset), checks edited arguments against the tool's schema, and returns what to store — all
 * before anything is stored. A decision for a call that is not waiting (unknown, or already
 * decided) is a conflict; a malformed one is invalid input.
 */
export function planDecisions(
  body: unknown,
  requests: readonly ActionRequest[],
  already: readonly DecisionRecord[],
  registry: ToolRegistry,
  audit: { principal: string; reason?: string | undefined },
): NewDecision[] {
  const list = asRecord(body)?.["decisions"];
  if (!Array.isArray(list) || list.length === 0) throw new DevmindError("RUN_INPUT_INVALID", 'expected { "decisions": [ ... ] } with at least one decision');
  const decided = new Set(already.map((d) => d.tool_call_id));
  const open = requests.filter((r) => !decided.has(r.tool_call_id));
  const planned: NewDecision[] = [];
  const taken = new Set<string>();
  list.forEach((entry, index) => {
    const raw = asRecord(entry);
    if (raw === undefined) throw fail("must be an object", index);
    const id = raw["tool_call_id"];
    let request: ActionRequest | undefined;
    if (id !== undefined) {
      if (typeof id !== "string") throw fail("tool_call_id must be a string", index);
      if (decided.has(id)) throw new RunConflictError(`call ${id} was already decided`, { toolCallId: id });
      request = requests.find((r) => r.tool_call_id === id);
      if (request === undefined) throw new RunConflictError(`no call ${JSON.stringify(id.slice(0, 100))} is waiting for approval on this run`, { toolCallId: id.slice(0, 100) });
    } else {
      request = open.find((r) => !taken.has(r.tool_call_id));
      if (request === undefined) throw new RunConflictError(`decision ${index} has no call left to decide (${open.length} waiting)`);
    }
    if (taken.has(request.tool_call_id)) throw fail(`call ${request.tool_call_id} is decided twice`, index);
    taken.add(request.tool_call_id);
    const type = raw["type"];
    for (const field of ["message", "reason"] as const) {
      if (raw[field] !== undefined && raw[field] !== null && typeof raw[field] !== "string") throw fail(`${field} must be a string`, index);
    }
    const reason = typeof raw["message"] === "string" ? raw["message"] : typeof raw["reason"] === "string" ? raw["reason"] : audit.reason;
    const base = { toolCallId: request.tool_call_id, tool: request.name, principal: audit.principal, ...(reason === undefined ? {} : { reason }) };
    if (type === "approve") planned.push({ ...base, decision: "approve", args: request.args });
    else if (type === "reject") planned.push({ ...base, decision: "reject", args: request.args });
    else if (type === "edit") {
      const action = asRecord(raw["editedAction"]) ?? asRecord(raw["edited_action"]);
      const args = asRecord(action?.["args"]);
      if (action === undefined || args === undefined) throw fail("an edit needs editedAction: { name, args }", index);
      if (action["name"] !== undefined && action["name"] !== request.name) throw fail(`an edit cannot change the tool (${request.name})`, index);
      const checked = registry.check({ id: request.tool_call_id, name: request.name, args });
      if (checked.kind === "invalid") throw fail(`edited arguments are invalid: ${checked.message}`, index);
      if (checked.kind === "denied") throw fail(`edited arguments are refused by policy: ${checked.reason}`, index);
      planned.push({ ...base, decision: "edit", args });
    } else throw fail('type must be "approve", "edit" or "reject"', index);
  });
  return planned;
}
