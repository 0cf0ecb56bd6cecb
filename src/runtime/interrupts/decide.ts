import { RunConflictError, DevmindError } from "../../errors.js";
import type { ActionRequest } from "../../vocabulary/hitl.js";
import { parseDecisions } from "../../vocabulary/decisions.js";
import type { EditCheck } from "../../graphs/run-hooks.js";
import type { DecisionRecord, NewDecision } from "./decision-store.js";
import { argsDigest } from "./digest.js";

function fail(message: string, index: number): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", `decision ${index}: ${message}`, { details: { index } });
}

/**
 * Refuses (RUN_CONFLICT, naming the call and both digests) a decision made for arguments other
 * than those waiting: the reviewer saw `seen` (the sha256 of what they were shown), the call now
 * has other ones. Nothing is stored.
 */
export function refuseChangedArgs(seen: string | undefined, request: { name: string; args?: unknown; tool_call_id?: string }, index: number): void {
  if (seen === undefined) return;
  const waiting = argsDigest((request.args ?? {}) as object);
  if (seen === waiting) return;
  const call = request.tool_call_id === undefined ? request.name : `${request.name} (${request.tool_call_id})`;
  throw new RunConflictError(`decision ${index}: the arguments of ${call} are not the ones reviewed (args_digest ${seen.slice(0, 12)}…, waiting ${waiting.slice(0, 12)}…); review them again`, { index, args_digest: seen, waiting_digest: waiting });
}

/**
 * Parses `body` (`parseDecisions`: a malformed body or decision is RUN_INPUT_INVALID), validates
 * its decisions against the calls still waiting (in order, or by `tool_call_id` for a
 * subset), checks edited arguments with the graph's `editCheck` (the agent's: the tool's schema
 * and policy), and returns what to store — all
 * before anything is stored. A decision for a call that is not waiting (unknown, or already
 * decided) is a conflict; a malformed one is invalid input.
 */
export function planDecisions(
  body: unknown,
  requests: readonly ActionRequest[],
  already: readonly DecisionRecord[],
  editCheck: EditCheck | undefined,
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
    refuseChangedArgs(entry.args_digest, request, index);
    taken.add(request.tool_call_id);
    const reason = entry.message ?? audit.reason;
    const base = { toolCallId: request.tool_call_id, tool: request.name, principal: audit.principal, ...(reason === undefined ? {} : { reason }) };
    if (entry.type !== "edit") {
      planned.push({ ...base, decision: entry.type, args: request.args });
      return;
    }
    const { name, args } = entry.editedAction;
    if (name !== undefined && name !== request.name) throw fail(`an edit cannot change the tool (${request.name})`, index);
    const checked = editCheck?.({ id: request.tool_call_id, name: request.name, args }) ?? { ok: true };
    if (!checked.ok) throw fail(checked.why === "invalid" ? `edited arguments are invalid: ${checked.message}` : `edited arguments are refused by policy: ${checked.message}`, index);
    planned.push({ ...base, decision: "edit", args });
  });
  return planned;
}

/**
 * The resume value of a HITL interrupt whose every action request is decided: `{ decisions }` in
 * the requests' order, each naming its call, as LangChain's middleware and the agent read it.
 */
export function decisionsResume(requests: readonly { tool_call_id: string }[], decided: ReadonlyMap<string, DecisionRecord>): { decisions: Record<string, unknown>[] } {
  return {
    decisions: requests.map((request) => {
      const record = decided.get(request.tool_call_id) as DecisionRecord;
      if (record.decision === "approve") return { type: "approve", tool_call_id: record.tool_call_id };
      if (record.decision === "edit") return { type: "edit", tool_call_id: record.tool_call_id, editedAction: { name: record.tool, args: record.args ?? {} } };
      return { type: "reject", tool_call_id: record.tool_call_id, ...(record.reason === null ? {} : { message: record.reason }) };
    }),
  };
}
