import type { StopReason } from "../../vocabulary/stop-reasons.js";
import type { RunLifecycleEvent } from "../events/run-events.js";

/** Terminal statuses of a run (CONTRACT section 3). */
export type TerminalStatus = "success" | "error" | "timeout" | "interrupted";

/** The statuses a run ends with: it will not run again (a resume is a new run). */
export const FINAL_STATUSES: readonly TerminalStatus[] = ["success", "error", "timeout", "interrupted"];

/** True when the run ended (any final status). */
export function isFinalStatus(status: string): status is TerminalStatus {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** `completed` and `interrupt` -> success; `deadline` -> timeout; `cancelled` -> interrupted; the rest -> error. */
export function statusForStopReason(reason: StopReason): TerminalStatus {
  if (reason === "completed" || reason === "interrupt") return "success";
  if (reason === "deadline") return "timeout";
  if (reason === "cancelled") return "interrupted";
  return "error";
}

/**
 * The event a finished run ends with, with its fields (CONTRACT section 6): `run.succeeded
 * {answer}`, `run.failed {stop_reason, code, message}`, `run.timeout`, `run.cancelled` (status
 * `interrupted`). A run that ends at an interrupt ends with `run.interrupted` instead (graph-attempt.ts).
 */
export function finalEvent(
  status: TerminalStatus,
  stopReason: StopReason,
  answer: string | null,
  error: { code: string; message: string } | null,
): Extract<RunLifecycleEvent, { type: "run.succeeded" | "run.failed" | "run.timeout" | "run.cancelled" }> {
  if (status === "success") return { type: "run.succeeded", answer };
  if (status === "error") return { type: "run.failed", stop_reason: stopReason, code: error?.code ?? null, message: error?.message ?? null };
  return status === "timeout" ? { type: "run.timeout" } : { type: "run.cancelled" };
}

/**
 * The event types a run's last event has: whoever waits for a run's end looks at the run again
 * only when one of these is appended (RUN_ENDS_CHANNEL across processes, live events in-process).
 */
export const FINAL_EVENT_TYPES: readonly string[] = ["run.succeeded", "run.failed", "run.timeout", "run.cancelled", "run.interrupted"];
