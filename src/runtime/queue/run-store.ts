import { randomUUID } from "node:crypto";
import { accessJson, type AccessFilter } from "../../vocabulary/access-filter.js";
import { CONFIG_BOUNDS, GRAPHS_DEFAULTS, RUN_STORE_LIMITS, RUN_THREAD_LOCK_PREFIX } from "../../constants.js";
import { withCommit, type Database, type Queryable, type Row, type Statement } from "../../db/types.js";
import { GraphNotFoundError, RunConflictError, RunNotFoundError, type DevmindErrorCode } from "../../errors.js";
import type { RunError, StopReason } from "../../vocabulary/stop-reasons.js";
import {
  checkRunCounts,
  checkRunId,
  checkRunLimits,
  checkThreadId,
  isRunStatus,
  serializeJson,
  isStopReason,
  runFromRow,
  runInputError,
  type ClaimedRun,
  type RunCounts,
  type RunGraphConfig,
  type RunInput,
  type RunInterrupt,
  type RunLimits,
  type RunRecord,
  type RunStatus,
} from "./run-record.js";
import { serializeRunInput } from "./run-input.js";
import type { GraphRunHooks } from "../../graphs/run-hooks.js";
import { createRedactor, type Redactor } from "../../secret-redaction.js";
import { checkRunGraphConfig } from "./run-config.js";
import { runSql, type RunSql } from "./run-sql.js";
import { statusForStopReason, type TerminalStatus } from "./status.js";
import type { NewRunEvent } from "../events/event-store.js";
import { checkpointSql } from "../../checkpoint/sql.js";
import type { TupleRow } from "../../checkpoint/tuple-rows.js";

/**
 * The final events `requeueExpired` writes in its statement for the runs it ends (no worker is
 * left to write them): typed here as stored events, passed to the SQL as JSON. The statement
 * replaces run.failed's `message` with the run's error message.
 */
export const REAPED_RUN_EVENTS = {
  cancelled: { type: "run.cancelled" },
  failed: { type: "run.failed", stop_reason: "max_attempts", code: "MAX_ATTEMPTS" satisfies DevmindErrorCode, message: null },
} as const satisfies Record<string, NewRunEvent>;

/** What `create` needs. */
export interface CreateRunOptions {
  /**
   * The run's id (a new uuid when absent): chosen once by a caller that retries the creation
   * through a database fault, so the retry can find the run a first try whose answer was lost made.
   */
  runId?: string | undefined;
  /** The conversation; a new uuid when absent. */
  threadId?: string | undefined;
  /**
   * The graph the run executes (default `agent`). The agent's input is `{ messages }` or null (no
   * input: the run continues the thread from its checkpoint, or from `checkpointId`).
   */
  graphId?: string | undefined;
  /** The assistant the run was started as (default: the graph id). */
  assistantId?: string | undefined;
  input: RunInput | unknown;
  /** The run's config for its graph (checked with `checkRunGraphConfig`). */
  config?: RunGraphConfig | undefined;
  /** The run's context for its graph (any JSON value). */
  context?: unknown;
  limits?: RunLimits | undefined;
  /** The run's own metadata (an object), stored and filterable (`list({ metadata })`). */
  metadata?: Record<string, unknown> | undefined;
  /** Seconds before any worker may claim the run (LangGraph's `after_seconds`); 0 or absent: at once. */
  afterSeconds?: number | undefined;
  /** LangGraph's static breakpoints: node names (or `*`) the graph stops before / after. */
  interruptBefore?: string[] | undefined;
  interruptAfter?: string[] | undefined;
  /** A checkpoint of the thread the run starts from (time travel: the thread forks there). */
  checkpointId?: string | undefined;
  /** The LangGraph stream modes the run is created with (`stream_mode`), kept for streams joined without modes. */
  streamMode?: string[] | undefined;
  /** "reject" (default): a thread with a pending or running run refuses another. "enqueue": queue behind it. */
  multitask?: "reject" | "enqueue" | undefined;
  /**
   * The waiting run this run resumes (CONTRACT section 3: a resume is a new run): created only
   * while the thread still waits on that run (else RunConflictError), and it continues that
   * run's tool ledger. Whatever the run, creating it ends the thread's wait on its waiting run.
   */
  resumesRun?: string | undefined;
  /**
   * Claim the run for this lease in the creating transaction (status running, epoch 1, attempt
   * 1), so no worker anywhere can take it before the creator executes it. When the thread has a
   * run ahead of it (multitask "enqueue"), the run is created pending and not claimed.
   */
  claimFor?: LeaseOptions | undefined;
}

/** Filters and cursor of `list`. */
export interface ListRunsOptions {
  status?: RunStatus | undefined;
  threadId?: string | undefined;
  /** 1..500, default 50. */
  limit?: number | undefined;
  /** Keyset cursor: the last run id of the previous page; returns runs older than it. */
  before?: string | undefined;
  /** Runs whose metadata contains this object (jsonb `@>`). */
  metadata?: Record<string, unknown> | undefined;
  /** true: only the run its thread waits on (ended at an interrupt, not yet resumed). */
  waiting?: boolean | undefined;
  /** Only runs of threads the caller may see (their metadata contains this AccessFilter), in the same statement. */
  threadAccess?: AccessFilter | undefined;
}

/** Who takes a lease and for how long. */
export interface LeaseOptions {
  /** A worker id, shown in the record and logs. */
  owner: string;
  /** Lease length; renew it with `heartbeat` well before it lapses. */
  leaseMs: number;
}

/** How a run ends (`finish`). */
export interface FinishRunOptions {
  status: TerminalStatus;
  /** Must map to `status` (CONTRACT section 3: completed -> success, deadline -> timeout, cancelled -> interrupted, the rest -> error). */
  stopReason: StopReason;
  answer: string | null;
  counts: RunCounts;
  error: RunError | null;
}

/**
 * A waiting run as `listInterrupted` reads it: the record plus what no longer waits — the
 * agent's tool calls already decided and the interrupts a stored resume already answers.
 */
export interface InterruptedRun extends RunRecord {
  decided_tool_calls: string[];
  answered_interrupts: string[];
}

/** What `requeueExpired` did, by run id. */
export interface RequeueResult {
  /** Back to pending; any worker may claim them. */
  requeued: string[];
  /** Ended as error / max_attempts. */
  failed: string[];
  /** A cancel had been requested: ended as interrupted (cancelled) instead of being run again. */
  cancelled: string[];
}

const UNIQUE_VIOLATION = "23505";

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/** What a write probe stores: about 2 kB, so a full disk refuses it as it refuses run writes. */
const PROBE_PAYLOAD = "p".repeat(2_000);

/**
 * The storage layer of runs: the run records and the queue workers claim from. Every method is
 * one SQL statement (`create` is one short transaction), with `$n` parameters only.
 *
 * Leases are fenced: `claimNext` / `claim` return an epoch, and `heartbeat`, `release`,
 * `endAtInterrupt` and `finish` change the run only while that epoch is current and the run is
 * running — they return false otherwise, and the caller must stop working on the run (another
 * worker owns it now, or it was re-queued). Expired leases are never taken over directly:
 * `requeueExpired` puts the run back in the queue (or ends it after too many attempts).
 *
 * @example
 *   const store = new RunStore(db);
 *   const run = await store.create({ input: { messages: [{ role: "user", content: "hi" }] } });
 *   const claimed = await store.claimNext({ owner: "worker-1", leaseMs: 30_000 });
 *   if (claimed) {
 *     const counts = { modelRounds: 1, toolCalls: 0, usage: { input_tokens: 10, output_tokens: 2 }, activeMsDelta: 120 };
 *     const held = await store.finish(claimed.run.run_id, claimed.epoch, { status: "success", stopReason: "completed", answer: "hello", counts, error: null });
 *     // held === false: the lease moved to another worker; this one wrote nothing
 *   }
 */
export class RunStore {
  private readonly sql: RunSql;
  /** The checkpoint saver's read of a thread's newest checkpoint, run in a worker's claim. */
  private readonly latestCheckpoint: Statement;

  /** `redactor`: applied to a finished run's answer and error message before they are stored. */
  /**
   * `hooksOf`: the run hooks of a graph (the registry's `hooks`), whose `checkInput` refuses a
   * run's input, config and context before anything is stored; without it any JSON input is taken.
   */
  constructor(
    private readonly db: Database,
    private readonly redactor: Redactor = createRedactor(),
    private readonly hooksOf: (graphId: string) => Pick<GraphRunHooks, "checkInput"> = () => ({}),
    /** The W3C traceparent of the request creating a run, stored with it (`src/operations/tracing`); none by default. */
    private readonly traceParent: () => string | undefined = () => undefined,
  ) {
    this.sql = runSql(db.schema);
    this.latestCheckpoint = checkpointSql(db.schema).getTupleLatest;
  }

  /**
   * Creates a pending run. In one transaction holding the thread's advisory lock, so concurrent
   * creates on one thread see each other: with multitask "reject" (default) a thread that already
   * has a pending or running run throws RunConflictError naming it; with "enqueue" the run queues
   * behind it. The thread's waiting run (ended at an interrupt) no longer waits once this run is
   * created; with `resumesRun` the run is created only while the thread still waits on that run. Bad input, limits or thread id throw RUN_INPUT_INVALID.
   * `withRun` writes what belongs with the new run (its `run.created` event) in the same
   * transaction: the run and those writes commit together or not at all. `options` may be a
   * function of the transaction that returns them (reads made in the same transaction).
   */
  async create(options: CreateRunOptions | ((tx: Queryable) => Promise<CreateRunOptions>), withRun?: (tx: Queryable, runId: string) => Promise<void>): Promise<RunRecord> {
    // a function resolves the options in the transaction itself (the runs API reads the run's
    // assistant there): the reads a run's creation needs and its writes are one transaction
    const created = await this.db.transaction(async (tx) => this.createWithin(tx, typeof options === "function" ? await options(tx) : options, withRun));
    if ("conflict" in created) {
      const { threadId, activeRunId, activeStatus } = created.conflict;
      if (created.conflict.notWaiting !== undefined) {
        throw new RunConflictError(`run ${created.conflict.notWaiting} is not what thread ${threadId} waits on (it was resumed or answered by a newer run): there is nothing to resume`, {
          threadId,
          runId: created.conflict.notWaiting,
        });
      }
      throw new RunConflictError(
        `thread ${threadId} already has an active run ${activeRunId} (${activeStatus}); wait for it, cancel it, ` +
          `or pass multitask "enqueue" to queue this run behind it`,
        { threadId, activeRunId, activeStatus },
      );
    }
    return created.run;
  }

  /**
   * `create` inside the caller's open transaction `tx` (the cron scheduler claims a due cron and
   * creates its run in one transaction). Validation errors are thrown before any SQL runs; a
   * thread whose active run refuses another (multitask "reject") is returned as `conflict`
   * instead of thrown, so the caller's transaction stays usable.
   */
  async createWithin(
    tx: Queryable,
    options: CreateRunOptions,
    withRun?: (tx: Queryable, runId: string) => Promise<void>,
  ): Promise<{ run: RunRecord } | { conflict: { threadId: string; activeRunId: string | undefined; activeStatus: string | undefined; notWaiting?: string } }> {
    const graphId = checkGraphId(options.graphId ?? GRAPHS_DEFAULTS.defaultGraphId, "graphId");
    const assistantId = checkGraphId(options.assistantId ?? graphId, "assistantId");
    // the graph's own check (the agent's: `{ messages }` or none), before anything is stored
    this.hooksOf(graphId).checkInput?.(options.input, { config: options.config, context: options.context });
    const input = serializeRunInput(options.input);
    const config = JSON.stringify(checkRunGraphConfig(options.config));
    const context = options.context === undefined || options.context === null ? null : serializeJson(options.context, "context");
    const limits = JSON.stringify(checkRunLimits(options.limits));
    const threadId = options.threadId === undefined ? randomUUID() : checkThreadId(options.threadId);
    const multitask = options.multitask ?? "reject";
    if (multitask !== "reject" && multitask !== "enqueue") {
      throw runInputError(`multitask must be "reject" or "enqueue", got ${JSON.stringify(multitask)}`, { field: "multitask" });
    }
    const runId = options.runId === undefined ? randomUUID() : checkRunId(options.runId);
    const lockKey = `${RUN_THREAD_LOCK_PREFIX}${this.db.schema}:${threadId}`;
    const lease = options.claimFor === undefined ? undefined : checkLease(options.claimFor);
    const extras = runExtras(options);
    const resumesRun = options.resumesRun === undefined ? null : checkRunId(options.resumesRun);
    // sent together (one round trip on PostgreSQL): the server runs the insert once the lock is
    // held, with a snapshot taken then, so it sees every run committed before the lock was granted
    const locked = tx.query(this.sql.lockThread, [lockKey]);
    const creating = tx.query(this.sql.create, [runId, threadId, input, limits, multitask === "enqueue", graphId, assistantId, config, context, ...extras, resumesRun, this.traceParent() ?? null]);
    const [, result] = await Promise.all([locked, creating]);
    let row = result.rows[0];
    if (row !== undefined && row["run_id"] !== null) {
      await withRun?.(tx, runId);
      if (lease !== undefined) {
        const taken = await tx.query(this.sql.claim, [runId, lease.owner, lease.leaseMs, null]);
        const claimedRow = taken.rows[0];
        if (claimedRow !== undefined && claimedRow["run_id"] !== null) row = claimedRow;
      }
    }
    if (row === undefined || row["run_id"] === null) {
      const notWaiting = resumesRun !== null && row?.["resumable"] !== true ? { notWaiting: resumesRun } : {};
      return { conflict: { threadId, activeRunId: row?.["active_run_id"] as string | undefined, activeStatus: row?.["active_status"] as string | undefined, ...notWaiting } };
    }
    return { run: runFromRow(row) };
  }

  /**
   * `create` with `claimFor`: the run and, when it could be claimed in the same transaction, its
   * lease (`claimed`); null `claimed` means it was queued behind another run of its thread.
   */
  async createClaimed(
    options: CreateRunOptions | ((tx: Queryable) => Promise<CreateRunOptions>),
    claimFor: LeaseOptions,
    withRun?: (tx: Queryable, runId: string) => Promise<void>,
  ): Promise<{ run: RunRecord; claimed: ClaimedRun | null }> {
    const withLease = typeof options === "function" ? async (tx: Queryable) => ({ ...(await options(tx)), claimFor }) : { ...options, claimFor };
    const run = await this.create(withLease, withRun);
    if (run.status !== "running" || run.lease?.owner !== claimFor.owner) return { run, claimed: null };
    return { run, claimed: { run, epoch: run.lease.epoch } };
  }

  /**
   * Deletes a run that is not running and that its thread does not wait on (a pending one
   * included), with its events, decisions, ledger rows and resumes. RunNotFoundError for none;
   * RunConflictError while running or waited on.
   */
  async delete(runId: string): Promise<void> {
    const row = (await this.db.query(this.sql.delete, [checkRunId(runId)])).rows[0];
    if (row?.["deleted"] === true) return;
    if (row?.["status"] === null || row?.["status"] === undefined) throw new RunNotFoundError(runId);
    if (row["status"] !== "running") throw new RunConflictError(`run ${runId} is what its thread waits on (or a run resuming it is active); resume or cancel that first`, { runId, status: row["status"] });
    throw new RunConflictError(`run ${runId} is ${String(row["status"])}; cancel it before deleting it`, { runId, status: row["status"] });
  }

  /** The run with this id; RunNotFoundError for an unknown id or a string that is not a uuid. */
  async get(runId: string): Promise<RunRecord> {
    const result = await this.db.query(this.sql.get, [checkRunId(runId)]);
    const row = result.rows[0];
    if (row === undefined) throw new RunNotFoundError(runId);
    return runFromRow(row);
  }

  /**
   * Runs newest first, optionally of one status and/or thread. Page with `before`: pass the last
   * run id of the previous page (keyset, so concurrent inserts never shift or repeat a page).
   * An unknown `before` id throws RunNotFoundError.
   */
  async list(options: ListRunsOptions = {}): Promise<RunRecord[]> {
    const limit = options.limit ?? RUN_STORE_LIMITS.listDefault;
    if (!Number.isInteger(limit) || limit < 1 || limit > RUN_STORE_LIMITS.listMax) {
      throw runInputError(`limit must be an integer from 1 to ${RUN_STORE_LIMITS.listMax}, got ${String(limit)}`, { field: "limit" });
    }
    if (options.status !== undefined && !isRunStatus(options.status)) {
      throw runInputError(`unknown run status ${JSON.stringify(options.status)}`, { field: "status" });
    }
    const values: unknown[] = [];
    if (options.status !== undefined) values.push(options.status);
    if (options.threadId !== undefined) values.push(checkThreadId(options.threadId));
    if (options.metadata !== undefined) values.push(serializeJson(checkObject(options.metadata, "metadata"), "metadata"));
    if (options.before !== undefined) values.push(checkRunId(options.before));
    if (options.threadAccess !== undefined) values.push(accessJson(options.threadAccess));
    values.push(limit);
    const shape = { status: options.status !== undefined, thread: options.threadId !== undefined, before: options.before !== undefined, metadata: options.metadata !== undefined, waiting: options.waiting === true, threadAccess: options.threadAccess !== undefined };
    const result = await this.db.query(this.sql.list(shape), values);
    if (result.rows.length === 0 && options.before !== undefined) {
      const found = await this.db.query(this.sql.exists, [options.before]);
      if (found.rows.length === 0) throw new RunNotFoundError(options.before);
    }
    return result.rows.map(runFromRow);
  }

  /**
   * Claims the oldest pending run of one of `graphIds` (default: the agent) that may start — no
   * running run on its thread and no older pending run queued ahead of it — for `owner`: status running, epoch + 1, attempt
   * + 1, lease until now + leaseMs. Returns null when nothing is claimable. Safe to call from any
   * number of workers at once (rows held by another claimer are skipped; losing a same-thread race
   * to the unique index just moves on to the next candidate).
   */
  async claimNext(options: LeaseOptions & { graphIds?: readonly string[] }): Promise<ClaimedRun | null> {
    const { owner, leaseMs } = checkLease(options);
    const graphIds = [...(options.graphIds ?? [GRAPHS_DEFAULTS.defaultGraphId])];
    for (let attempt = 0; attempt < RUN_STORE_LIMITS.claimRetries; attempt += 1) {
      try {
        // the claim and the thread's newest checkpoint in one transaction: the run's graph starts
        // from it without a read (see CheckpointMemo); nothing else writes the thread meanwhile
        return await this.db.transaction(async (tx) => {
          const result = await tx.query(this.sql.claimNext, [owner, leaseMs, graphIds]);
          const row = result.rows[0];
          if (row === undefined) return null;
          const run = claimed(row);
          // read with COMMIT (one round trip): the claim commits when the read succeeds
          const checkpoint = await withCommit(tx).query<TupleRow>(this.latestCheckpoint, [run.run.thread_id, ""]);
          return { ...run, noOpenResumes: row["no_open_resumes"] === true, morePending: row["more_pending"] === true, threadCheckpoint: checkpoint.rows };
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
    }
    return null;
  }

  /**
   * Claims this pending run (to execute it in this process) when nothing on its thread is ahead
   * of it. Otherwise RunConflictError saying why (already running, finished, or another run of
   * the thread comes first); RunNotFoundError for an unknown id. With `graphs`, only a run of one
   * of them is claimed (else GraphNotFoundError, before any status is looked at), so the claimer
   * needs no read to check it first.
   */
  async claim(runId: string, options: LeaseOptions & { graphs?: readonly string[] }): Promise<ClaimedRun> {
    const id = checkRunId(runId);
    const { owner, leaseMs } = checkLease(options);
    let row: Row | undefined;
    try {
      const result = await this.db.query(this.sql.claim, [id, owner, leaseMs, options.graphs ?? null]);
      row = result.rows[0];
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new RunConflictError(`run ${runId} cannot start: another run of its thread became active at the same moment`, { runId });
    }
    if (row !== undefined && row["run_id"] !== null) return claimed(row);
    const status = row?.["current_status"] as RunStatus | null | undefined;
    if (status === null || status === undefined) throw new RunNotFoundError(runId);
    const graph = row?.["current_graph"] as string;
    if (options.graphs !== undefined && !options.graphs.includes(graph)) throw new GraphNotFoundError(graph, options.graphs);
    const details = { runId, status };
    if (status === "running") throw new RunConflictError(`run ${runId} is already running`, details);
    if (status !== "pending") throw new RunConflictError(`run ${runId} already finished with status ${status}`, details);
    const blockerId = row?.["blocker_id"] as string | null | undefined;
    if (typeof blockerId === "string") {
      const blockerStatus = row?.["blocker_status"] as string;
      throw new RunConflictError(
        blockerStatus === "pending"
          ? `run ${runId} cannot start yet: run ${blockerId} is queued ahead of it on its thread`
          : `run ${runId} cannot start yet: run ${blockerId} of its thread is ${blockerStatus}`,
        { ...details, blockerId, blockerStatus },
      );
    }
    throw new RunConflictError(`run ${runId} changed while being claimed (claimed, finished or cancelled by another caller); read it again`, details);
  }

  /**
   * Extends the lease to now + leaseMs (database clock; `updated_at` is left alone, it tracks
   * state changes). False: the lease is lost — stop working on the run and write nothing more.
   */
  async heartbeat(runId: string, epoch: number, leaseMs: number): Promise<boolean> {
    return (await this.renewLease(runId, epoch, leaseMs)).held;
  }

  /** `heartbeat`, also saying whether a cancel was requested for the run (the executor's fallback for a lost announcement). */
  async renewLease(runId: string, epoch: number, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const id = checkRunId(runId);
    checkEpoch(epoch);
    checkLeaseMs(leaseMs);
    const result = await this.db.query(this.sql.heartbeat, [id, epoch, leaseMs]);
    const row = result.rows[0];
    return { held: row !== undefined, cancelRequested: row?.["cancel_requested"] === true };
  }

  /**
   * Gives the run back to the queue (graceful drain): pending, lease cleared, so another worker
   * continues it at once. `attempt` is unchanged; the next claim counts a new attempt. Counts, if
   * given, are stored as in `interrupt`. False: the lease was already lost; nothing changed.
   */
  async release(runId: string, epoch: number, counts?: RunCounts): Promise<boolean> {
    const id = checkRunId(runId);
    checkEpoch(epoch);
    const result = await this.db.query(this.sql.release, [id, epoch, ...countValues(counts)]);
    return result.rows.length > 0;
  }

  /**
   * The run ends at an interrupt (CONTRACT section 3): status success, stop reason `interrupt`,
   * its thread waits on it (`waiting`), lease cleared, counts stored (totals replace,
   * `activeMsDelta` adds), `interrupts` what it stopped at (`[]`: a static breakpoint); the
   * resumes it ran with are used up. Returns the run as the statement left it; null when not
   * running under this epoch (nothing changed). With `tx`, runs in that transaction.
   */
  async endAtInterrupt(runId: string, epoch: number, counts: RunCounts, options: { tx?: Queryable; interrupts?: RunInterrupt[]; checkpointId?: string | null } = {}): Promise<RunRecord | null> {
    const id = checkRunId(runId);
    checkEpoch(epoch);
    const interrupts = serializeJson(options.interrupts ?? [], "interrupts");
    const values = [id, epoch, ...countValues(checkRunCounts(counts)), interrupts, options.checkpointId ?? null];
    const row = (await (options.tx ?? this.db).query(this.sql.endAtInterrupt, values)).rows[0];
    return row === undefined ? null : runFromRow(row);
  }

  /** The checkpoint id a run's interrupts were read at (null: none recorded). */
  async interruptCheckpoint(runId: string): Promise<string | null> {
    const result = await this.db.query<{ interrupt_checkpoint: string | null }>(this.sql.interruptCheckpoint, [checkRunId(runId)]);
    return result.rows[0]?.interrupt_checkpoint ?? null;
  }

  /** Waiting runs (their threads wait on them), most recently stopped first, with their interrupts: open approvals and interrupts in one query; `threadAccess`: only of threads the caller may see. */
  async listInterrupted(limit: number = GRAPHS_DEFAULTS.interruptedListDefault, threadAccess?: AccessFilter): Promise<InterruptedRun[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > GRAPHS_DEFAULTS.interruptedListMax) {
      throw runInputError(`limit must be an integer from 1 to ${GRAPHS_DEFAULTS.interruptedListMax}, got ${String(limit)}`, { field: "limit" });
    }
    const result = await this.db.query(this.sql.listInterrupted, [limit, accessJson(threadAccess)]);
    return result.rows.map((row) => ({
      ...runFromRow(row),
      decided_tool_calls: (row["decided_tool_calls"] as string[] | null) ?? [],
      answered_interrupts: (row["answered_interrupts"] as string[] | null) ?? [],
    }));
  }

  /**
   * Ends the run with a terminal status, stop reason, answer, error and counts; sets finished_at
   * and clears the lease. False: not running under this epoch; nothing changed. With `tx`, runs
   * in that transaction (e.g. `EventStore.appendWith`, so the final event commits with it).
   */
  async finish(runId: string, epoch: number, outcome: FinishRunOptions, options: { tx?: Queryable } = {}): Promise<boolean> {
    return (await this.finishRecord(runId, epoch, outcome, options)) !== null;
  }

  /**
   * Like `finish`, returning the run as the statement left it (what `get` reads once it commits),
   * or null when the fence did not hold: the finisher needs no read after its write.
   */
  async finishRecord(runId: string, epoch: number, outcome: FinishRunOptions, options: { tx?: Queryable } = {}): Promise<RunRecord | null> {
    const id = checkRunId(runId);
    checkEpoch(epoch);
    const { status, stopReason, answer, error } = outcome;
    if (typeof stopReason !== "string" || !isStopReason(stopReason)) {
      throw runInputError(`unknown stop reason ${JSON.stringify(stopReason)}`, { field: "stopReason" });
    }
    const expected = statusForStopReason(stopReason);
    if (status !== expected) {
      throw runInputError(`stop reason ${stopReason} ends a run with status ${expected}, not ${String(status)}`, { field: "status" });
    }
    if (answer !== null && typeof answer !== "string") throw runInputError("answer must be a string or null", { field: "answer" });
    if (error !== null && (typeof error?.code !== "string" || typeof error.message !== "string")) {
      throw runInputError("error must be { code, message } or null", { field: "error" });
    }
    const redact = (text: string | null | undefined): string | null => (typeof text === "string" ? this.redactor.text(text) : null);
    const values = [id, epoch, status, stopReason, redact(answer), error?.code ?? null, redact(error?.message), ...countValues(checkRunCounts(outcome.counts)), errorName(error)];
    const result = await (options.tx ?? this.db).query(this.sql.finish, values);
    const row = result.rows[0];
    return row === undefined ? null : runFromRow(row);
  }

  /**
   * In one statement, every running run whose lease lapsed goes back to pending — or, when it
   * has been claimed `maxAttempts` times already, ends as error / max_attempts (error code
   * MAX_ATTEMPTS); a run whose cancel was requested ends as interrupted. A run ended here gets its
   * final event (`run.failed` with stop_reason max_attempts, or `run.cancelled`) in the same
   * statement, and every changed run is announced to workers (RUNS_CHANNEL) in every process.
   * Call it periodically from workers; it never runs anything itself. `executingHere`: runs this
   * process is executing (their owner is alive: it is the caller), left to their own heartbeat.
   */
  async requeueExpired(options: { maxAttempts: number; executingHere?: readonly string[] }): Promise<RequeueResult> {
    const { min, max } = CONFIG_BOUNDS.maxAttempts;
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < min || options.maxAttempts > max) {
      throw runInputError(`maxAttempts must be an integer from ${min} to ${max}, got ${String(options.maxAttempts)}`, { field: "maxAttempts" });
    }
    const result = await this.db.query<{ run_id: string; status: RunStatus }>(this.sql.requeueExpired, [
      options.maxAttempts,
      JSON.stringify(REAPED_RUN_EVENTS.cancelled),
      JSON.stringify(REAPED_RUN_EVENTS.failed),
      [...(options.executingHere ?? [])],
    ]);
    const outcome: RequeueResult = { requeued: [], failed: [], cancelled: [] };
    for (const row of result.rows) {
      if (row.status === "pending") outcome.requeued.push(row.run_id);
      else if (row.status === "interrupted") outcome.cancelled.push(row.run_id);
      else outcome.failed.push(row.run_id);
    }
    return outcome;
  }

  /**
   * Gives back runs that `owner` claimed without learning it (a claim whose answer was lost when
   * the connection died): back to pending, the claim's attempt not counted. Call it only for an
   * owner holding no run. Returns their ids.
   */
  async releaseLostClaims(owner: string): Promise<string[]> {
    const result = await this.db.query<{ run_id: string }>(this.sql.releaseLostClaims, [owner]);
    return result.rows.map((row) => row.run_id);
  }

  /**
   * One small real write (see migration 0005): resolves when the database stores data, throws
   * DATABASE_WRITE_FAILED / DATABASE_UNREACHABLE when it does not. `prober` names the caller.
   */
  async probeWrite(prober: string): Promise<void> {
    await this.db.query(this.sql.probeWrite, [prober.slice(0, 200), PROBE_PAYLOAD]);
  }

  /**
   * Milliseconds until the earliest lease of a running run lapses (0: one already has), or null
   * when no run is running: when `requeueExpired` next has something to do, unless the lease is
   * renewed first.
   */
  async nextLeaseExpiry(): Promise<number | null> {
    const result = await this.db.query<{ ms: number | string | null }>(this.sql.nextLeaseExpiry);
    const ms = result.rows[0]?.ms;
    return ms === null || ms === undefined ? null : Number(ms);
  }

  /**
   * Cancels a run: a pending run is interrupted at once (stop reason cancelled); a
   * running run gets `cancel_requested` and its worker stops at the next check. Returns the run
   * as it is now. RunConflictError when a cancel is already under way or the run finished.
   * Inside a caller's transaction (`tx`) the change commits with the caller's other writes.
   */
  async requestCancel(runId: string, options: { tx?: Queryable } = {}): Promise<RunRecord> {
    const id = checkRunId(runId);
    const runner = options.tx ?? this.db;
    for (let attempt = 0; attempt < RUN_STORE_LIMITS.cancelRetries; attempt += 1) {
      const result = await runner.query(this.sql.requestCancel, [id]);
      const row = result.rows[0];
      if (row !== undefined && row["run_id"] !== null) return runFromRow(row);
      const status = row?.["current_status"] as RunStatus | null | undefined;
      if (status === null || status === undefined) throw new RunNotFoundError(runId);
      if (status === "running" && row?.["current_cancel_requested"] === true) {
        throw new RunConflictError(`run ${runId} is already cancelled: its worker stops at the next check`, { runId, status });
      }
      if (status !== "pending" && status !== "running") {
        throw new RunConflictError(`run ${runId} already finished with status ${status}`, { runId, status });
      }
      // it changed between the read and the update (e.g. it was just claimed): read again
    }
    throw new RunConflictError(`run ${runId} keeps changing; try cancelling again`, { runId });
  }

  /** Whether a cancel was requested for this run (a cheap poll for workers). RunNotFoundError for unknown ids. */
  async isCancelRequested(runId: string): Promise<boolean> {
    const result = await this.db.query<{ requested: boolean }>(this.sql.isCancelRequested, [checkRunId(runId)]);
    const row = result.rows[0];
    if (row === undefined) throw new RunNotFoundError(runId);
    return row.requested;
  }
}

function claimed(row: Row): ClaimedRun {
  const run = runFromRow(row);
  return { run, epoch: run.lease?.epoch ?? 0 };
}

function checkLeaseMs(leaseMs: number): number {
  const { min, max } = CONFIG_BOUNDS.leaseMs;
  if (!Number.isInteger(leaseMs) || leaseMs < min || leaseMs > max) {
    throw runInputError(`leaseMs must be an integer from ${min} to ${max}, got ${String(leaseMs)}`, { field: "leaseMs" });
  }
  return leaseMs;
}

function checkLease(options: LeaseOptions): LeaseOptions {
  const owner = options.owner;
  if (typeof owner !== "string" || owner.length === 0 || owner.length > RUN_STORE_LIMITS.ownerMaxChars || owner.includes("\0")) {
    throw runInputError(`lease owner must be a non-empty string of at most ${RUN_STORE_LIMITS.ownerMaxChars} characters`, { field: "owner" });
  }
  return { owner, leaseMs: checkLeaseMs(options.leaseMs) };
}

/** A graph or assistant id: non-empty, bounded, no NUL; RUN_INPUT_INVALID naming `field` otherwise. */
function checkGraphId(id: string, field: string): string {
  if (typeof id !== "string" || id.length === 0 || id.length > RUN_STORE_LIMITS.graphIdMaxChars || id.includes("\0")) {
    throw runInputError(`${field} must be a non-empty string of at most ${RUN_STORE_LIMITS.graphIdMaxChars} characters`, { field });
  }
  return id;
}

function checkEpoch(epoch: number): void {
  if (!Number.isSafeInteger(epoch) || epoch < 0) throw runInputError(`lease epoch must be a non-negative integer, got ${String(epoch)}`, { field: "epoch" });
}

/** The five count parameters of the fenced statements; nulls keep what is stored. */
/** A finished run's error class name as stored: a non-empty name of at most RUN_STORE_LIMITS.errorNameMaxChars, else null. */
function errorName(error: RunError | null): string | null {
  const name = error?.name;
  return typeof name === "string" && name !== "" ? name.slice(0, RUN_STORE_LIMITS.errorNameMaxChars) : null;
}

function countValues(counts: RunCounts | undefined): (number | null)[] {
  if (counts === undefined) return [null, null, null, null, null];
  checkRunCounts(counts);
  return [counts.modelRounds, counts.toolCalls, counts.usage.input_tokens, counts.usage.output_tokens, counts.activeMsDelta];
}

function checkObject(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw runInputError(`${field} must be an object`, { field });
  return value as Record<string, unknown>;
}

function checkNodeList(value: string[] | undefined, field: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length > RUN_STORE_LIMITS.breakpointsMax || value.some((node) => typeof node !== "string" || node.length === 0 || node.length > RUN_STORE_LIMITS.graphIdMaxChars || node.includes("\0"))) {
    throw runInputError(`${field} must be a list of at most ${RUN_STORE_LIMITS.breakpointsMax} node names (or "*")`, { field });
  }
  return value.length === 0 ? null : value;
}

/** The create statement's parameters $10.. (metadata, delay ms, breakpoints, checkpoint id), checked. */
function runExtras(options: CreateRunOptions): [string, number | null, string[] | null, string[] | null, string | null, string[] | null] {
  const metadata = options.metadata === undefined ? "{}" : serializeJson(checkObject(options.metadata, "metadata"), "metadata");
  const after = options.afterSeconds ?? 0;
  if (typeof after !== "number" || !Number.isFinite(after) || after < 0 || after > RUN_STORE_LIMITS.afterSecondsMax) {
    throw runInputError(`after_seconds must be a number from 0 to ${RUN_STORE_LIMITS.afterSecondsMax}`, { field: "after_seconds" });
  }
  const before = checkNodeList(options.interruptBefore, "interrupt_before");
  const afterNodes = checkNodeList(options.interruptAfter, "interrupt_after");
  const checkpointId = options.checkpointId ?? null;
  if (checkpointId !== null && (typeof checkpointId !== "string" || checkpointId.length === 0 || checkpointId.length > 256 || checkpointId.includes("\0"))) {
    throw runInputError("checkpoint_id must be a checkpoint id of the thread", { field: "checkpoint_id" });
  }
  const streamMode = options.streamMode ?? null;
  if (streamMode !== null && (!Array.isArray(streamMode) || streamMode.length > RUN_STORE_LIMITS.streamModesMax || streamMode.some((mode) => typeof mode !== "string" || mode.length === 0 || mode.length > 64))) {
    throw runInputError(`stream_mode must be a list of at most ${RUN_STORE_LIMITS.streamModesMax} stream mode names`, { field: "stream_mode" });
  }
  return [metadata, after === 0 ? null : Math.round(after * 1000), before, afterNodes, checkpointId, streamMode];
}
