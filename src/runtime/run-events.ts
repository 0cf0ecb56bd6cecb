import type { AgentEvent } from "../graph/events.js";
import type { StopReason } from "../graph/state.js";
import type { RunInterrupt } from "./run-record.js";

/** Why a run continued: decisions on its approvals, a resume value, a process picking it up after another died, or someone asking. */
export type ResumeReason = "approval" | "resume" | "recovery" | "manual";

/** A run's lifecycle events (CONTRACT section 6), for every graph. */
export type RunLifecycleEvent =
  | { type: "run.created" }
  | { type: "run.started"; attempt: number; worker: string }
  | { type: "run.resumed"; reason: ResumeReason; attempt: number; worker: string }
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
 * inside a subgraph), and what the graph wrote with `config.writer` (`custom`).
 */
export type GraphRunEvent =
  | RunLifecycleEvent
  | { type: "node.started"; node: string; task_id: string; ns: string[] }
  | { type: "node.finished"; node: string; task_id: string; ns: string[]; duration_ms: number | null; error: string | null; interrupted: boolean }
  | { type: "custom"; ns: string[]; data: unknown }
  | { type: "approval.requested"; requests: unknown[] };

/** Every event type a run stores or delivers live, as one discriminated union on `type`. */
export type RunEventData = GraphRunEvent | AgentEvent;

/** The `type` of every run event. */
export type RunEventType = RunEventData["type"];
