import type { StateSnapshot } from "@langchain/langgraph";
import { PostgresCheckpointSaver } from "../../checkpoint/postgres-saver.js";
import { THREAD_DEFAULTS } from "../../constants.js";
import type { Database, Queryable } from "../../db/types.js";
import type { Logger } from "../../logger.js";
import { startTtlSweeper, type TtlSweeper } from "../../store/ttl-sweeper.js";
import { AttachmentStore } from "../attachments/attachment-store.js";
import { ThreadCheckpoints } from "./thread-checkpoints.js";
import { ThreadStateReader, type GraphOfRun, type HistoryOptions, type RunSnapshots, type StateOptions, type StateReadableGraph } from "./thread-state.js";
import { DevmindError, hasErrorCode, RunConflictError } from "../../errors.js";
import { ThreadStore, type SearchThreadsOptions, type ThreadRecord } from "./thread-store.js";
import type { AccessFilter } from "../../vocabulary/access-filter.js";

/**
 * `runtime.threads`: the conversations behind runs. Records (metadata, status derived from runs)
 * come from the threads table; state and history come from the agent graph's checkpoints.
 */
export interface ThreadsApi {
  /** `ttlMinutes`: the thread is deleted once that long passed since its last update (see `sweepExpired`). */
  create(options?: { threadId?: string | undefined; metadata?: Record<string, unknown> | undefined; ifExists?: "raise" | "do_nothing" | undefined; ttlMinutes?: number | undefined }): Promise<ThreadRecord>;
  /** `access`: the caller's filter (AccessFilter): a thread it hides is THREAD_NOT_FOUND. */
  get(threadId: string, access?: AccessFilter): Promise<ThreadRecord>;
  /** Merges `metadata` into the thread's; `ttlMinutes` replaces its TTL (every update restarts the TTL). */
  patch(threadId: string, metadata: Record<string, unknown>, ttlMinutes?: number, access?: AccessFilter): Promise<ThreadRecord>;
  /**
   * A new thread (new uuid) with the thread's metadata (`thread_id` naming the copy), TTL and
   * whole checkpoint history (same checkpoint ids, values and pending writes), so its state and
   * history read as the source's; not its runs. ThreadNotFoundError for an unknown thread,
   * RunConflictError while a run of it is pending, running or interrupted.
   */
  copy(threadId: string, access?: AccessFilter): Promise<ThreadRecord>;
  /**
   * LangGraph's prune strategy keep_latest: keeps only the thread's newest checkpoint (and each
   * subgraph namespace's), so its state stays and its history is that one checkpoint. Refused
   * (RunConflictError) while a run of it is active. Returns how many checkpoints were removed.
   */
  keepLatest(threadId: string): Promise<number>;
  /** Merges `metadata` into the metadata of the thread's newest checkpoint (LangGraph's `patchState`); NOT_FOUND without one. */
  patchStateMetadata(threadId: string, metadata: Record<string, unknown>): Promise<string>;
  /**
   * Deletes threads past their TTL that have no pending, running or interrupted run, at most
   * THREAD_DEFAULTS.ttlSweepBatchSize × ttlSweepMaxBatches per call. Returns how many.
   */
  sweepExpired(): Promise<number>;
  /** Runs `sweepExpired` every THREAD_DEFAULTS.ttlSweepMinutes (`serve`, `worker`) until `stopSweeper`; idempotent. */
  startSweeper(): void;
  stopSweeper(): Promise<void>;
  search(options?: SearchThreadsOptions): Promise<ThreadRecord[]>;
  /** Deletes the thread, its runs, its checkpoints and its attachments; refused while a run of it is active. */
  delete(threadId: string): Promise<void>;
  /** Makes sure the thread has a row, tagged with the graph of the run created on it; `runs.create` calls it. */
  touch(threadId: string, graphId?: string, metadata?: Record<string, unknown>, tx?: Queryable): Promise<void>;
  /** `touch` for a thread that must exist and that `access` lets the caller see: THREAD_NOT_FOUND otherwise (in `tx` when given). */
  touchExisting(threadId: string, graphId: string, access?: AccessFilter, tx?: Queryable): Promise<void>;
  /** The thread's latest state; `options` (StateOptions): a subgraph's namespace, nested subgraph states. */
  state(threadId: string, options?: StateOptions): Promise<StateSnapshot>;
  stateAt(threadId: string, checkpointId: string, options?: StateOptions): Promise<StateSnapshot>;
  history(threadId: string, options?: HistoryOptions): Promise<StateSnapshot[]>;
  /** How many threads match (metadata contains, status). */
  count(options?: Pick<SearchThreadsOptions, "metadata" | "status" | "access">): Promise<number>;
  /**
   * Writes `values` as node `asNode` (LangGraph's `updateState`) on the thread's latest checkpoint
   * or on `checkpointId` (forking there), of the subgraph namespace `checkpointNs` when given;
   * refused (RunConflictError) while a run of the thread is active. Returns the new checkpoint id.
   */
  updateState(threadId: string, values: unknown, options?: { asNode?: string | undefined; checkpointId?: string | undefined; checkpointNs?: string | undefined }): Promise<string>;
  /**
   * Pre-fills a new thread's state: each superstep's updates applied as one step (LangGraph's
   * `bulkUpdateState`), with the graph the thread's metadata names. Returns the last checkpoint id.
   */
  applySupersteps(threadId: string, supersteps: readonly { updates: readonly { values: unknown; asNode?: string | undefined }[] }[]): Promise<string>;
  /** The checkpoints run `runId` wrote after checkpoint `afterId`, oldest first (see ThreadStateReader). */
  runSnapshots(threadId: string, runId: string, afterId: string | undefined, run?: GraphOfRun): Promise<RunSnapshots>;
  /** Every checkpoint of one subgraph invocation (namespace `node:task_id[|...]`), oldest first (see ThreadStateReader). */
  namespaceSnapshots(threadId: string, checkpointNs: string, run?: GraphOfRun): Promise<StateSnapshot[] | undefined>;
}

/**
 * Builds `runtime.threads` over the database; `graphFor(threadId)` gives the graph whose
 * checkpoints a thread holds; `logger` gets the TTL sweeper's results and failures.
 */
export function createThreadsApi(db: Database, graphFor: (threadId: string, taggedGraphId: () => Promise<string | undefined>, run?: GraphOfRun) => Promise<StateReadableGraph>, logger: Logger): ThreadsApi {
  const store = new ThreadStore(db);
  const checkpoints = new ThreadCheckpoints(db);
  let sweeper: TtlSweeper | undefined;
  const refuseActive = async (threadId: string, what: string): Promise<void> => {
    const active = await store.activeRun(threadId);
    if (active !== undefined) throw new RunConflictError(`thread ${threadId} has an active run ${active.runId} (${active.status}); ${what}`, { threadId });
  };
  const deleteThread = async (threadId: string): Promise<void> => {
    await store.delete(threadId);
    await new PostgresCheckpointSaver(db).deleteThread(threadId);
    await new AttachmentStore(db).deleteForThread(threadId);
  };
  const sweepExpired = async (): Promise<number> => {
    let deleted = 0;
    for (let batch = 0; batch < THREAD_DEFAULTS.ttlSweepMaxBatches; batch += 1) {
      const lapsed = await store.expired(THREAD_DEFAULTS.ttlSweepBatchSize);
      for (const threadId of lapsed) {
        try {
          await deleteThread(threadId);
          deleted += 1;
        } catch (error) {
          // gone meanwhile, or a run was created on it since: the next sweep looks again
          if (!hasErrorCode(error, "THREAD_NOT_FOUND") && !hasErrorCode(error, "RUN_CONFLICT")) throw error;
        }
      }
      if (lapsed.length < THREAD_DEFAULTS.ttlSweepBatchSize) break;
    }
    return deleted;
  };
  // the graph a thread's metadata names, read only for a thread without runs
  const tagged = (threadId: string) => (): Promise<string | undefined> =>
    store.get(threadId).then(
      (thread) => (typeof thread.metadata["graph_id"] === "string" ? thread.metadata["graph_id"] : undefined),
      () => undefined,
    );
  const reader = new ThreadStateReader((threadId, run) => graphFor(threadId, tagged(threadId), run));
  return {
    create: (options) => store.create(options),
    get: (threadId, access) => store.get(threadId, access),
    patch: (threadId, metadata, ttlMinutes, access) => store.patch(threadId, metadata, ttlMinutes, access),
    search: (options) => store.search(options),
    delete: deleteThread,
    async copy(threadId, access) {
      await store.get(threadId, access);
      await refuseActive(threadId, "copy the thread once it stopped");
      const copyId = crypto.randomUUID();
      await db.transaction(async (tx) => {
        await store.copyRow(tx, threadId, copyId, access);
        await checkpoints.copy(tx, threadId, copyId);
      });
      return store.get(copyId);
    },
    async keepLatest(threadId) {
      await store.get(threadId);
      await refuseActive(threadId, "prune the thread once it stopped");
      return checkpoints.keepLatest(threadId, () => graphFor(threadId, tagged(threadId)));
    },
    async patchStateMetadata(threadId, metadata) {
      await store.get(threadId);
      const checkpointId = await checkpoints.patchLatestMetadata(threadId, metadata);
      if (checkpointId === undefined) throw new DevmindError("NOT_FOUND", `thread ${threadId} has no checkpoint to patch`, { details: { threadId } });
      return checkpointId;
    },
    sweepExpired,
    startSweeper() {
      if (sweeper !== undefined) return;
      sweeper = startTtlSweeper(sweepExpired, THREAD_DEFAULTS.ttlSweepMinutes * 60_000, logger, "threads");
    },
    async stopSweeper() {
      const running = sweeper;
      sweeper = undefined;
      await running?.stop();
    },
    touch: (threadId, graphId, metadata, tx) => store.touch(threadId, graphId, metadata, tx),
    touchExisting: (threadId, graphId, access, tx) => store.touchExisting(threadId, graphId, access, tx),
    state: (threadId, options) => reader.state(threadId, options),
    stateAt: (threadId, checkpointId, options) => reader.stateAt(threadId, checkpointId, options),
    history: (threadId, options) => reader.history(threadId, options),
    count: (options) => store.count(options),
    async updateState(threadId, values, options) {
      await store.get(threadId);
      const active = await store.activeRun(threadId);
      if (active !== undefined) throw new RunConflictError(`thread ${threadId} has an active run ${active.runId} (${active.status}); its state changes when the run stops`, { threadId, conflict: "thread_busy" });
      const checkpointId = await reader.updateState(threadId, values, options);
      await store.patch(threadId, {});
      return checkpointId;
    },
    async applySupersteps(threadId, supersteps) {
      const checkpointId = await reader.applySupersteps(threadId, supersteps);
      await store.patch(threadId, {});
      return checkpointId;
    },
    runSnapshots: (threadId, runId, afterId, run) => reader.runSnapshots(threadId, runId, afterId, run),
    namespaceSnapshots: (threadId, checkpointNs, run) => reader.namespaceSnapshots(threadId, checkpointNs, run),
  };
}
