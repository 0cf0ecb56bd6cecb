import { ToolMessage } from "@langchain/core/messages";
import { Command, END, Send, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import type { ProposedToolCall, ToolErrorCode } from "../tools/types.js";
import type { ApprovalCandidate } from "./approvals.js";
import { emit, type EventSink } from "../vocabulary/events.js";
import type { AgentLimits } from "../vocabulary/limits.js";
import { readRunContext } from "./run-context.js";
import { viewRun, type RunView } from "./run-view.js";
import { needsRunReset, newRunFields, type AgentStateUpdate, type AgentStateValue, type GuardDecision, type RunError, type StopReason } from "./state.js";
import { endRun } from "./run-end.js";
import { runError } from "../vocabulary/stop-reasons.js";
import { firstStopBeforeModel } from "./stop-rules.js";

/** Payload of one `Send` to the tools node. */
export interface ToolTask {
  call: ProposedToolCall;
}

/**
 * Where the guard can send the run: the destinations its `Command` declares (drawn as its edges);
 * END when it ends the run (a `finish` decision).
 */
export const GUARD_DESTINATIONS = ["model", "tools", "approval", END] as const;

/** What the guard reads besides the state. */
export interface GuardInputs {
  registry: ToolRegistry;
  limits: AgentLimits;
  cancelled: boolean;
  now: number;
}

/** The guard's decision and the refusals it writes with it. */
export interface GuardOutcome {
  decision: GuardDecision;
  /** Calls the policy refuses (unknown tool, invalid arguments, denial), answered at once. */
  refusals: Refusal[];
}

/** A refused call's answer and its code. */
interface Refusal {
  message: ToolMessage;
  code: ToolErrorCode;
}

function stop(reason: StopReason, error: RunError | null, why: string): GuardDecision {
  return { next: "finish", stop_reason: reason, error, why };
}

/** A refusal of `call` with `code`: the tool message that answers it. */
function refusal(call: ProposedToolCall, code: ToolErrorCode, text: string): Refusal {
  return { code, message: new ToolMessage({ content: toolMessageContent(failureResult(call.name, code, text)), tool_call_id: call.id, name: call.name, status: "error" }) };
}

/** The calls among `calls` that need a human and have no decision yet, with what the human is shown. */
export function approvalCandidates(calls: readonly ProposedToolCall[], approvals: AgentStateValue["approvals"], registry: ToolRegistry): ApprovalCandidate[] {
  const candidates: ApprovalCandidate[] = [];
  for (const call of calls) {
    if (approvals[call.id] !== undefined) continue;
    const checked = registry.check(call);
    if (checked.kind === "ready" && checked.needsApproval) candidates.push({ call, description: checked.tool.description, risk: checked.risk });
  }
  return candidates;
}

/** The decision when no call is pending: the answer ends the run, a stop rule ends it, or the model is next. */
function withoutPendingCalls(state: AgentStateValue, view: RunView, inputs: GuardInputs): GuardDecision {
  if (view.finalAnswer !== undefined) return stop("completed", null, "the model answered without tool calls");
  const rule = firstStopBeforeModel(view, state, inputs.limits, inputs.now);
  if (rule !== null) return stop(rule.reason, rule.error, rule.error?.message ?? rule.reason);
  return { next: "model", why: `model round ${view.modelRounds + 1} of at most ${inputs.limits.maxModelRounds}` };
}

/**
 * The guard's one decision over the state, taken after every step. In order: a stop a node
 * reported (the model's failures), cancel; without pending calls, the answer or a stop rule (see
 * STOP_RULES_BEFORE_MODEL) or the model. With pending calls (those of the last AI message not yet
 * answered): the deadline; calls the policy refuses (unknown tool, invalid arguments, denial) are
 * answered at once; of the others, at most what remains of the tool budget is admitted in the
 * model's order — none remaining stops the run with max_tool_calls; an admitted call that needs a
 * human and has no decision sends the run to `approval`; otherwise every admitted call goes to
 * `tools` (approved calls with their approved, possibly edited, arguments). Calls beyond the
 * budget stay pending: the next decision stops the run, and ending it answers them TOOL_NOT_RUN.
 */
export function decide(state: AgentStateValue, view: RunView, inputs: GuardInputs): GuardOutcome {
  const none: Refusal[] = [];
  if (state.stop_reason !== null) return { decision: stop(state.stop_reason, state.error, `the model step reported ${state.stop_reason}`), refusals: none };
  if (inputs.cancelled) return { decision: stop("cancelled", runError("CANCELLED", "the run was cancelled"), "the run was cancelled"), refusals: none };
  if (view.pending.length === 0) return { decision: withoutPendingCalls(state, view, inputs), refusals: none };
  if (state.deadline_at !== null && inputs.now >= state.deadline_at) {
    const message = `the run exceeded its ${inputs.limits.runTimeoutMs} ms deadline`;
    return { decision: stop("deadline", runError("DEADLINE", message), message), refusals: none };
  }
  const refusals: Refusal[] = [];
  const runnable: ProposedToolCall[] = [];
  for (const call of view.pending) {
    const approved = state.approvals[call.id];
    if (approved !== undefined) {
      runnable.push({ ...call, args: approved.args });
      continue;
    }
    const checked = inputs.registry.check(call);
    if (checked.kind === "not_found") refusals.push(refusal(call, "TOOL_NOT_FOUND", checked.message));
    else if (checked.kind === "invalid") refusals.push(refusal(call, "INVALID_ARGUMENTS", checked.message));
    else if (checked.kind === "denied") refusals.push(refusal(call, "PERMISSION_DENIED", checked.reason));
    else runnable.push(call);
  }
  const refused = refusals.length === 0 ? "" : `; ${refusals.length} refused by policy`;
  if (runnable.length === 0) {
    // every pending call is answered now: decide as the next step will see the run
    const after = viewRun([...state.messages, ...refusals.map((r) => r.message)], state.run_start);
    const next = withoutPendingCalls(state, after, inputs);
    return { decision: { ...next, why: `${next.why}${refused}` }, refusals };
  }
  const remaining = inputs.limits.maxToolCalls - view.toolCalls;
  if (remaining <= 0) {
    const message = `the run reached its limit of ${inputs.limits.maxToolCalls} tool calls with ${runnable.length} more asked for`;
    return { decision: stop("max_tool_calls", runError("MAX_TOOL_CALLS", message), `${message}${refused}`), refusals };
  }
  const admitted = runnable.slice(0, remaining);
  const held = runnable.length - admitted.length;
  const beyond = held === 0 ? "" : `; ${held} beyond the budget of ${inputs.limits.maxToolCalls} calls will not run`;
  const requests = approvalCandidates(admitted, state.approvals, inputs.registry);
  if (requests.length > 0) {
    return { decision: { next: "approval", requests, at: inputs.now, why: `${requests.length} call(s) need a human decision${refused}${beyond}` }, refusals };
  }
  return { decision: { next: "tools", calls: admitted, why: `${admitted.length} call(s) sent to tools${refused}${beyond}` }, refusals };
}

/** Reads what the guard needs from a node's config. */
export function guardInputs(registry: ToolRegistry, limits: AgentLimits, config: LangGraphRunnableConfig | undefined): GuardInputs {
  const context = readRunContext(config);
  return { registry, limits: { ...limits, ...(context.limits ?? {}) }, cancelled: context.cancelSignal?.aborted === true, now: Date.now() };
}

/**
 * The guard node: every step that can change what happens next (the run's input, model, tools,
 * approval) leads here, and only here is it decided where the run goes. On a run's first decision
 * it resets the run-scoped fields when the input did not (`needsRunReset`, `newRunFields`: a
 * plain `graph.invoke` passes only messages). It records the decision — where to and why — in the state's `decision` (so each
 * step's decision is in the checkpoint history), answers refused calls, and routes with a
 * `Command` to one of GUARD_DESTINATIONS: `model`, `approval`, one `Send` to `tools` per admitted
 * call (each call its own task, saved on its own, never re-run), or END: a `finish` decision ends
 * the run in the same step — the stop reason and error, the answer (the run's last AI text), the
 * run's counts, TOOL_NOT_RUN for every call left unanswered, `run_start` past the run, and a
 * `graph.stopped` event. (A `Command` rather than a conditional edge: the edge function would be
 * one more runnable, with a fresh read of the state, per guard step.) It never interrupts, so
 * re-running it (after a crash) decides again from the same state.
 */
export function createGuardNode(deps: { registry: ToolRegistry; limits: AgentLimits; events?: EventSink | undefined }) {
  return function guard(state: AgentStateValue, config: LangGraphRunnableConfig): Command {
    const context = readRunContext(config);
    const inputs = guardInputs(deps.registry, deps.limits, config);
    const fresh = needsRunReset(state) ? newRunFields(context.limits?.runTimeoutMs ?? deps.limits.runTimeoutMs, inputs.now) : undefined;
    const current: AgentStateValue = fresh === undefined ? state : { ...state, ...fresh };
    const { decision, refusals } = decide(current, viewRun(current.messages, current.run_start), inputs);
    const sinks = [deps.events, context.events];
    for (const { message, code } of refusals) {
      for (const sink of sinks) emit(sink, { type: "tool.call.finished", tool_call_id: message.tool_call_id, tool: message.name ?? "", ok: false, error_code: code, duration_ms: 0, truncated: false });
    }
    const update: AgentStateUpdate = { ...fresh, decision };
    const added = refusals.map((r) => r.message);
    if (decision.next === "finish") {
      const end = endRun(current, decision.stop_reason, added);
      Object.assign(update, { stop_reason: decision.stop_reason, error: decision.error }, end.update);
      added.push(...end.closing);
      for (const sink of sinks) emit(sink, { type: "graph.stopped", stop_reason: decision.stop_reason });
    }
    if (added.length > 0) update.messages = added;
    const goto = decision.next === "tools" ? decision.calls.map((call) => new Send("tools", { call } satisfies ToolTask)) : decision.next === "finish" ? END : decision.next;
    return new Command({ update, goto });
  };
}
