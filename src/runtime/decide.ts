import { RunConflictError, DevmindError } from "../errors.js";
import type { ActionRequest } from "../graph/approvals.js";
import { parseDecisions } from "../graph/decisions.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { DecisionRecord, NewDecision } from "./decision-store.js";

function fail(message: string, index: number): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", `decision ${index}: ${message}`, { details: { index } });
}

/**
 * Parses `body` (`parseDecisions`: a malformed body or decision is RUN_INPUT_INVALID), validates
 * its decisions against the calls still waiting (in order, or by `tool_call_id` for a
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
  const { decisions: list } = parseDecisions(body);
  const decided = new Set(already.map((d) => d.tool_call_id));
  const open = requests.filter((r) => !decided.has(r.tool_call_id));
  const planned: NewDecision[] = [];
  const taken = new Set<string>();
  list.forEach((entry, index) => {
    const id = entry.tool_call_id;
    let request: ActionRequest | undefined;
    if (id !== undefined) {
      if (decided.has(id)) throw new RunConflictError(`call ${id} was already decided`, { toolCallId: id });
      request = requests.find((r) => r.tool_call_id === id);
      if (request === undefined) throw new RunConflictError(`no call ${JSON.stringify(id.slice(0, 100))} is waiting for approval on this run`, { toolCallId: id.slice(0, 100) });
    } else {
      request = open.find((r) => !taken.has(r.tool_call_id));
      if (request === undefined) throw new RunConflictError(`decision ${index} has no call left to decide (${open.length} waiting)`);
    }
    if (taken.has(request.tool_call_id)) throw fail(`call ${request.tool_call_id} is decided twice`, index);
    taken.add(request.tool_call_id);
    const reason = entry.message ?? audit.reason;
    const base = { toolCallId: request.tool_call_id, tool: request.name, principal: audit.principal, ...(reason === undefined ? {} : { reason }) };
    if (entry.type !== "edit") {
      planned.push({ ...base, decision: entry.type, args: request.args });
      return;
    }
    const { name, args } = entry.editedAction;
    if (name !== undefined && name !== request.name) throw fail(`an edit cannot change the tool (${request.name})`, index);
    const checked = registry.check({ id: request.tool_call_id, name: request.name, args });
    if (checked.kind === "invalid") throw fail(`edited arguments are invalid: ${checked.message}`, index);
    if (checked.kind === "denied") throw fail(`edited arguments are refused by policy: ${checked.reason}`, index);
    planned.push({ ...base, decision: "edit", args });
  });
  return planned;
}
