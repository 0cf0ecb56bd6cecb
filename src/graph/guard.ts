import { Send, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ToolRegistry } from "../tools/registry.js";
import type { ProposedToolCall } from "../tools/types.js";
import type { AgentLimits } from "./limits.js";
import { readRunContext } from "./run-context.js";
import { viewRun, type RunView } from "./run-view.js";
import type { AgentStateValue, RunError, StopReason } from "./state.js";
import { firstStopBeforeModel } from "./stop-rules.js";

/** Payload of one `Send` to the tools node. */
export interface ToolTask {
  call: ProposedToolCall;
}

/** What the guard decides after every step. */
export type GuardDecision =
  | { kind: "stop"; reason: StopReason; error: RunError | null }
  | { kind: "model" }
  | { kind: "approval" }
  | { kind: "tools"; calls: ProposedToolCall[] };

/** What the guard reads besides the state. */
export interface GuardInputs {
  registry: ToolRegistry;
  limits: AgentLimits;
  cancelled: boolean;
  now: number;
}

/**
 * The guard: a pure decision over the state, taken after every step. Stop rules first (a stop
 * recorded by a node, cancel, deadline, limits), then the calls of the last AI message: more than
 * the tool budget allows stops the run; a call that needs approval and has no decision yet goes
 * to the approval node; otherwise every call is sent to the tools node (with approved, possibly
 * edited, arguments). Without pending calls: an answer ends the run, else the model is next.
 */
export function decide(state: AgentStateValue, view: RunView, inputs: GuardInputs): GuardDecision {
  if (state.stop_reason !== null) return { kind: "stop", reason: state.stop_reason, error: state.error };
  if (inputs.cancelled) return { kind: "stop", reason: "cancelled", error: { code: "CANCELLED", message: "the run was cancelled" } };
  if (view.pending.length === 0) {
    if (view.finalAnswer !== undefined) return { kind: "stop", reason: "completed", error: null };
    const stop = firstStopBeforeModel(view, state, inputs.limits, inputs.now);
    return stop === null ? { kind: "model" } : { kind: "stop", ...stop };
  }
  if (state.deadline_at !== null && inputs.now >= state.deadline_at) {
    return { kind: "stop", reason: "deadline", error: { code: "DEADLINE", message: `the run exceeded its ${inputs.limits.runTimeoutMs} ms deadline` } };
  }
  const remaining = inputs.limits.maxToolCalls - view.toolCalls;
  if (view.pending.length > remaining) {
    const message = `the model asked for ${view.pending.length} tool calls but only ${Math.max(0, remaining)} of ${inputs.limits.maxToolCalls} remain`;
    return { kind: "stop", reason: "max_tool_calls", error: { code: "MAX_TOOL_CALLS", message } };
  }
  const calls: ProposedToolCall[] = [];
  for (const call of view.pending) {
    const approved = state.approvals[call.id];
    if (approved !== undefined) {
      calls.push({ ...call, args: approved.args });
      continue;
    }
    const checked = inputs.registry.check(call);
    if (checked.kind === "ready" && checked.needsApproval) return { kind: "approval" };
    // anything else runs in the tools node, whose registry answers refusals with an envelope
    calls.push(call);
  }
  return { kind: "tools", calls };
}

/** Reads what the guard needs from a node's config. */
export function guardInputs(registry: ToolRegistry, limits: AgentLimits, config: LangGraphRunnableConfig | undefined): GuardInputs & { limits: AgentLimits } {
  const context = readRunContext(config);
  return { registry, limits: { ...limits, ...(context.limits ?? {}) }, cancelled: context.cancelSignal?.aborted === true, now: Date.now() };
}

/**
 * The router on every edge: the guard's decision as a destination — `model`, `pause` (which
 * notes the time and leads to `approval`), `finish`, or one `Send` to `tools` per call (each call
 * its own task, saved on its own).
 */
export function createGuardRouter(registry: ToolRegistry, limits: AgentLimits) {
  return function guard(state: AgentStateValue, config: LangGraphRunnableConfig): string | Send[] {
    const decision = decide(state, viewRun(state.messages, state.run_start), guardInputs(registry, limits, config));
    if (decision.kind === "tools") return decision.calls.map((call) => new Send("tools", { call } satisfies ToolTask));
    if (decision.kind === "approval") return "pause";
    return decision.kind === "stop" ? "finish" : decision.kind;
  };
}
