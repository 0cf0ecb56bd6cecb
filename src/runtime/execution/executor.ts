import { DATABASE_FAULT_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import { LeaseLostError } from "../../errors.js";
import type { GraphRegistry } from "../../graphs/graph-registry.js";
import type { RunError, StopReason } from "../../vocabulary/stop-reasons.js";
import { Backoff } from "./backoff.js";
import type { DecisionStore } from "../interrupts/decision-store.js";
import type { EventStore, NewRunEvent } from "../events/event-store.js";
import { RunEventBatcher } from "../events/event-batcher.js";
import { CheckpointMemo } from "../../checkpoint/checkpoint-memo.js";
import type { RunCancelWatch } from "../queue/run-cancel-watch.js";
import type { LiveMessageSink } from "../events/live-messages.js";
import type { Fence } from "../queue/fence.js";
import { executeGraphAttempt, type Attempt, type AttemptTrigger } from "./graph-attempt.js";
import type { ResumeStore } from "../interrupts/resume-store.js";
import type { RunEventData } from "../events/run-events.js";
import type { ClaimedRun, RunCounts, RunRecord } from "../queue/run-record.js";
import type { EndedRun } from "../queue/run-end-wait.js";
import type { StateSnapshot } from "@langchain/langgraph";
import type { RunStore } from "../queue/run-store.js";
import { finalEvent, statusForStopReason } from "../queue/status.js";
import type { ToolLedger } from "../ledger/tool-ledger.js";
import { appendWithPending, type PendingEvents } from "./run-end-events.js";
import { observeAttempt, type AttemptObserver, type RunObserver } from "./run-observer.js";

/** What executing a run needs; built once per runtime. */
export interface ExecutorDeps {
  runs: RunStore;
  events: EventStore;
  decisions: DecisionStore;
  ledger: ToolLedger;
  resumes: ResumeStore;
  /** The graphs this runtime runs, each with its run hooks. */
  graphs: GraphRegistry;
  leaseMs: number;
  /** A run's deadline when its limits set none (DEVMIND_RUN_TIMEOUT_MS). */
  runTimeoutMs: number;
  /** How often a running run checks for a cancel request when `cancels` cannot tell it (no LISTEN). */
  cancelPollMs: number;
  /** Cancel requests announced to this process (one LISTEN); without it every run polls. */
  cancels?: RunCancelWatch | undefined;
  /** Live listeners of every event (model.delta included), in this process. */
  live: (runId: string, event: RunEventData) => void;
  /** Told of every run this process ended (committed), with the graph's final state when read: waiters here answer without a read. */
  ended?: ((ended: EndedRun) => void) | undefined;
  /** Where the message chunks chat models stream in a run's graph go (live only, to every process). */
  liveMessages: LiveMessageSink;
  /** Aborted when this process drains: runs stop at the next step boundary and are released. */
  drainSignal?: AbortSignal;
  /**
   * Told of a database fault an attempt meets while it keeps going (its tool calls' outcomes are
   * written through the fault, the attempt stops only once they are): the worker's health learns
   * of it at once (logs, /health, no claims while storage fails, no re-queueing of lapsed leases).
   */
  onDatabaseFault?: ((error: unknown) => void) | undefined;
  /** Watches each attempt (metrics, traces): told every event and the end; it takes no part in the run. */
  observer?: RunObserver | undefined;
}

/**
 * Runs a claimed run of any graph in this process until it ends, pauses at an interrupt, loses
 * its lease, or the process drains: the one executor. It holds the lease (heartbeat), watches for
 * a cancel request, stores events in order (batched, retried through a database fault), and hands
 * the run to `executeGraphAttempt`. Every write — checkpoints, ledger, events, status — carries
 * the lease epoch, so a worker whose lease was taken over writes nothing more. Returns the run
 * record as stored afterwards. `fresh`: nothing of this run has executed before (its first claim,
 * executed for the first time), so the run starts without reading the thread's state to find out.
 */
export async function executeClaimed(given: ExecutorDeps, claimed: ClaimedRun, owner: string, trigger: AttemptTrigger = "worker", fresh = false): Promise<RunRecord> {
  const { run, epoch } = claimed;
  // an observer sees every event this attempt emits (the same calls that reach live listeners)
  let observed: AttemptObserver | undefined;
  const deps: ExecutorDeps = given.observer === undefined ? given : { ...given, live: (runId, event) => (given.live(runId, event), observed?.event(event)) };
  const fence: Fence = { runId: run.run_id, epoch };
  // the thread's newest checkpoint as the claim read it, for this attempt only (a later one reads afresh)
  const memo = new CheckpointMemo(run.thread_id);
  if (claimed.threadCheckpoint !== undefined) memo.seed(claimed.threadCheckpoint);
  claimed.threadCheckpoint = undefined;
  const started = Date.now();
  const cancel = new AbortController();
  const lost = new AbortController();
  // a database fault anywhere stops this attempt at once; the worker continues the run later
  const fault = new AbortController();
  let lostLease = false;
  const appendOnce = async (events: NewRunEvent[], key: string): Promise<void> => {
    // events are not dropped for a database that is away: they are retried in order (bounded),
    // so the re-executed step's events follow them and none of an earlier step is lost
    const backoff = new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: DATABASE_FAULT_DEFAULTS.backoffMaxMs });
    const giveUpAt = Date.now() + DATABASE_FAULT_DEFAULTS.eventRetryMaxMs;
    for (;;) {
      if (lostLease) return;
      try {
        // the batch's key: a try that committed but whose answer was lost is not stored twice
        await deps.events.append(run.run_id, events, fence, { key });
        return;
      } catch (error) {
        if (databaseFaultOf(error) === null || Date.now() >= giveUpAt) throw error;
        if (!fault.signal.aborted) fault.abort(error);
        if (!(await backoff.wait(deps.drainSignal))) throw error;
      }
    }
  };
  // events wait while the previous batch is stored, then go together (a step's events cost one
  // commit), in the transaction of the run's next checkpoint write when one begins at once
  const batcher = new RunEventBatcher({
    alone: appendOnce,
    inTransaction: async (tx, events, key) => void (await deps.events.append(run.run_id, events, fence, { tx, key })),
    failed: (error) => {
      if (error instanceof LeaseLostError) {
        lostLease = true;
        lost.abort(error);
        return;
      }
      if (databaseFaultOf(error) !== null && !fault.signal.aborted) fault.abort(error);
      throw error;
    },
  });
  const append = (events: NewRunEvent[], options?: { hold?: boolean }): Promise<unknown> => {
    for (const event of events) if (event.type.startsWith("run.")) deps.live(run.run_id, event);
    return batcher.append(events, options);
  };
  const heartbeat = setInterval(() => {
    deps.runs.renewLease(run.run_id, epoch, deps.leaseMs).then(
      ({ held, cancelRequested }) => {
        if (!held) {
          lostLease = true;
          lost.abort(new LeaseLostError(run.run_id, epoch));
        } else if (cancelRequested) cancel.abort();
      },
      () => undefined,
    );
  }, Math.max(50, Math.floor(deps.leaseMs / 3)));
  // a cancel request reaches the run at once by NOTIFY (one LISTEN per process); without LISTEN
  // the run asks for it every cancelPollMs
  let cancelWatch: NodeJS.Timeout | undefined;
  let unwatchCancel: (() => void) | null = null;
  const pollCancel = (): void => {
    cancelWatch = setInterval(() => {
      deps.runs.isCancelRequested(run.run_id).then(
        (requested) => requested && cancel.abort(),
        () => undefined,
      );
    }, deps.cancelPollMs);
    cancelWatch.unref?.();
  };
  if (deps.cancels === undefined) pollCancel();
  else {
    unwatchCancel = await deps.cancels.watch(run.run_id, () => cancel.abort());
    if (unwatchCancel === null) pollCancel();
  }
  heartbeat.unref?.();

  // from here on the attempt always ends (observed.end in the finally below)
  observed = observeAttempt(given.observer, run);
  const attempt: Attempt = {
    deps,
    run,
    epoch,
    fence,
    owner,
    trigger,
    fresh,
    noOpenResumes: claimed.noOpenResumes === true,
    started,
    callbacks: observed?.callbacks,
    observeCall: observed?.call,
    signals: { cancel: cancel.signal, lost: lost.signal, fault: fault.signal },
    append,
    rider: batcher,
    memo,
    settled: () => batcher.settled(),
    takeForEnd: () => batcher.takeForEnd(),
    lostLease: () => lostLease,
    launched: (claimed.launched ??= new Set()),
    finish: (stopReason, counts, error, answer = null, state) => finishRun(deps, run, epoch, stopReason, answer, counts, error, state, () => batcher.takeForEnd()),
  };
  let outcome: { run: RunRecord | null; error: unknown } = { run: null, error: undefined };
  try {
    outcome.run = await executeGraphAttempt(attempt);
    return outcome.run;
  } catch (error) {
    outcome = { run: null, error };
    throw error;
  } finally {
    observed?.end(outcome);
    clearInterval(heartbeat);
    clearInterval(cancelWatch);
    unwatchCancel?.();
  }
}

/**
 * Ends the run: its final status and event commit together, only while the lease is held, with
 * the run's events still waiting to be stored (`pending`) ahead of the final one: one commit.
 */
export async function finishRun(
  deps: ExecutorDeps,
  run: RunRecord,
  epoch: number,
  stopReason: StopReason,
  answer: string | null,
  counts: RunCounts,
  error: RunError | null,
  state?: StateSnapshot,
  pending?: PendingEvents,
): Promise<RunRecord> {
  const status = statusForStopReason(stopReason);
  const final = finalEvent(status, stopReason, answer, error);
  // the final status and the final event commit together: a process dying in between must not
  // leave a finished run without its run.succeeded / run.failed / … event
  let ended: RunRecord | null = null;
  const held = await appendWithPending(pending, (events) =>
    deps.events.appendWith(run.run_id, [...events, final], async (tx) => {
      ended = await deps.runs.finishRecord(run.run_id, epoch, { status, stopReason, answer, counts, error }, { tx });
      return ended !== null;
    }),
  );
  if (held) deps.live(run.run_id, final);
  if (held && ended !== null) deps.ended?.({ run: ended, state });
  // the run as the committed finish left it; read back only when another holder wrote it
  return held && ended !== null ? ended : deps.runs.get(run.run_id);
}

