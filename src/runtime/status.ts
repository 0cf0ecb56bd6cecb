import type { StopReason } from "../graph/state.js";

/** Terminal statuses of a run (CONTRACT section 3). */
export type TerminalStatus = "success" | "error" | "timeout" | "cancelled";

/** `completed` -> success; `deadline` -> timeout; `cancelled` -> cancelled; the rest -> error. */
export function statusForStopReason(reason: StopReason): TerminalStatus {
  if (reason === "completed") return "success";
  if (reason === "deadline") return "timeout";
  if (reason === "cancelled") return "cancelled";
  return "error";
}

/** The event a finished run ends with (CONTRACT section 6). */
export function finalEventType(status: TerminalStatus): "run.succeeded" | "run.failed" | "run.timeout" | "run.cancelled" {
  return status === "success" ? "run.succeeded" : status === "timeout" ? "run.timeout" : status === "cancelled" ? "run.cancelled" : "run.failed";
}
