import type { AgentEvent } from "../../vocabulary/events.js";
import type { StopReason } from "../../vocabulary/stop-reasons.js";
import type { RunInterrupt } from "../queue/run-record.js";

/** Why a run continued: decisions on its approvals, a resume value, a process picking it up after another died, or someone asking. */
export type ResumeReason = "approval" | "resume" | "recovery" | "manual" | "reload";

/** A run's lifecycle events (CONTRACT section 6), for every graph. */
export type RunLifecycleEvent =
  | { type: "run.created"; cron_id?: string }
  | { type: "run.started"; attempt: number; worker: string }
  | { type: "run.resumed"; reason: ResumeReason; attempt: number; worker: string }
  /** The agent's pause carries no fields; a user graph's carries its pending interrupts. */
  | { type: "run.interrupted"; interrupts?: RunInterrupt[] }
  | { type: "run.cancel_requested" }
  | { type: "run.succeeded"; answer: string | null }
  | { type: "run.failed"; stop_reason: StopReason; code: string | null; message: string | null }
  | { type: "run.timeout" }
  | { type: "run.cancelled" }
  | { type: "approval.decided"; tool_call_id: string; decision: "approve" | "edit" | "reject"; by: string; reason: string | null }
  | { type: "resume.given"; interrupt_ids: string[]; by: string; reason: string | null; value_digest: string };

/**
 * Events of a run of a user graph (CONTRACT section 10): a task (node) started and finished, from
 * the graph's own stream (`ns` is the task's namespace, `[]` at the top level, `["node:id"]`
 * inside a subgraph), what the graph wrote with `config.writer` (`custom`), and the lifecycle of
 * each LangChain tool a node invoked (`tools`: LangGraph's `tools` stream mode, `{event:
 * "on_tool_start" | "on_tool_event" | "on_tool_end" | "on_tool_error", toolCallId, name, ...}` as
 * plain JSON), and — for a run created with the `events` stream mode (`limits.maxStreamEvents`) —
 * each LangChain stream event (v2: `{event: "on_chain_start" | "on_chat_model_stream" | ..., name,
 * run_id, tags, metadata, data}` as plain JSON, the root graph's own `on_chain_stream`
 * left out) in the order LangChain produced it (`events`), and `events.truncated` once when the
 * run's attempt reached its limit and left later ones out.
 */
export type GraphRunEvent =
  | RunLifecycleEvent
  | { type: "node.started"; node: string; task_id: string; ns: string[] }
  | { type: "node.finished"; node: string; task_id: string; ns: string[]; duration_ms: number | null; error: string | null; interrupted: boolean }
  /**
   * A chat model in a node began to stream message `message_id` (its first chunk; the chunks are
   * live only): `checkpoint_ns` is the node's task namespace (`node:task_id`, nested ones after
   * `|`), where the event protocol sends that message's events.
   */
  | { type: "message.started"; ns: string[]; checkpoint_ns: string; message_id: string }
  | { type: "custom"; ns: string[]; data: unknown }
  /**
   * `duration_ms` on a tool's end (`on_tool_end` / `on_tool_error`): how long it ran, when its
   * start was seen; `checkpoint_ns`: the namespace of the task that ran the tool (`node:task_id`,
   * nested after `|`), where the event protocol sends its events.
   */
  | { type: "tools"; ns: string[]; data: unknown; duration_ms?: number; checkpoint_ns?: string }
  | { type: "events"; data: unknown }
  | { type: "events.truncated"; limit: number }
  | { type: "approval.requested"; requests: unknown[] };

/**
 * Every event a run stores or delivers live, as one discriminated union on `type`: what
 * `runtime.runs.subscribe` delivers (a `LiveEvent`).
 */
export type RunEventData = GraphRunEvent | AgentEvent;

/** The `type` of every run event. */
export type RunEventType = RunEventData["type"];

/** Event types delivered live only, never stored: the model's token stream and the agent graph's own end marker. */
export type LiveOnlyEventType = "model.delta" | "graph.stopped";

/**
 * The events a run stores (CONTRACT section 6 and 10), without the envelope: what the event store
 * appends (the executor, user-graph attempts, the runtime's writes and the reaper's SQL) and,
 * with the envelope, what `runtime.runs.events` yields.
 */
export type StoredRunEventData = Exclude<RunEventData, { type: LiveOnlyEventType }>;

/** The `type` of every stored run event. */
export type StoredRunEventType = StoredRunEventData["type"];

/** The fields of event type `T`, without its `type`. */
export type RunEventFields<T extends RunEventType> = Omit<Extract<RunEventData, { type: T }>, "type">;

/**
 * Every event type, stored (`true`) or live only (`false`). A Record over the union, so adding a
 * type to the union without listing it here (or listing one the union lacks) does not compile.
 */
const EVENT_TYPES: Record<RunEventType, boolean> = {
  "run.created": true,
  "run.started": true,
  "run.resumed": true,
  "run.interrupted": true,
  "run.cancel_requested": true,
  "run.succeeded": true,
  "run.failed": true,
  "run.timeout": true,
  "run.cancelled": true,
  "approval.requested": true,
  "approval.decided": true,
  "resume.given": true,
  "model.started": true,
  "model.delta": false,
  "model.finished": true,
  "model.failed": true,
  "tool.call.started": true,
  "tool.call.finished": true,
  "node.started": true,
  "node.finished": true,
  "message.started": true,
  custom: true,
  tools: true,
  events: true,
  "events.truncated": true,
  "graph.stopped": false,
};

/** Every run event type, stored or live only. */
export const RUN_EVENT_TYPES: readonly RunEventType[] = Object.keys(EVENT_TYPES) as RunEventType[];

/** Every event type a run stores. */
export const STORED_RUN_EVENT_TYPES: readonly StoredRunEventType[] = RUN_EVENT_TYPES.filter((type): type is StoredRunEventType => EVENT_TYPES[type]);

const RUN_EVENT_TYPE_SET: ReadonlySet<string> = new Set(RUN_EVENT_TYPES);
const STORED_RUN_EVENT_TYPE_SET: ReadonlySet<string> = new Set(STORED_RUN_EVENT_TYPES);

/** True for a type of the union (stored or live only). */
export function isRunEventType(type: string): type is RunEventType {
  return RUN_EVENT_TYPE_SET.has(type);
}

/** True for a type a run stores. */
export function isStoredRunEventType(type: string): type is StoredRunEventType {
  return STORED_RUN_EVENT_TYPE_SET.has(type);
}

/**
 * Narrows an event whose type may be foreign (a stored row written by a newer version, see
 * `ForeignRunEvent`) to the members of the union: afterwards `switch (event.type)` narrows each
 * case to its fields.
 *
 * @example
 *   for await (const event of runtime.runs.events(runId)) {
 *     if (isKnownRunEvent(event) && event.type === "approval.decided") decided.add(event.tool_call_id);
 *   }
 */
export function isKnownRunEvent<E extends { type: string }>(event: E): event is Extract<E, { type: RunEventType }> {
  return isRunEventType(event.type);
}
