import { isBaseMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Command, type StateSnapshot } from "@langchain/langgraph";
import { CHECKPOINT_RIDER_KEY, fenceConfigurable, type CheckpointRider } from "../../checkpoint/fence-config.js";
import { CHECKPOINT_MEMO_KEY, type CheckpointMemo } from "../../checkpoint/checkpoint-memo.js";
import { setMaxListeners } from "node:events";
import { GRAPHS_DEFAULTS, LIVE_MESSAGES, RUNTIME_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { Queryable } from "../../db/types.js";
import { DevmindError, LeaseLostError } from "../../errors.js";
import type { CompiledGraphLike } from "../../graphs/graph-kinds.js";
import { RUN_HANDLE_KEY, stepEventOf, type RunHandle } from "../../graphs/run-handle.js";

import type { NewRunEvent } from "../events/event-store.js";
import type { ExecutorDeps } from "./executor.js";
import { appendWithPending, type PendingEvents } from "./run-end-events.js";
import type { Fence } from "../queue/fence.js";
import { graphRunsTools } from "../../graphs/tool-nodes.js";
import { GraphToolLedger } from "../ledger/graph-tool-ledger.js";
import type { GraphRunHooks, RunCounters } from "../../graphs/run-hooks.js";
import { runError, type RunError, type StopReason } from "../../vocabulary/stop-reasons.js";
import type { AgentEvent } from "../../vocabulary/events.js";
import { reachedBreakpoint, stoppedAtBreakpoint } from "./breakpoints.js";
import { graphChunks } from "./graph-stream-events.js";
import { CallTally } from "./call-tally.js";
import { ToolNamespaces } from "./tool-namespaces.js";
import type { ObservedCall } from "./run-observer.js";
import { interruptsOf, nodesGone } from "./graph-state.js";
import { plainJson } from "../events/plain-json.js";
import { isHitlRequest } from "../interrupts/hitl-decisions.js";
import type { ResumeRecord } from "../interrupts/resume-store.js";
import type { RunCounts, RunInterrupt, RunRecord } from "../queue/run-record.js";
import type { GraphRunEvent } from "../events/run-events.js";
import { checkpointIdOf } from "../threads/thread-state.js";

/** One attempt at a claimed run of any graph, as the executor set it up. */
export interface Attempt {
  deps: ExecutorDeps;
  run: RunRecord;
  epoch: number;
  fence: Fence;
  owner: string;
  trigger: AttemptTrigger;
  /** Nothing of this run has executed before (its first claim, executed for the first time). */
  fresh: boolean;
  /** The claim saw no open resume for the run (nor for the run it resumes): none to read. */
  noOpenResumes: boolean;
  started: number;
  /** LangChain callback handlers the graph runs with (an observer's tracer); none by default. */
  callbacks?: readonly unknown[] | undefined;
  /** Told each model and tool call of a graph that reports none itself (the observer's `call`); none by default. */
  observeCall?: ((call: ObservedCall) => void) | undefined;
  signals: { cancel: AbortSignal; lost: AbortSignal; fault: AbortSignal };
  /** Stores events in order (fenced; retried through a database fault); `hold`: they wait for the next checkpoint write (see `RunEventBatcher`). */
  append: (events: NewRunEvent[], options?: { hold?: boolean }) => Promise<unknown>;
  /** Takes the events waiting to be stored into the run's next checkpoint write (one commit for both). */
  rider: CheckpointRider;
  /** The thread's newest checkpoint as this attempt knows it: its graph reads it without a query. */
  memo: CheckpointMemo;
  /** Resolves once every appended event is stored (or failed). */
  settled: () => Promise<unknown>;
  /** The events still waiting to be stored, for the run's ending transaction (see `RunEventBatcher.takeForEnd`). */
  takeForEnd: PendingEvents;
  lostLease: () => boolean;
  /** Tool calls this process began to run under this claim (see `ClaimedRun.launched`). */
  launched: Set<string>;
  /** `state`: the graph's state at the end, when read (handed to this process's waiters). */
  finish: (stopReason: StopReason, counts: RunCounts, error: RunError | null, answer?: string | null, state?: StateSnapshot) => Promise<RunRecord>;
}

/** Why a run's signal was aborted by the executor (not by the graph). */
class StopSignal extends Error {
  constructor(readonly why: "deadline" | "drained") {
    super(why);
  }
}

/** Delivers a graph event to this process's live subscribers, then stores it (in order, not awaited by the graph). */
function emit(attempt: Attempt, data: GraphRunEvent): void {
  attempt.deps.live(attempt.run.run_id, data);
  void attempt.append([data]).catch(() => undefined);
}

/**
 * The run's config as the graph sees it: the run's configurable and tags, plus its ids as
 * configurable values (as LangGraph Platform sets them); LangGraph copies them into each
 * checkpoint's metadata, which is how a later attempt knows the thread's last checkpoint is this run's.
 */
function runnableConfig(run: RunRecord, hooks: GraphRunHooks, callbacks?: readonly unknown[]): RunnableConfig {
  const ids = { run_id: run.run_id, graph_id: run.graph_id, assistant_id: run.assistant_id };
  return {
    configurable: { ...(run.config.configurable ?? {}), ...ids, thread_id: run.thread_id },
    ...(run.config.tags === undefined ? {} : { tags: run.config.tags }),
    // the run's metadata reaches its checkpoints' metadata (history filters find it), the ids winning
    metadata: { ...run.metadata, run_id: run.run_id, graph_id: run.graph_id, assistant_id: run.assistant_id },
    recursionLimit: run.config.recursion_limit ?? hooks.recursionLimit ?? GRAPHS_DEFAULTS.recursionLimit,
    ...(callbacks === undefined || callbacks.length === 0 ? {} : { callbacks: [...callbacks] as RunnableConfig["callbacks"] }),
  };
}

/**
 * The resume the run continues with: the open resumes' values for the interrupts still pending
 * (latest value per interrupt id wins), and the last resume's update / goto. Null when there is
 * nothing to resume with.
 */
function resumeCommand(pending: RunInterrupt[], open: ResumeRecord[]): Command | null {
  const ids = new Set(pending.map((item) => item.id));
  const values: Record<string, unknown> = {};
  let update: unknown;
  let goto: unknown;
  for (const resume of open) {
    for (const [id, value] of Object.entries(resume.command.values ?? {})) if (ids.has(id)) values[id] = value;
    if (resume.command.update !== undefined) update = resume.command.update;
    if (resume.command.goto !== undefined) goto = resume.command.goto;
  }
  if (Object.keys(values).length === 0 && update === undefined && goto === undefined) return null;
  return new Command({ ...(Object.keys(values).length === 0 ? {} : { resume: values }), ...(update === undefined ? {} : { update: update as never }), ...(goto === undefined ? {} : { goto: goto as never }) });
}

/** Step events a graph reports that are delivered live only, never stored (CONTRACT section 6: the token stream). */
const LIVE_ONLY: ReadonlySet<string> = new Set(["model.delta", "graph.stopped"]);

/**
 * The stream modes the graph runs with: `tasks` and `custom` (the run's events) always; `tools`
 * (LangGraph's tool callback handler, which runs around every node, edge and write) only for a
 * graph with a tool node or a run created asking for it; `messages` (the callback handler that
 * makes chat models stream their tokens) only for a run created asking for tokens (`messages` or
 * `messages-tuple` in its `stream_mode`), as the official server streams a run with the modes it
 * was created with: a stream joined later asking for them gets each message whole from its
 * checkpoint. Each handler costs about 0.1 ms a step.
 */
export function graphStreamModes(run: Pick<RunRecord, "stream_mode" | "limits">, runsTools: boolean): string[] {
  const modes = ["tasks", "custom"];
  if (run.stream_mode?.some((mode) => TOKEN_MODES.has(mode)) === true) modes.push("messages");
  if (run.limits.recordTools === true || runsTools) modes.push("tools");
  return modes;
}

/** The stream modes (as a client names them) that send a chat model's tokens. */
const TOKEN_MODES: ReadonlySet<string> = new Set(["messages", "messages-tuple"]);

/** Why the run continues: approvals when every interrupt the resume answers is a HITL request. */
function resumeReason(pending: RunInterrupt[], command: Command): "approval" | "resume" {
  const answered = Object.keys((command.resume as Record<string, unknown> | undefined) ?? {});
  const items = pending.filter((item) => answered.includes(item.id));
  return items.length > 0 && items.every((item) => isHitlRequest(item.value)) ? "approval" : "resume";
}

/**
 * What started an attempt: a worker's claim, a command continuing the run in its own process
 * (`manual`), or a worker's claim of a run it stopped at a step boundary a moment ago so that it
 * continues on graph code reloaded by `devmind dev` (`reload`).
 */
export type AttemptTrigger = "worker" | "manual" | "reload";

/** The `run.resumed` reason of an attempt that continues a run from its own last checkpoint. */
function continueReason(trigger: AttemptTrigger): "manual" | "recovery" | "reload" {
  return trigger === "worker" ? "recovery" : trigger;
}

/**
 * Runs a claimed run of any graph until it ends, pauses at an interrupt, loses its lease, or the
 * process drains. Starts the graph with the run's input (as the graph's run hooks enter it),
 * continues one whose process died (from its last checkpoint: LangGraph skips tasks whose writes
 * are stored), or resumes an interrupted one with its stored resumes. Streams the graph's tasks,
 * custom writes and tool lifecycle into stored events, with the step events the graph reports
 * through its run handle, in one sequence; a cancel, the run's deadline and LangGraph's recursion
 * limit are stop reasons, as are those the graph's hooks read from its values.
 */
export async function executeGraphAttempt(attempt: Attempt): Promise<RunRecord> {
  const { deps, run, epoch, fence, owner } = attempt;
  const hooks = deps.graphs.hooks(run.graph_id);
  const elapsed = (): number => Date.now() - attempt.started;
  let counters: RunCounters = { modelRounds: run.model_rounds, toolCalls: run.tool_calls, usage: run.usage };
  // a graph that keeps no counters of its own: its model and tool calls are counted as they happen
  const tally = hooks.counters === undefined ? new CallTally(attempt.observeCall) : null;
  const counts = (): RunCounts => ({ ...(tally === null ? counters : tally.added(counters)), activeMsDelta: elapsed() });
  const countFrom = (state: StateSnapshot): void => {
    if (hooks.counters !== undefined) counters = hooks.counters(state.values);
  };
  const stop = new AbortController();
  const budgetMs = (run.limits.runTimeoutMs ?? deps.runTimeoutMs) - run.active_ms;
  // a graph that stops itself at its deadline (and on a cancel) answers what was in flight first
  const deadline = hooks.stopsItself === true ? undefined : setTimeout(() => stop.abort(new StopSignal("deadline")), Math.max(0, budgetMs));
  deadline?.unref?.();
  const inFlight = new Map<string, { node: string; at: number; ns: string[] }>();
  let toolLedger: GraphToolLedger | undefined;
  // LangChain tools under way (the tools stream), by call: their end events say how long they ran
  const toolsStarted = new Map<string, number>();
  const onDrain = (): void => {
    // drained between steps: stop once the tasks of the current step have finished
    if (inFlight.size === 0) stop.abort(new StopSignal("drained"));
  };
  deps.drainSignal?.addEventListener("abort", onDrain, { once: true });
  try {
    if (budgetMs <= 0 && hooks.stopsItself !== true) return await attempt.finish("deadline", counts(), null);
    const config = runnableConfig(run, hooks, attempt.callbacks);
    const graph: CompiledGraphLike = await deps.graphs.compiled(run.graph_id, config);
    // the state reads of the thread's newest checkpoint take it from the memo (no query) when it knows it
    const thread = { configurable: { thread_id: run.thread_id, [CHECKPOINT_MEMO_KEY]: attempt.memo } };
    // a fresh run has no checkpoint of its own yet: its state is read only to continue or resume it
    // (a run created by a resume, or with a Command, resumes from the thread's state at once)
    const resumes = (): Promise<ResumeRecord[]> => openResumes(deps, run);
    const given = attempt.fresh ? (attempt.noOpenResumes ? [] : await resumes()) : null;
    const before = attempt.fresh && given?.length === 0 ? null : ((await graph.getState(thread)) as StateSnapshot);
    const ours = before !== null && before.metadata?.["run_id" as never] === run.run_id;
    const resumeWith = before !== null && !ours && run.checkpoint_id === null ? resumeCommand(interruptsOf(before), given ?? (await resumes())) : null;
    // time travel: a run's first attempt starts from the checkpoint it names; later ones from its own
    const fork = !ours && run.checkpoint_id !== null ? { checkpoint_id: run.checkpoint_id, checkpoint_ns: "" } : {};
    let input: unknown;
    if (resumeWith !== null && before !== null) {
      // the run a resume created (CONTRACT section 3): the waiting run's thread continues with it
      countFrom(before);
      input = resumeWith;
      void attempt.append([{ type: "run.started", attempt: run.attempt, worker: owner }]).catch(() => undefined);
      await attempt.append([{ type: "run.resumed", reason: resumeReason(interruptsOf(before), resumeWith), attempt: run.attempt, worker: owner }]);
    } else if (before === null || !ours) {
      input = run.input;
      if (hooks.entry !== undefined) {
        const from = async (): Promise<StateSnapshot> =>
          run.checkpoint_id === null && before !== null ? before : ((await graph.getState({ configurable: { ...thread.configurable, ...fork } })) as StateSnapshot);
        const entry = await hooks.entry(run, from, deps.runTimeoutMs);
        if (entry.kind === "nothing") {
          // no input and nothing pending where it starts (a finished thread): done at once
          await attempt.append([{ type: "run.started", attempt: run.attempt, worker: owner }]);
          await attempt.settled();
          if (attempt.lostLease()) return await deps.runs.get(run.run_id);
          return await attempt.finish("completed", { modelRounds: 0, toolCalls: 0, usage: { input_tokens: 0, output_tokens: 0 }, activeMsDelta: elapsed() }, null);
        }
        input = entry.input;
      }
      // stored in order ahead of the graph's events, in the commit of the graph's first checkpoint
      // (held for it: no commit of its own), not awaited: a lease lost meanwhile fails that
      // checkpoint and stops the attempt
      void attempt.append([{ type: "run.started", attempt: run.attempt, worker: owner }], { hold: true }).catch(() => undefined);
    } else {
      countFrom(before);
      const pending = interruptsOf(before);
      if (pending.length > 0) {
        const command = resumeCommand(pending, await resumes());
        // nothing answers its interrupts (it stopped at them and died before it ended): it ends there
        if (command === null) return await endAtInterrupt(attempt, counts(), pending, checkpointIdOf(before), before);
        input = command;
        await attempt.append([{ type: "run.resumed", reason: resumeReason(pending, command), attempt: run.attempt, worker: owner }]);
      } else if (reachedBreakpoint(run, before)) {
        // its last attempt stopped at a breakpoint and died before the run was marked finished
        return await endAtInterrupt(attempt, counts(), [], checkpointIdOf(before), before);
      } else if (before.tasks.length > 0) {
        // not `before.next`: it leaves out tasks whose writes are already stored, e.g. a step that
        // finished while the checkpoint after it was being saved when the process died; the graph
        // is unfinished all the same, and invoke(null) applies those writes and goes on
        input = null;
        await attempt.append([{ type: "run.resumed", reason: continueReason(attempt.trigger), attempt: run.attempt, worker: owner }]);
      } else {
        // its checkpoint may wait at nodes the graph no longer has (written by an earlier version)
        const gone = await nodesGone(graph as never, before);
        // its last attempt ended the graph and died before the run was marked finished
        if (gone.length === 0) return await finishFromState(attempt, hooks, before, counts);
        const more = hooks.continueFrom?.(before.values, run, deps.runTimeoutMs, gone) ?? null;
        if (more === null) {
          const why = `the run's last checkpoint waits at ${gone.map((node) => `"${node}"`).join(", ")}, which graph "${run.graph_id}" no longer has (it changed while the run was in flight)`;
          return await attempt.finish("internal_error", counts(), runError("GRAPH_NODE_GONE", why));
        }
        input = more;
        await attempt.append([{ type: "run.resumed", reason: continueReason(attempt.trigger), attempt: run.attempt, worker: owner }]);
      }
    }
    const reported = (event: AgentEvent): void => {
      // the graph's step events (model.*, tool.call.*) join the run's one sequence; tokens are live only
      if (LIVE_ONLY.has(event.type)) attempt.deps.live(attempt.run.run_id, event);
      else emit(attempt, event as GraphRunEvent);
    };
    const signal = AbortSignal.any([attempt.signals.cancel, attempt.signals.lost]);
    // every model and tool call of the run listens to it (Node warns past 10 listeners)
    setMaxListeners(RUNTIME_DEFAULTS.runSignalMaxListeners, signal);
    // outcomes are written through a database fault (retried) until the call is cancelled, the
    // lease lost or the process drains
    const ledgerStop = AbortSignal.any([signal, ...(deps.drainSignal === undefined ? [] : [deps.drainSignal])]);
    setMaxListeners(RUNTIME_DEFAULTS.runSignalMaxListeners, ledgerStop);
    toolLedger = new GraphToolLedger(deps.ledger, deps.decisions, fence, ledgerStop, deps.onDatabaseFault, attempt.rider, attempt.launched);
    const callSignal = AbortSignal.any([attempt.signals.cancel, attempt.signals.lost, stop.signal]);
    setMaxListeners(RUNTIME_DEFAULTS.runSignalMaxListeners, callSignal);
    const handle: RunHandle = {
      runId: run.run_id,
      threadId: run.thread_id,
      signal,
      // a tool call stops for what stops the run (cancel, lease, deadline, drain), never for a
      // database fault: the call finishes and its outcome is recorded (see toolLedger.settled)
      callSignal,
      ledger: toolLedger,
      limits: run.limits,
      emit: reported,
      drainSignal: deps.drainSignal,
    };
    // a run created with the `events` stream mode records LangChain's stream events too (graph-stream-events.ts)
    const recording = run.limits.maxStreamEvents === undefined ? null : { limit: run.limits.maxStreamEvents, emit: (event: GraphRunEvent) => emit(attempt, event) };
    // a graph that stops itself on a cancel reads it from its handle; LangGraph is not aborted for it
    const cancel = hooks.stopsItself === true ? [] : [attempt.signals.cancel];
    const streamModes = graphStreamModes(run, graphRunsTools(graph));
    // each tool call's task namespace, stored with its `tools` events (LangGraph's tools mode names the graph only)
    const toolNamespaces = streamModes.includes("tools") ? new ToolNamespaces() : null;
    const callbacks = [...(tally === null ? [] : [tally]), ...(toolNamespaces === null ? [] : [toolNamespaces])];
    const options = {
      ...config,
      configurable: { ...config.configurable, ...fork, ...fenceConfigurable(fence), [CHECKPOINT_RIDER_KEY]: attempt.rider, [CHECKPOINT_MEMO_KEY]: attempt.memo, [RUN_HANDLE_KEY]: handle },
      ...(run.interrupt_before === null ? {} : { interruptBefore: run.interrupt_before }),
      ...(run.interrupt_after === null ? {} : { interruptAfter: run.interrupt_after }),
      ...(run.context === null || run.context === undefined ? {} : { context: run.context }),
      signal: AbortSignal.any([...cancel, attempt.signals.lost, attempt.signals.fault, stop.signal]),
      ...(callbacks.length === 0 ? {} : { callbacks }),
      streamMode: streamModes,
      subgraphs: true,
    } as RunnableConfig;
    // LangGraph's tools stream reports the tool calls when it is on; the tally when it is off
    if (tally !== null) tally.observeTools = !streamModes.includes("tools");
    const stream = await graphChunks(graph, input, options, run.run_id, recording);
    // messages whose first chunk came: each one's start is stored once (its chunks are not)
    const streaming = new Set<string>();
    for await (const [ns, mode, payload] of stream) {
      if (mode === "messages") {
        // the tokens of chat models in any node, live only: the complete messages are in the checkpoints
        const [message, metadata] = payload as [BaseMessage, Record<string, unknown>];
        if (!isBaseMessageChunk(message)) continue;
        const checkpointNs = metadata?.["langgraph_checkpoint_ns"];
        if (typeof message.id === "string" && typeof checkpointNs === "string" && checkpointNs !== "" && !streaming.has(message.id) && streaming.size < LIVE_MESSAGES.startedMessagesMax) {
          streaming.add(message.id);
          emit(attempt, { type: "message.started", ns, checkpoint_ns: checkpointNs, message_id: message.id });
        }
        deps.liveMessages.publish(run.run_id, ns, message, metadata ?? {});
        continue;
      }
      if (mode === "custom") {
        const step = stepEventOf(payload);
        if (step !== undefined) reported(step);
        else emit(attempt, { type: "custom", ns, data: payload });
        continue;
      }
      if (mode === "tools") {
        const checkpointNs = toolNamespaces?.of((payload as { toolCallId?: unknown } | null)?.toolCallId);
        emit(attempt, { type: "tools", ns, data: toolEventData(payload), ...toolDuration(toolsStarted, ns, payload), ...(checkpointNs === undefined ? {} : { checkpoint_ns: checkpointNs }) });
        continue;
      }
      if (mode !== "tasks") continue;
      const task = payload as { id: string; name: string; triggers?: unknown; result?: unknown; error?: unknown; interrupts?: unknown[] };
      if ("triggers" in task || !("result" in task)) {
        inFlight.set(task.id, { node: task.name, at: Date.now(), ns });
        emit(attempt, { type: "node.started", node: task.name, task_id: task.id, ns });
        continue;
      }
      const begun = inFlight.get(task.id);
      inFlight.delete(task.id);
      const error = task.error === null || task.error === undefined ? null : errorText(task.error);
      emit(attempt, {
        type: "node.finished",
        node: task.name,
        task_id: task.id,
        ns,
        duration_ms: begun === undefined ? null : Date.now() - begun.at,
        error,
        interrupted: (task.interrupts ?? []).length > 0,
      });
      if (deps.drainSignal?.aborted === true && inFlight.size === 0) stop.abort(new StopSignal("drained"));
    }
    // the events still waiting go in the run's ending transaction (takeForEnd), not a commit of their own
    if (attempt.lostLease()) return await deps.runs.get(run.run_id);
    const after = (await graph.getState(thread)) as StateSnapshot;
    countFrom(after);
    const interrupts = interruptsOf(after);
    if (interrupts.length > 0) return await endAtInterrupt(attempt, counts(), interrupts, checkpointIdOf(after), after);
    // a static breakpoint ends the run at an interrupt too; a later run without input continues from there
    if (stoppedAtBreakpoint(after)) return await endAtInterrupt(attempt, counts(), [], checkpointIdOf(after), after);
    return await finishFromState(attempt, hooks, after, counts);
  } catch (error) {
    await attempt.settled().catch(() => undefined);
    if (attempt.lostLease() || error instanceof LeaseLostError || attempt.signals.lost.aborted) return await deps.runs.get(run.run_id);
    if (databaseFaultOf(error) !== null || attempt.signals.fault.aborted) {
      // the fault stopped the graph, not its tools: their outcomes are recorded before recovery
      // starts the next attempt in this process, which then finds them finished (not `started`,
      // which would be TOOL_OUTCOME_UNKNOWN though no process died)
      if (toolLedger !== undefined && toolLedger.pending > 0) {
        deps.onDatabaseFault?.(databaseFaultOf(error) !== null ? error : attempt.signals.fault.reason);
        await toolLedger.settled(RUNTIME_DEFAULTS.executeFaultWaitMs);
      }
      throw databaseFaultOf(error) !== null ? error : attempt.signals.fault.reason;
    }
    const why = stop.signal.aborted ? (stop.signal.reason as StopSignal).why : null;
    if (why === "drained" || (error instanceof DevmindError && error.code === "RUN_DRAINED")) {
      await deps.runs.release(run.run_id, epoch, counts());
      return await deps.runs.get(run.run_id);
    }
    if (attempt.signals.cancel.aborted) return await attempt.finish("cancelled", counts(), null);
    if (why === "deadline") return await attempt.finish("deadline", counts(), runError("RUN_DEADLINE", `the run exceeded its deadline of ${run.limits.runTimeoutMs ?? deps.runTimeoutMs} ms`));
    if (isRecursionError(error)) {
      const limit = run.config.recursion_limit ?? hooks.recursionLimit ?? GRAPHS_DEFAULTS.recursionLimit;
      return await attempt.finish("recursion_limit", counts(), runError("GRAPH_RECURSION_LIMIT", `the graph took ${limit} steps without finishing (config.recursion_limit)`));
    }
    const code = error instanceof DevmindError ? error.code : "GRAPH_FAILED";
    // the exception's class name too: the stream's `error` part names it, as the official server's does
    const name = error instanceof Error && code === "GRAPH_FAILED" ? error.name : undefined;
    return await attempt.finish("internal_error", counts(), runError(code, errorText(error).slice(0, 2_000), name));
  } finally {
    deps.liveMessages.finish(run.run_id);
    if (deadline !== undefined) clearTimeout(deadline);
    deps.drainSignal?.removeEventListener("abort", onDrain);
  }
}

/**
 * The resumes the run starts with: those given to the waiting run it resumes (its decisions'
 * and values, stored there as they came) and those given with the run itself (a Command's
 * update / goto), oldest first; none are used up until the run ends.
 */
async function openResumes(deps: ExecutorDeps, run: RunRecord): Promise<ResumeRecord[]> {
  const own = await deps.resumes.open(run.run_id);
  return run.resumes_run === null ? own : [...(await deps.resumes.open(run.resumes_run)), ...own];
}

/**
 * Ends the run at an interrupt (CONTRACT section 3): success with stop reason `interrupt`, its
 * thread waiting on it, with `approval.requested` (when an interrupt is in LangChain's HITL shape,
 * whichever graph raised it) and `run.interrupted` committed with the status.
 */
async function endAtInterrupt(attempt: Attempt, counts: RunCounts, interrupts: RunInterrupt[], checkpointId: string | null, state: StateSnapshot): Promise<RunRecord> {
  const { deps, run, epoch } = attempt;
  const requests = interrupts.flatMap((item) => (isHitlRequest(item.value) ? item.value.actionRequests : []));
  const events: GraphRunEvent[] = [...(requests.length > 0 ? [{ type: "approval.requested" as const, requests }] : []), { type: "run.interrupted", interrupts }];
  let record: RunRecord | null = null;
  const ended = async (tx: Queryable): Promise<boolean> => {
    record = await deps.runs.endAtInterrupt(run.run_id, epoch, counts, { tx, interrupts, checkpointId });
    return record !== null;
  };
  if (await appendWithPending(attempt.takeForEnd, (pending) => deps.events.appendWith(run.run_id, [...pending, ...events], ended))) {
    for (const data of events) deps.live(run.run_id, data);
    // the run as the committed statement left it: no read after the write
    if (record !== null) {
      deps.ended?.({ run: record, state });
      return record;
    }
  }
  return await deps.runs.get(run.run_id);
}

/** Ends a run whose graph ended: its stop reason, answer and error as the graph's hooks read them from its values (default: completed). */
async function finishFromState(attempt: Attempt, hooks: GraphRunHooks, state: StateSnapshot, counts: () => RunCounts): Promise<RunRecord> {
  const outcome = hooks.outcome?.(state.values) ?? { stopReason: "completed" as const, answer: null, error: null };
  return attempt.finish(outcome.stopReason, counts(), outcome.stopReason === "completed" ? null : outcome.error, outcome.answer, state);
}

/**
 * A `tools` stream chunk as plain JSON: a LangChain message (a tool's `ToolMessage` output) as its
 * dict (`{type, content, tool_call_id, ...}`), an error as its text, as the official server sends them.
 */
/** `duration_ms` for a tool's end (`on_tool_end` / `on_tool_error`), from its start noted in `started`; nothing for other events. */
function toolDuration(started: Map<string, number>, ns: string[], payload: unknown): { duration_ms?: number } {
  const chunk = (payload ?? {}) as { event?: unknown; toolCallId?: unknown; name?: unknown };
  const key = typeof chunk.toolCallId === "string" ? chunk.toolCallId : `${ns.join("|")}:${String(chunk.name)}`;
  if (chunk.event === "on_tool_start") started.set(key, Date.now());
  if (chunk.event !== "on_tool_end" && chunk.event !== "on_tool_error") return {};
  const at = started.get(key);
  started.delete(key);
  return at === undefined ? {} : { duration_ms: Date.now() - at };
}

function toolEventData(payload: unknown): unknown {
  const chunk = payload as { error?: unknown } | null;
  const withError = chunk !== null && typeof chunk === "object" && "error" in chunk ? { ...chunk, error: errorText(chunk.error) } : payload;
  return plainJson(withError);
}

function isRecursionError(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "GraphRecursionError" || (error as { lc_error_code?: unknown } | null)?.lc_error_code === "GRAPH_RECURSION_LIMIT";
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") return (error as { message: string }).message;
  return String(error);
}
