import type { StopReason } from "../../vocabulary/stop-reasons.js";
import type { RunLifecycleEvent } from "../events/run-events.js";

/** Terminal statuses of a run (CONTRACT section 3). */
export type TerminalStatus = "success" | "error" | "timeout" | "cancelled";

/** `completed` -> success; `deadline` -> timeout; `cancelled` -> cancelled; the rest -> error. */
export function statusForStopReason(reason: StopReason): TerminalStatus {
  if (reason === "completed") return "success";
  if (reason === "deadline") return "timeout";
  if (reason === "cancelled") return "cancelled";
  return "error";
}

/**
 * The event a finished run ends with, with its fields (CONTRACT section 6): `run.succeeded
 * {answer}`, `run.failed {stop_reason, code, message}`, `run.timeout`, `run.cancelled`.
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
