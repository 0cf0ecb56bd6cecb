import { SERVER_DEFAULTS } from "../constants.js";
import { DevmindError, hasErrorCode, RunConflictError } from "../errors.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import type { EndedRun, Runtime } from "../runtime/runtime.js";
import type { StateSnapshot } from "@langchain/langgraph";
import { httpError } from "./http-errors.js";
import type { StreamCursor } from "./stream-cursor.js";
import type { RunCreateBody } from "./validation.js";
import { interruptsOf, toWire } from "./wire.js";
import { waitErrorBody } from "./run-error-part.js";
import { refuseUnsupportedOptions, startGraphRun, type RunCompletionOptions } from "./graph-run-start.js";
import type { RunAccess } from "./custom-auth/run-access.js";
import { FINAL_STATUSES } from "../runtime/runtime.js";

/** A run a request started (a resume too: a new run), and where its stream should begin. */
export interface StartedRun {
  run: RunRecord;
  /** Set when a client rejoins the stream with an older devmind's `Last-Event-ID`: stream from here, not from the start. */
  from?: StreamCursor | undefined;
  /** Set when a client rejoins the stream (`Last-Event-ID`): the position of the last part it has. */
  after?: number | undefined;
}

/**
 * Starts what a LangGraph run request asks for on `threadId` (null: a new thread, as for
 * stateless runs) with the graph its `assistant_id` names (404 for none loaded), the same for
 * every graph (`startGraphRun`): a new run with the request's input, or — with `command` — the
 * run that resumes the thread's waiting run, its resume recorded with `principal` (and
 * `options.reason`, the local owner's `--reason`).
 * Multitask `interrupt` / `rollback` stop (and roll back) the thread's active runs first. Run
 * options devmind does not implement are refused naming them.
 * `on_completion: "delete"` (stateless runs only; 422 on a thread's) has the workers delete the
 * new thread once the run ended, after `holdCompletionMs` or `runtime.runs.releaseCompletion`
 * when the caller still reads it (wait, stream).
 */
export async function startRun(
  runtime: Runtime,
  threadId: string | null,
  body: RunCreateBody,
  principal: string,
  options: { holdCompletionMs?: number; access?: RunAccess | undefined; reason?: string | undefined } = {},
): Promise<StartedRun> {
  // the auth handler's filter on the run's thread (another user's is 404) and the owner metadata a new thread gets
  const filter = options.access?.filter;
  const ownerMetadata = options.access?.threadMetadata ?? {};
  if (threadId !== null && isPlainRun(runtime, body)) {
    // the common request: the assistant is read, the thread checked (and touched) and the run
    // created in one transaction, not three reads before it
    try {
      refuseUnsupportedOptions(body);
    } catch (error) {
      throw await inRefusalOrder(runtime, null, body.assistant_id, filter, error);
    }
    try {
      return await startGraphRun(runtime, threadId, { assistantId: body.assistant_id, graphId: null }, body, { principal, reason: options.reason }, {}, { access: filter });
    } catch (error) {
      throw await inRefusalOrder(runtime, threadId, body.assistant_id, filter, forRun(error));
    }
  }
  const assistant = await runtime.assistants.get(body.assistant_id).catch((error: unknown) => {
    throw forRun(error);
  });
  const graphId = assistant.graph_id;
  refuseUnsupportedOptions(body);
  if (body.on_completion === "delete" && threadId !== null) {
    throw httpError("REQUEST_INVALID", 'on_completion "delete" is for stateless runs (POST /runs, /runs/stream, /runs/wait): a run on a thread keeps its thread', { field: "on_completion" });
  }
  const completion: RunCompletionOptions =
    body.on_completion === "delete" ? { deleteThread: true, ...(options.holdCompletionMs === undefined ? {} : { completionHoldMs: options.holdCompletionMs }) } : {};
  let thread = threadId;
  // a thread this request creates is removed again when the run is refused: a rejected request changes nothing
  let createdHere = false;
  if (thread === null) {
    thread = (await runtime.threads.create({ metadata: { graph_id: graphId, ...ownerMetadata } })).thread_id;
    createdHere = true;
  } else {
    try {
      await runtime.threads.get(thread, filter);
    } catch (error) {
      if (!hasErrorCode(error, "THREAD_NOT_FOUND") || body.if_not_exists !== "create") throw error;
      const created = await runtime.threads.create({ threadId: thread, metadata: { graph_id: graphId, ...ownerMetadata }, ifExists: "do_nothing" });
      // it existed after all (another user's): still not found for this caller
      if (filter !== undefined) await runtime.threads.get(created.thread_id, filter);
      createdHere = true;
    }
  }
  try {
    if ((body.multitask_strategy === "interrupt" || body.multitask_strategy === "rollback") && !createdHere && body.command == null) {
      await interruptThread(runtime, thread, body.multitask_strategy === "rollback");
    }
    return await startGraphRun(runtime, thread, { assistantId: assistant.assistant_id, graphId }, body, { principal, reason: options.reason }, completion);
  } catch (error) {
    if (createdHere) await runtime.threads.delete(thread).catch(() => undefined);
    throw error;
  }
}

/**
 * The refusal the plain path's `error` would have been in the order requests are checked (a
 * missing assistant, then an unsupported option, then a missing or hidden thread, then the
 * input; `threadId` null for an option's refusal): a 404 for what does not exist wins over a 422
 * for the rest of the request. Reads only on this refusal path: the plain request keeps its one
 * transaction.
 */
async function inRefusalOrder(runtime: Runtime, threadId: string | null, assistantId: string, filter: RunAccess["filter"], error: unknown): Promise<unknown> {
  if (!(error instanceof DevmindError) || error.code.endsWith("_NOT_FOUND")) return error;
  try {
    await runtime.assistants.get(assistantId);
  } catch (missing) {
    return forRun(missing);
  }
  // an unsupported option is refused before the thread is looked at (threadId null)
  if (threadId === null) return error;
  try {
    await runtime.threads.get(threadId, filter);
  } catch (missing) {
    if (hasErrorCode(missing, "THREAD_NOT_FOUND")) return missing;
    throw missing;
  }
  return error;
}

/** The official server words a missing assistant's refusal for runs ("No assistant found for ..."): marked so. */
function forRun(error: unknown): unknown {
  if (!hasErrorCode(error, "ASSISTANT_NOT_FOUND")) return error;
  return new DevmindError("ASSISTANT_NOT_FOUND", error.message, { details: { ...error.details, forRun: true } });
}

const ASSISTANT_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A request `startRun` serves in one transaction: a new run with input on a named thread, of a
 * loaded graph or an assistant uuid, with no command, checkpoint, thread creation or multitask
 * interrupt / rollback (those read the thread first, and refuse in the order they always did).
 */
function isPlainRun(runtime: Runtime, body: RunCreateBody): boolean {
  const raw = body as Record<string, unknown>;
  return (
    body.command == null &&
    body.input !== undefined &&
    body.input !== null &&
    body.if_not_exists !== "create" &&
    body.on_completion !== "delete" &&
    body.multitask_strategy !== "interrupt" &&
    body.multitask_strategy !== "rollback" &&
    raw["checkpoint_id"] == null &&
    raw["checkpoint"] == null &&
    (ASSISTANT_UUID.test(body.assistant_id) || runtime.graphs.has(body.assistant_id))
  );
}

/**
 * multitask_strategy "interrupt": cancels the thread's pending and running runs and
 * waits (at most SERVER_DEFAULTS.interruptStopMs) until they stopped; the new run is then created
 * with "enqueue", so it starts after any that is still stopping.
 */
async function interruptThread(runtime: Runtime, threadId: string, rollback: boolean): Promise<void> {
  const active = (await Promise.all((["pending", "running"] as const).map((status) => runtime.runs.list({ threadId, status, limit: 100 })))).flat();
  await Promise.all(active.map((run) => (rollback ? cancelAndRollback(runtime, run) : stopRun(runtime, run))));
}

/** Cancels a run and waits (at most SERVER_DEFAULTS.interruptStopMs) until it stopped; returns it as it then is. */
async function stopRun(runtime: Runtime, run: RunRecord): Promise<RunRecord> {
  const cancelled = await runtime.runs.cancel(run.run_id).catch(() => run);
  return cancelled.status === "running" ? runtime.runs.waitStopped(run.run_id, { timeoutMs: SERVER_DEFAULTS.interruptStopMs }) : cancelled;
}

/**
 * Cancel with `action=rollback` (and multitask "rollback"): cancels the run, waits until it
 * stopped, then removes its checkpoints and the run (`runtime.runs.rollback`). A finished run is
 * rolled back as it is. RunConflictError when it did not stop in time.
 */
export async function cancelAndRollback(runtime: Runtime, run: RunRecord): Promise<void> {
  const stopped = STOPPED.has(run.status) ? run : await stopRun(runtime, run);
  if (stopped.status === "running" || stopped.status === "pending") throw new RunConflictError(`run ${run.run_id} is still stopping; retry the rollback`, { runId: run.run_id });
  await runtime.runs.rollback(run.run_id);
}

const STOPPED: ReadonlySet<string> = new Set(FINAL_STATUSES);

/**
 * Waits until the run ended (at an interrupt too), at most SERVER_DEFAULTS.waitMaxMs or until
 * `signal` aborts; returns the run as it then is, with the graph's final state when this process
 * executed it. `known`: the run was created after `runtime.runs.listenEnds()` resolved true, so
 * the wait starts from `started` without reading it.
 */
export async function waitForRun(runtime: Runtime, started: RunRecord, signal: AbortSignal, known = false): Promise<EndedRun> {
  // woken by the run's end (its final event, in this process or by NOTIFY from another), not a poll
  return runtime.runs.waitEnd(started.run_id, { timeoutMs: SERVER_DEFAULTS.waitMaxMs, signal, ...(known ? { known: started } : {}) });
}

/**
 * What `runs.wait` and `runs.join` answer: the thread's values, with `__interrupt__` while it
 * waits for approval; for a failed or timed-out run the official `{__error__}` (`waitErrorBody`).
 * `state`: the graph's state at the run's end, as its executor in this process read it (else the
 * thread's state is read).
 */
export async function finalValues(runtime: Runtime, run: RunRecord, ended?: StateSnapshot): Promise<Record<string, unknown>> {
  if (run.status === "error" || run.status === "timeout") return waitErrorBody(run);
  const state = ended ?? (await runtime.threads.state(run.thread_id));
  const values = toWire(state.values ?? {}) as Record<string, unknown>;
  const interrupts = interruptsOf(state);
  return run.stop_reason === "interrupt" && interrupts.length > 0 ? { ...values, __interrupt__: interrupts } : values;
}
