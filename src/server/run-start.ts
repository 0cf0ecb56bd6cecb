import { RUNTIME_DEFAULTS, SERVER_DEFAULTS } from "../constants.js";
import { DevmindError, hasErrorCode, RunConflictError } from "../errors.js";
import { inputMessages } from "../runtime/run-input.js";
import type { RunRecord } from "../runtime/run-record.js";
import { isRunEvent, type Runtime } from "../runtime/runtime.js";
import { httpError } from "./http-errors.js";
import type { StreamCursor } from "./stream-cursor.js";
import { AgentInput, validate, type RunCreateBody } from "./validation.js";
import { interruptsOf, toWire } from "./wire.js";
import { waitErrorBody } from "./run-error-part.js";
import { multitaskOf, refuseEventsOnResume, refuseUnsupportedOptions, runLimitsOf, runOptionsOf, startGraphRun, type RunCompletionOptions } from "./graph-run-start.js";

/** A run a request started (or resumed), and where its stream should begin. */
export interface StartedRun {
  run: RunRecord;
  /** Set when the request resumed an interrupted run: stream from here, not from the start. */
  from?: StreamCursor;
  /** The resumed run will continue (every waiting call is decided): wait for it to leave `interrupted`. */
  waitForResume: boolean;
  /** Seq of the run's last event when the request started (for `wait`). */
  startSeq: number;
}

const ROLE_TYPES: Record<string, string> = { human: "human", user: "human", ai: "ai", assistant: "ai", system: "system", tool: "tool" };

/**
 * Input messages as LangGraph clients send them — strings, `{type: "human", content, id?}`
 * (useStream, Agent Chat UI), `{role: "user", content}` with text or content blocks, stored
 * `{type, data}` — in the forms the runtime accepts (`inputMessages`).
 */
export function normalizeMessages(messages: readonly unknown[]): unknown[] {
  const normalized = messages.map((message, index) => {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return message;
    const record = message as Record<string, unknown>;
    if (record["data"] !== undefined) return record;
    const kind = typeof record["type"] === "string" ? record["type"] : typeof record["role"] === "string" ? record["role"] : undefined;
    const type = kind === undefined ? undefined : ROLE_TYPES[kind];
    if (type === undefined) return record;
    const { type: _type, role: _role, ...data } = record;
    const content = data["content"] ?? "";
    if (typeof content !== "string" && !(Array.isArray(content) && content.every((block) => block !== null && typeof block === "object" && !Array.isArray(block)))) {
      throw new DevmindError("RUN_INPUT_INVALID", `message ${index}: content must be text or a list of content blocks`, { details: { index } });
    }
    if (type === "tool" && typeof data["tool_call_id"] !== "string") throw new DevmindError("RUN_INPUT_INVALID", `message ${index}: a tool message needs tool_call_id`, { details: { index } });
    return { type, data: { ...data, content } };
  });
  // the runtime builds LangChain messages from these; whatever it cannot build is the caller's input
  try {
    inputMessages({ messages: normalized });
  } catch (error) {
    if (error instanceof DevmindError) throw error;
    throw new DevmindError("RUN_INPUT_INVALID", `input messages are not valid LangChain messages: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
  }
  return normalized;
}


/**
 * Starts what a LangGraph run request asks for on `threadId` (null: a new thread, as for
 * stateless runs) with the graph its `assistant_id` names (404 for none loaded): for the agent,
 * a new run with `input {messages}` or none (it continues the thread's checkpoint, or the one
 * `checkpoint_id` names), or — with `command.resume` — the decisions of CONTRACT section 5 on the
 * thread's interrupted run, recorded with `principal`; for any other graph, `startGraphRun`. A
 * resumed run continues on a worker (devmind resumes the same run, it does not start another).
 * Multitask `interrupt` / `rollback` stop (and roll back) the thread's active runs first. Run
 * options devmind does not implement are refused naming them.
 * `on_completion: "delete"` (stateless runs only; 422 on a thread's) has the workers delete the
 * new thread once the run ended, after `holdCompletionMs` or `runtime.runs.releaseCompletion`
 * when the caller still reads it (wait, stream).
 */
export async function startRun(runtime: Runtime, threadId: string | null, body: RunCreateBody, principal: string, options: { holdCompletionMs?: number } = {}): Promise<StartedRun> {
  const assistant = await runtime.assistants.get(body.assistant_id).catch((error: unknown) => {
    // the official server words this refusal for runs ("No assistant found for ..."): mark it so
    if (!hasErrorCode(error, "ASSISTANT_NOT_FOUND")) throw error;
    throw new DevmindError("ASSISTANT_NOT_FOUND", error.message, { details: { ...error.details, forRun: true } });
  });
  const graphId = assistant.graph_id;
  refuseUnsupportedOptions(body);
  if (body.on_completion === "delete" && threadId !== null) {
    throw httpError("REQUEST_INVALID", 'on_completion "delete" is for stateless runs (POST /runs, /runs/stream, /runs/wait): a run on a thread keeps its thread', { field: "on_completion" });
  }
  const completion: RunCompletionOptions =
    body.on_completion === "delete" ? { deleteThread: true, ...(options.holdCompletionMs === undefined ? {} : { completionHoldMs: options.holdCompletionMs }) } : {};
  // a resume continues the same run (devmind does not start another), which keeps its own webhook
  if (body.webhook !== undefined && body.webhook !== null && body.command !== undefined && body.command !== null) {
    throw httpError("REQUEST_INVALID", "webhook is not supported with command: the resumed run keeps the webhook it was created with", { field: "webhook" });
  }
  const agent = runtime.graphs.isBuiltinAgent(graphId);
  const resume = body.command?.resume;
  if (agent) {
    if (body.command?.update !== undefined || body.command?.goto !== undefined) throw httpError("REQUEST_INVALID", "command.update and command.goto are not supported for the agent; use command.resume");
    // an empty input (`{}` or null) beside a command is no input, as LangGraph clients send it
    const input = body.input;
    const hasInput = input !== undefined && input !== null && !(typeof input === "object" && !Array.isArray(input) && Object.keys(input).length === 0);
    if (resume !== undefined && hasInput) throw httpError("REQUEST_INVALID", "send either input or command.resume, not both");
    // without a command, only null (or none) is no input: the run continues the thread's checkpoint
    if (resume === undefined && input !== undefined && input !== null) validate(AgentInput, input);
    // config.metadata is the run's metadata (`runOptionsOf`); the agent takes no other config
    const config = Object.entries(body.config ?? {}).filter(([key, value]) => key !== "metadata" && value !== undefined && value !== null);
    if (config.length > 0) throw httpError("REQUEST_INVALID", "config is not supported for the agent: use limits", { field: "config" });
    if (body.context !== undefined && body.context !== null) throw httpError("REQUEST_INVALID", "context is not supported for the agent", { field: "context" });
  }

  let thread = threadId;
  // a thread this request creates is removed again when the run is refused: a rejected request changes nothing
  let createdHere = false;
  if (thread === null) {
    thread = (await runtime.threads.create({ metadata: { graph_id: graphId } })).thread_id;
    createdHere = true;
  } else {
    try {
      await runtime.threads.get(thread);
    } catch (error) {
      if (!hasErrorCode(error, "THREAD_NOT_FOUND") || body.if_not_exists !== "create") throw error;
      await runtime.threads.create({ threadId: thread, metadata: { graph_id: graphId }, ifExists: "do_nothing" });
      createdHere = true;
    }
  }
  try {
    if ((body.multitask_strategy === "interrupt" || body.multitask_strategy === "rollback") && !createdHere && body.command == null) {
      await interruptThread(runtime, thread, body.multitask_strategy === "rollback");
    }
    return agent
      ? await startOnThread(runtime, thread, assistant.assistant_id, body, principal, resume, completion)
      : await startGraphRun(runtime, thread, { assistantId: assistant.assistant_id, graphId }, body, principal, completion);
  } catch (error) {
    if (createdHere) await runtime.threads.delete(thread).catch(() => undefined);
    throw error;
  }
}

/**
 * The agent's run on `thread`: the resume of its interrupted run (`command.resume`), or a new run
 * with `input {messages}` or none (`input` null or absent: it continues from the thread's
 * checkpoint, or from `checkpoint_id` — Agent Chat UI's Regenerate — running what is pending
 * there), with the run options of `runOptionsOf`.
 */
async function startOnThread(runtime: Runtime, thread: string, assistantId: string, body: RunCreateBody, principal: string, resume: unknown, completion: RunCompletionOptions): Promise<StartedRun> {
  if (resume !== undefined) {
    const [waiting] = await runtime.runs.list({ threadId: thread, status: "interrupted", limit: 1 });
    if (waiting === undefined) throw new RunConflictError(`thread ${thread} has no run waiting for approval to resume`, { threadId: thread });
    refuseEventsOnResume(body, waiting);
    const startSeq = await runtime.runs.lastEventSeq(waiting.run_id);
    const { snapshots } = await runtime.threads.runSnapshots(thread, waiting.run_id, undefined);
    await runtime.runs.decide(waiting.run_id, resume, { principal });
    const requests = await runtime.runs.pendingApprovals(waiting.run_id);
    const decided = new Set<string>();
    for await (const event of runtime.runs.events(waiting.run_id)) if (isRunEvent(event) && event.type === "approval.decided") decided.add(event.tool_call_id);
    return {
      run: await runtime.runs.get(waiting.run_id),
      from: { seq: startSeq, values: snapshots.length, settled: snapshots.length },
      waitForResume: requests.every((request) => decided.has(request.tool_call_id)),
      startSeq,
    };
  }
  const options = runOptionsOf(body);
  const given = body.input as { messages: unknown[] } | null | undefined;
  const input = given === undefined || given === null ? null : { ...given, messages: normalizeMessages(given.messages) };
  const from = options.checkpointId === undefined ? await runtime.threads.state(thread) : await runtime.threads.stateAt(thread, options.checkpointId);
  if (options.checkpointId !== undefined && from.createdAt === undefined) {
    throw httpError("NOT_FOUND", `no checkpoint ${JSON.stringify(options.checkpointId.slice(0, 100))} on thread ${thread}`, { field: "checkpoint_id" });
  }
  if (input === null && from.createdAt === undefined) {
    throw httpError("REQUEST_INVALID", "input { messages: [...] } is required: the thread has no checkpoint to continue from (input null continues one; command.resume resumes an interrupted run)", { field: "input" });
  }
  const limits = runLimitsOf(body);
  const run = await runtime.runs.create({
    threadId: thread,
    assistantId,
    ...options,
    input: input as never,
    multitask: multitaskOf(body),
    ...(limits === undefined ? {} : { limits }),
    webhook: body.webhook ?? null,
    ...completion,
  });
  return { run, waitForResume: false, startSeq: 0 };
}

/**
 * multitask_strategy "interrupt": cancels the thread's pending, running and interrupted runs and
 * waits (at most SERVER_DEFAULTS.interruptStopMs) until they stopped; the new run is then created
 * with "enqueue", so it starts after any that is still stopping.
 */
async function interruptThread(runtime: Runtime, threadId: string, rollback: boolean): Promise<void> {
  const active = (await Promise.all((["pending", "running", "interrupted"] as const).map((status) => runtime.runs.list({ threadId, status, limit: 100 })))).flat();
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
  const stopped = STOPPED.has(run.status) && run.status !== "interrupted" ? run : await stopRun(runtime, run);
  if (stopped.status === "running" || stopped.status === "pending") throw new RunConflictError(`run ${run.run_id} is still stopping; retry the rollback`, { runId: run.run_id });
  await runtime.runs.rollback(run.run_id);
}

const STOPPED = new Set(["interrupted", "success", "error", "timeout", "cancelled"]);

/**
 * Waits until the run is interrupted or terminal (for a resumed run: after it resumed), at most
 * SERVER_DEFAULTS.waitMaxMs or until `signal` aborts; returns the run as it then is.
 */
export async function waitForRun(runtime: Runtime, started: StartedRun, signal: AbortSignal): Promise<RunRecord> {
  const deadline = Date.now() + SERVER_DEFAULTS.waitMaxMs;
  let resumed = !started.waitForResume;
  for (;;) {
    const run = await runtime.runs.get(started.run.run_id);
    if (!resumed) {
      if (run.status !== "interrupted") resumed = true;
      else for await (const event of runtime.runs.events(run.run_id, { after: started.startSeq })) if (event.type === "run.resumed") resumed = true;
    }
    if ((STOPPED.has(run.status) && (resumed || run.status !== "interrupted")) || signal.aborted || Date.now() >= deadline) return run;
    await new Promise((resolve) => setTimeout(resolve, RUNTIME_DEFAULTS.waitPollMs));
  }
}

/**
 * What `runs.wait` and `runs.join` answer: the thread's values, with `__interrupt__` while it
 * waits for approval; for a failed or timed-out run the official `{__error__}` (`waitErrorBody`).
 */
export async function finalValues(runtime: Runtime, run: RunRecord): Promise<Record<string, unknown>> {
  if (run.status === "error" || run.status === "timeout") return waitErrorBody(run);
  const state = await runtime.threads.state(run.thread_id);
  const values = toWire(state.values ?? {}) as Record<string, unknown>;
  const interrupts = interruptsOf(state);
  return run.status === "interrupted" && interrupts.length > 0 ? { ...values, __interrupt__: interrupts } : values;
}
