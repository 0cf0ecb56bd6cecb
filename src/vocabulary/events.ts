import type { StopReason, Usage } from "./stop-reasons.js";

/** Events the graph emits (CONTRACT section 6, the model.* and tool.call.* part). */
export type AgentEvent =
  | { type: "model.started"; round: number }
  /** `message_id`: the id the round's AI message is stored under; `offset`: characters of the round's text before this one. */
  | { type: "model.delta"; round: number; text: string; message_id: string; offset: number }
  | { type: "model.finished"; round: number; duration_ms: number; tool_calls: number; usage: Usage; finish_reason: string | null }
  | { type: "model.failed"; round: number; code: string; message: string; attempt: number; will_retry: boolean }
  | { type: "tool.call.started"; tool_call_id: string; tool: string; args: unknown }
  | { type: "tool.call.finished"; tool_call_id: string; tool: string; ok: boolean; error_code: string | null; duration_ms: number; truncated: boolean }
  | { type: "approval.requested"; requests: unknown[] }
  | { type: "graph.stopped"; stop_reason: StopReason };

/** Receives events as they happen; must not throw (errors are swallowed so a sink cannot break a run). */
export type EventSink = (event: AgentEvent) => void;

/** Calls `sink` and ignores its failures. */
export function emit(sink: EventSink | undefined, event: AgentEvent): void {
  if (sink === undefined) return;
  try {
    sink(event);
  } catch {
    // a broken observer must not change the run
  }
}
