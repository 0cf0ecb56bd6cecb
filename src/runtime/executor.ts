import { Command } from "@langchain/langgraph";
import { fenceConfigurable } from "../checkpoint/fence-config.js";
import { DATABASE_FAULT_DEFAULTS } from "../constants.js";
import { databaseFaultOf } from "../db/database-faults.js";
import { DevmindError, LeaseLostError } from "../errors.js";
import { Backoff } from "./backoff.js";
import type { ActionRequest } from "../graph/approvals.js";
import type { AgentGraph } from "../graph/build-agent-graph.js";
import type { AgentEvent } from "../graph/events.js";
import type { AgentRunContext } from "../graph/run-context.js";
import { viewRun } from "../graph/run-view.js";
import type { StopReason } from "../graph/state.js";
import type { DecisionRecord, DecisionStore } from "./decision-store.js";
import type { EventStore, NewRunEvent } from "./event-store.js";
import type { Fence } from "./fence.js";
import type { Queryable } from "../db/types.js";
import { agentEntry, reachedBreakpoint, stoppedAtBreakpoint } from "./agent-start.js";
import { checkpointIdOf } from "./thread-state.js";
import { RunLedger } from "./run-ledger.js";
import type { ClaimedRun, RunCounts, RunRecord } from "./run-record.js";
import type { RunStore } from "./run-store.js";
import { finalEvent, statusForStopReason } from "./status.js";
import type { ToolLedger } from "./tool-ledger.js";
import type { GraphRegistry } from "../graphs/graph-registry.js";
import { executeGraphAttempt, type Attempt } from "./graph-attempt.js";
import { graphChunks } from "./graph-stream-events.js";
import type { CompiledGraphLike } from "../graphs/graph-kinds.js";
import type { RunnableConfig } from "@langchain/core/runnables";
import { interruptsOf } from "./graph-state.js";
import type { ResumeStore } from "./resume-store.js";
import type { RunEventData } from "./run-events.js";

/** What executing a run needs; built once per runtime. */
export interface ExecutorDeps {
  runs: RunStore;
  events: EventStore;
  decisions: DecisionStore;
  ledger: ToolLedger;
  resumes: ResumeStore;
  /** The graphs this runtime runs; the built-in agent's runs take the agent's path. */
  graphs: GraphRegistry;
  leaseMs: number;
  /** A run's deadline when its limits set none (DEVMIND_RUN_TIMEOUT_MS). */
  runTimeoutMs: number;
  /** How often a running run checks for a cancel request. */
  cancelPollMs: number;
  recursionLimit: number;
  /** Live listeners of every event (model.delta included), in this process. */
  live: (runId: string, event: RunEventData) => void;
  /** Aborted when this process drains: runs stop at the next step boundary and are released. */
  drainSignal?: AbortSignal;
}

type GraphState = Awaited<ReturnType<AgentGraph["getState"]>>;

function pendingRequests(state: GraphState): ActionRequest[] {
  return state.tasks.flatMap((task) => task.interrupts.flatMap((item) => ((item.value as { actionRequests?: ActionRequest[] } | undefined)?.actionRequests ?? [])));
}

function resumeDecision(record: DecisionRecord): Record<string, unknown> {
  if (record.decision === "approve") return { type: "approve", tool_call_id: record.tool_call_id };
  if (record.decision === "edit") return { type: "edit", tool_call_id: record.tool_call_id, editedAction: { name: record.tool, args: record.args ?? {} } };
  return { type: "reject", tool_call_id: record.tool_call_id, ...(record.reason === null ? {} : { message: record.reason }) };
}

function countsOf(state: GraphState, activeMsDelta: number): RunCounts {
  const values = state.values as {
    messages?: never[];
    run_start?: number;
    stop_reason?: string | null;
    model_rounds?: number;
    tool_calls?: number;
    usage?: { input_tokens: number; output_tokens: number };
  };
  // a finished run's counts were written by the graph's finish node; a paused one is counted here
  if (values.stop_reason) {
    return { modelRounds: values.model_rounds ?? 0, toolCalls: values.tool_calls ?? 0, usage: values.usage ?? { input_tokens: 0, output_tokens: 0 }, activeMsDelta };
  }
  const view = viewRun(values.messages ?? [], values.run_start ?? 0);
  return { modelRounds: view.modelRounds, toolCalls: view.toolCalls, usage: view.usage, activeMsDelta };
}

/** The graph events a run stores (model.delta and graph.stopped are live only). */
function storedEvent(event: AgentEvent): NewRunEvent | null {
  if (event.type === "model.delta" || event.type === "graph.stopped") return null;
  return event;
}

/**
 * Runs a claimed run in this process until it ends, pauses for approval, loses its lease, or the
 * process drains. Starts the graph with the run's input, resumes an interrupted one with the
 * stored decisions, or continues one whose process died or drained (from its last checkpoint;
 * `run.resumed` says `recovery` for a worker, `manual` for `runs.execute`). Every write
 * — checkpoints, ledger, events, status — carries the lease epoch, so a worker whose lease was
 * taken over writes nothing more. Returns the run record as stored afterwards. `fresh`: nothing
 * of this run has executed before (its first claim, executed for the first time), so a user
 * graph's run starts without reading the thread's state to find out.
 */
export async function executeClaimed(deps: ExecutorDeps, claimed: ClaimedRun, owner: string, trigger: "worker" | "manual" = "worker", fresh = false): Promise<RunRecord> {
  const { run, epoch } = claimed;
  const fence: Fence = { runId: run.run_id, epoch };
  const started = Date.now();
  const cancel = new AbortController();
  const lost = new AbortController();
  // a database fault anywhere stops this attempt at once; the worker continues the run later
  const fault = new AbortController();
  let chain: Promise<unknown> = Promise.resolve();
  let lostLease = false;
  const appendOnce = async (events: NewRunEvent[]): Promise<void> => {
    // events are not dropped for a database that is away: they are retried in order (bounded),
    // so the re-executed step's events follow them and none of an earlier step is lost
    const backoff = new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: DATABASE_FAULT_DEFAULTS.backoffMaxMs });
    const giveUpAt = Date.now() + DATABASE_FAULT_DEFAULTS.eventRetryMaxMs;
    for (;;) {
      if (lostLease) return;
      try {
        await deps.events.append(run.run_id, events, fence);
        return;
      } catch (error) {
        if (databaseFaultOf(error) === null || Date.now() >= giveUpAt) throw error;
        if (!fault.signal.aborted) fault.abort(error);
        if (!(await backoff.wait(deps.drainSignal))) throw error;
      }
    }
  };
  // events wait in `buffered` while the previous append is in flight, then go in one statement:
  // a step's events (a node finishing, the next one starting, custom writes) cost one commit
  let buffered: NewRunEvent[] = [];
  let scheduled = false;
  const append = (events: NewRunEvent[]): Promise<unknown> => {
    for (const event of events) if (event.type.startsWith("run.")) deps.live(run.run_id, event);
    buffered.push(...events);
    if (scheduled) return chain;
    scheduled = true;
    chain = chain
      .then(() => {
        const taken = buffered;
        buffered = [];
        scheduled = false;
        return appendOnce(taken);
      })
      .catch((error: unknown) => {
        if (error instanceof LeaseLostError) {
          lostLease = true;
          lost.abort(error);
          return;
        }
        if (databaseFaultOf(error) !== null && !fault.signal.aborted) fault.abort(error);
        throw error;
      });
    return chain;
  };
  const sink = (event: AgentEvent): void => {
    // a lost lease stops the stored events: another worker writes this run now
    deps.live(run.run_id, event);
    const stored = storedEvent(event);
    if (stored !== null) void append([stored]).catch(() => undefined);
  };
  const heartbeat = setInterval(() => {
    deps.runs.heartbeat(run.run_id, epoch, deps.leaseMs).then(
      (held) => {
        if (!held) {
          lostLease = true;
          lost.abort(new LeaseLostError(run.run_id, epoch));
        }
      },
      () => undefined,
    );
  }, Math.max(50, Math.floor(deps.leaseMs / 3)));
  const cancelWatch = setInterval(() => {
    deps.runs.isCancelRequested(run.run_id).then(
      (requested) => requested && cancel.abort(),
      () => undefined,
    );
  }, deps.cancelPollMs);
  heartbeat.unref?.();
  cancelWatch.unref?.();

  if (!deps.graphs.isBuiltinAgent(run.graph_id)) {
    const attempt: Attempt = {
      deps,
      run,
      epoch,
      fence,
      owner,
      trigger,
      fresh,
      started,
      signals: { cancel: cancel.signal, lost: lost.signal, fault: fault.signal },
      append,
      settled: () => chain,
      lostLease: () => lostLease,
      finish: (stopReason, counts, error) => finishRun(deps, run, epoch, stopReason, null, counts, error),
    };
    try {
      return await executeGraphAttempt(attempt);
    } finally {
      clearInterval(heartbeat);
      clearInterval(cancelWatch);
    }
  }

  try {
    const graph = (await deps.graphs.compiled(run.graph_id)) as unknown as AgentGraph;
    const thread = { configurable: { thread_id: run.thread_id } };
    const before = await graph.getState(thread);
    const ours = (before.values as { run_id?: unknown }).run_id === run.run_id;
    // time travel: a run's first attempt starts from the checkpoint it names; later ones from its own
    const fork = !ours && run.checkpoint_id !== null ? { checkpoint_id: run.checkpoint_id } : {};
    let input: unknown = undefined;
    if (!ours) {
      const from = run.checkpoint_id === null ? before : await graph.getState({ configurable: { ...thread.configurable, ...fork } });
      const entry = agentEntry(run, from, deps.runTimeoutMs);
      await append([{ type: "run.started", attempt: run.attempt, worker: owner }]);
      if (entry.kind === "nothing") {
        // no input and nothing pending where it starts (a finished thread): done at once
        await chain;
        if (lostLease) return await deps.runs.get(run.run_id);
        return await finishRun(deps, run, epoch, "completed", null, { modelRounds: 0, toolCalls: 0, usage: { input_tokens: 0, output_tokens: 0 }, activeMsDelta: Date.now() - started }, null);
      }
      input = entry.input;
    } else {
      const requests = pendingRequests(before);
      if (requests.length > 0) {
        const decided = new Map((await deps.decisions.list(run.run_id)).map((d) => [d.tool_call_id, d]));
        if (!requests.every((request) => decided.has(request.tool_call_id))) {
          await deps.runs.interrupt(run.run_id, epoch, countsOf(before, Date.now() - started), { interrupts: interruptsOf(before), checkpointId: checkpointIdOf(before) });
          return await deps.runs.get(run.run_id);
        }
        input = new Command({ resume: { decisions: requests.map((request) => resumeDecision(decided.get(request.tool_call_id) as DecisionRecord)) } });
        await append([{ type: "run.resumed", reason: "approval", attempt: run.attempt, worker: owner }]);
      } else if (reachedBreakpoint(run, before)) {
        // its last attempt stopped at a breakpoint and died before the run was marked finished
        input = undefined;
      } else if (before.tasks.length > 0) {
        // not `before.next`: it leaves out tasks whose writes are already stored, e.g. a model step
        // that finished while the checkpoint after it was still being saved when the process died;
        // the graph is unfinished all the same, and invoke(null) applies those writes and goes on
        input = null;
        // a worker continues what a dead or drained process left; `runs.execute` is someone asking
        await append([{ type: "run.resumed", reason: trigger === "manual" ? "manual" : "recovery", attempt: run.attempt, worker: owner }]);
      }
    }
    if (input !== undefined) {
      const context: AgentRunContext = {
        // a lost lease also ends the in-flight model or tool call: this worker may not finish it
        cancelSignal: AbortSignal.any([cancel.signal, lost.signal]),
        events: sink,
        runId: run.run_id,
        limits: run.limits,
        ledger: new RunLedger(deps.ledger, deps.decisions, fence),
        ...(deps.drainSignal === undefined ? {} : { drainSignal: deps.drainSignal }),
        ...(run.limits.maxStreamEvents === undefined ? {} : { streamEvents: true }),
      };
      const options = {
        configurable: { thread_id: run.thread_id, ...fork, ...fenceConfigurable(fence) },
        // the run's ids (and metadata) in every checkpoint's metadata: history filters find them,
        // and a rollback removes the checkpoints that name the run
        metadata: { ...run.metadata, run_id: run.run_id, graph_id: run.graph_id, assistant_id: run.assistant_id },
        ...(run.interrupt_before === null ? {} : { interruptBefore: run.interrupt_before }),
        ...(run.interrupt_after === null ? {} : { interruptAfter: run.interrupt_after }),
        context,
        signal: AbortSignal.any([lost.signal, fault.signal]),
        recursionLimit: deps.recursionLimit,
      };
      if (run.limits.maxStreamEvents === undefined) await graph.invoke(input as never, options as never);
      else {
        // a run created with the `events` stream mode records LangChain's stream events (graph-stream-events.ts)
        const emit = (event: RunEventData): void => {
          deps.live(run.run_id, event);
          void append([event as NewRunEvent]).catch(() => undefined);
        };
        const chunks = await graphChunks(graph as unknown as CompiledGraphLike, input, options as RunnableConfig, run.run_id, { limit: run.limits.maxStreamEvents, emit });
        for await (const _chunk of chunks) continue;
      }
    }
    await chain;
    if (lostLease) return await deps.runs.get(run.run_id);
    const after = await graph.getState(thread);
    const counts = countsOf(after, Date.now() - started);
    if (pendingRequests(after).length > 0) {
      // status and event commit together, and only while the lease is held
      const interrupts = interruptsOf(after);
      const paused = (tx: Queryable) => deps.runs.interrupt(run.run_id, epoch, counts, { tx, interrupts, checkpointId: checkpointIdOf(after) });
      if (await deps.events.appendWith(run.run_id, [{ type: "run.interrupted" }], paused)) {
        deps.live(run.run_id, { type: "run.interrupted" });
      }
      return await deps.runs.get(run.run_id);
    }
    // a static breakpoint ends the run; a later run without input continues from there
    if (stoppedAtBreakpoint(run, after)) return await finishRun(deps, run, epoch, "completed", null, counts, null);
    const values = after.values as { stop_reason?: StopReason | null; answer?: string | null; error?: { code: string; message: string } | null };
    const stopReason: StopReason = values.stop_reason ?? "internal_error";
    const error = values.error ?? (values.stop_reason ? null : { code: "INTERNAL_ERROR", message: "the graph ended without a stop reason" });
    return await finishRun(deps, run, epoch, stopReason, values.answer ?? null, counts, stopReason === "completed" ? null : error);
  } catch (error) {
    await chain.catch(() => undefined);
    if (lostLease || error instanceof LeaseLostError || lost.signal.aborted) return await deps.runs.get(run.run_id);
    // the database failed this attempt, not the run: nothing is finished here (the database may
    // be away); the caller waits for it and continues the run under the same lease
    if (databaseFaultOf(error) !== null) throw error;
    if (fault.signal.aborted) throw fault.signal.reason;
    if (error instanceof DevmindError && error.code === "RUN_DRAINED") {
      await deps.runs.release(run.run_id, epoch, { modelRounds: run.model_rounds, toolCalls: run.tool_calls, usage: run.usage, activeMsDelta: Date.now() - started });
      return await deps.runs.get(run.run_id);
    }
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof DevmindError ? error.code : "INTERNAL_ERROR";
    const counts = { modelRounds: run.model_rounds, toolCalls: run.tool_calls, usage: run.usage, activeMsDelta: Date.now() - started };
    return await finishRun(deps, run, epoch, "internal_error", null, counts, { code, message: message.slice(0, 2_000) });
  } finally {
    clearInterval(heartbeat);
    clearInterval(cancelWatch);
  }
}

/** Ends the run: its final status and event commit together, only while the lease is held. */
export async function finishRun(
  deps: ExecutorDeps,
  run: RunRecord,
  epoch: number,
  stopReason: StopReason,
  answer: string | null,
  counts: RunCounts,
  error: { code: string; message: string } | null,
): Promise<RunRecord> {
  const status = statusForStopReason(stopReason);
  const final = finalEvent(status, stopReason, answer, error);
  // the final status and the final event commit together: a process dying in between must not
  // leave a finished run without its run.succeeded / run.failed / … event
  let ended: RunRecord | null = null;
  const held = await deps.events.appendWith(run.run_id, [final], async (tx) => {
    ended = await deps.runs.finishRecord(run.run_id, epoch, { status, stopReason, answer, counts, error }, { tx });
    return ended !== null;
  });
  if (held) deps.live(run.run_id, final);
  // the run as the committed finish left it; read back only when another holder wrote it
  return held && ended !== null ? ended : deps.runs.get(run.run_id);
}
