import type { BaseMessage } from "@langchain/core/messages";
import type { ProposedToolCall } from "../tools/types.js";
import type { ApprovalCandidate } from "./approvals.js";
import type { RunError, StopReason, Usage } from "../vocabulary/stop-reasons.js";
export type { RunError, StopReason, Usage } from "../vocabulary/stop-reasons.js";
import { Annotation, DeltaChannel, messagesDeltaReducer, type Messages } from "@langchain/langgraph";

/**
 * What the guard decided after a step, and why (`why` is for people reading the history). The
 * guard's `Command` routes by `next`; `tools` carries the calls to send (approved ones with their
 * approved arguments), `approval` the calls a human must decide and when the pause began (the
 * wait is added to the deadline when it ends), `finish` the stop reason: the guard ends the run
 * itself in that step (to END).
 */
export type GuardDecision =
  | { next: "model"; why: string }
  | { next: "tools"; calls: ProposedToolCall[]; why: string }
  | { next: "approval"; requests: ApprovalCandidate[]; at: number; why: string }
  | { next: "finish"; stop_reason: StopReason; error: RunError | null; why: string };

/** Snapshot frequency of the messages delta channel: a full copy every this many updates. */
export const MESSAGES_SNAPSHOT_FREQUENCY = 100;

const last = <T>(initial: () => T) => Annotation<T>({ reducer: (_current: T, next: T) => next, default: initial });

/**
 * The agent's state. `messages` is a LangGraph DeltaChannel: each checkpoint stores only the
 * step's new messages (as writes), with a full snapshot every MESSAGES_SNAPSHOT_FREQUENCY
 * updates, so a long thread stores every message about once instead of the whole list per step.
 * Run-scoped fields (`newRunFields`) are reset at the start of each run — by a devmind run's
 * input, or by the guard's first decision where the input did not (`needsRunReset`); `run_start` is the index of the run's first
 * message, so counts are derived from the messages themselves and written only once, by the
 * guard's step that ends the run (every write of a channel is a new version in the checkpoint).
 * Within a run only the guard writes `decision` and `stop_reason` (the model step may report its
 * own failure as a stop reason, which the guard's first rule honours).
 */
export const AgentState = Annotation.Root({
  messages: () => new DeltaChannel<BaseMessage[], Messages>(messagesDeltaReducer, { snapshotFrequency: MESSAGES_SNAPSHOT_FREQUENCY }),
  run_start: last<number>(() => 0),
  /** The devmind run this state belongs to (the runtime passes it with the input); null outside runs. */
  run_id: last<string | null>(() => null),
  deadline_at: last<number | null>(() => null),
  /** The guard's latest decision: where the run went after the last step, and why. */
  decision: last<GuardDecision | null>(() => null),
  stop_reason: last<StopReason | null>(() => null),
  answer: last<string | null>(() => null),
  error: last<RunError | null>(() => null),
  model_rounds: last<number>(() => 0),
  tool_calls: last<number>(() => 0),
  usage: last<Usage>(() => ({ input_tokens: 0, output_tokens: 0 })),
  /** Arguments approved (or edited) by a human in this run, by tool_call_id. */
  approvals: last<Record<string, { args: Record<string, unknown> }>>(() => ({})),
});

/** The state as nodes read it. */
export type AgentStateValue = typeof AgentState.State;
/** A partial state update as nodes return it. */
export type AgentStateUpdate = typeof AgentState.Update;

/**
 * The run-scoped fields as a new run starts: no stop reason, answer, error or approvals yet, and
 * a deadline `runTimeoutMs` from `now`. A devmind run writes them as it enters the graph; the
 * guard writes them with its first decision of a run (a plain `graph.invoke` passes only
 * messages). Not `decision`: a run that continues at a checkpoint keeps the decision made there.
 */
export function newRunFields(runTimeoutMs: number, now: number = Date.now()) {
  return { stop_reason: null, answer: null, error: null, approvals: {}, deadline_at: now + runTimeoutMs } satisfies AgentStateUpdate;
}

/**
 * Whether the guard, taking a run's first decision, must reset the run-scoped fields: the latest
 * decision ended a run, or there is none and no deadline either (a plain `graph.invoke` on a new
 * thread). A devmind run's input has already reset them (no decision, a deadline); a run that
 * paused at an approval or a breakpoint continues with its own.
 */
export function needsRunReset(state: Pick<AgentStateValue, "decision" | "deadline_at">): boolean {
  if (state.decision === null) return state.deadline_at === null;
  return state.decision.next === "finish";
}
