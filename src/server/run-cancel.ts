import type { Context } from "hono";
import { hasErrorCode } from "../errors.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { isFinalStatus, type Runtime } from "../runtime/runtime.js";
import type { AuthVariables } from "./auth.js";
import type { StreamPart } from "./run-stream.js";

/**
 * Cancels a run as LangGraph's official server answers a cancel: a run that already ended (at
 * an interrupt too), or whose cancel was already requested, is left as it is and returned as if
 * cancelled, without an error (the official server logs "Attempted to cancel non-pending run" and
 * answers 202). So an owner's cancel that loses the race with the run's end is not a 409. A run
 * that keeps changing under the cancel stays RUN_CONFLICT; an unknown run RUN_NOT_FOUND.
 * `runtime.runs.cancel` (the library, the CLI) keeps refusing a finished run.
 */
export async function cancelLikeOfficial(runtime: Runtime, runId: string): Promise<RunRecord> {
  try {
    return await runtime.runs.cancel(runId);
  } catch (error) {
    if (!hasErrorCode(error, "RUN_CONFLICT")) throw error;
    const run = await runtime.runs.get(runId);
    if (isFinalStatus(run.status) || (run.status === "running" && run.cancel_requested)) return run;
    throw error;
  }
}

/**
 * The one part a join stream sends, with an auth handler, for a run or thread the caller may not
 * see (another user's, or none): the official server's shape for another user's thread
 * (`{error: "Error", message: "404: Thread not found"}`), which the SDK's `joinStream` yields; the
 * stream then ends. A hidden resource and a missing one answer alike, so the answer tells nothing
 * of what exists.
 */
export function notFoundPart(what: "Run" | "Thread"): StreamPart {
  return { event: "error", data: { error: "Error", message: `404: ${what} not found` } };
}

/**
 * True when a join stream should answer `notFoundPart` instead of HTTP 404: an auth handler is
 * configured and `error` is the not-found of the run (`RUN_NOT_FOUND`) or thread
 * (`THREAD_NOT_FOUND`) the path names. Without a handler nothing is hidden and the 404 stays.
 */
export function isHiddenFromCaller(c: Context<{ Variables: AuthVariables }>, error: unknown): boolean {
  return c.get("authHandler") !== undefined && (hasErrorCode(error, "RUN_NOT_FOUND") || hasErrorCode(error, "THREAD_NOT_FOUND"));
}
