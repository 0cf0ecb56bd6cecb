import type { RunRecord } from "../runtime/queue/run-record.js";

/** The `{error, message}` of a failed run as the official server sends it: the error's class name and its message. */
export interface RunErrorPart {
  error: string;
  message: string;
}

/** `errorText`'s "Name: message" form of a graph's own error (graph-attempt records a plain `Error` as its message alone). */
const NAMED_MESSAGE = /^([A-Za-z_$][\w$]*): ([\s\S]*)$/;

/**
 * What a failed (`error`) or timed-out run's stream ends with, as LangGraph Platform's official
 * server writes it (`serializeError`: `{error: error.name, message: error.message}`):
 * - the recorded error's `name` (the class name graph-attempt stores) when the run recorded one,
 *   with the message it was thrown with;
 * - a graph's own exception recorded without a name (runs that failed before names were stored;
 *   code GRAPH_FAILED, stored as "Name: message", or as the message alone for a plain `Error`):
 *   its class name and message as the message text tells them;
 * - LangGraph's recursion limit (GRAPH_RECURSION_LIMIT): `GraphRecursionError`;
 * - devmind's own failures (MODEL_FAILED, RUN_DEADLINE, MAX_ATTEMPTS, ...): the code, which
 *   names them as a class name would;
 * - no recorded error: the stop reason (or status) and a sentence saying how the run ended.
 */
export function runErrorPart(run: RunRecord): RunErrorPart {
  const recorded = run.error;
  if (recorded === null) return { error: run.stop_reason ?? run.status, message: `the run ended with status ${run.status} (${run.stop_reason ?? "no stop reason"})` };
  if (recorded.name !== undefined && recorded.name !== "") {
    // the message is stored as "Name: message" for an exception other than a plain Error
    const prefix = `${recorded.name}: `;
    return { error: recorded.name, message: recorded.message.startsWith(prefix) ? recorded.message.slice(prefix.length) : recorded.message };
  }
  if (recorded.code === "GRAPH_RECURSION_LIMIT") return { error: "GraphRecursionError", message: recorded.message };
  if (recorded.code === "GRAPH_FAILED") {
    const named = NAMED_MESSAGE.exec(recorded.message);
    return named === null ? { error: "Error", message: recorded.message } : { error: named[1] as string, message: named[2] as string };
  }
  return { error: recorded.code, message: recorded.message };
}

/**
 * What `runs.wait` and `runs.join` answer for a run that failed, as the official server does
 * (200): `{__error__: {error, message}}`, which makes the SDK's `runs.wait` throw
 * `Error("{error}: {message}")`. The official server builds it with `serializeError` from the
 * stream's error part, an object rather than an Error, so `error` is "Error" and `message` the
 * part as JSON (its `wait` in storage/ops.mts); devmind answers the same bytes.
 */
export function waitErrorBody(run: RunRecord): { __error__: RunErrorPart } {
  return { __error__: { error: "Error", message: JSON.stringify(runErrorPart(run)) } };
}
