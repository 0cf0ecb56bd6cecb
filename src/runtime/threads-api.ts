import type { StateSnapshot } from "@langchain/langgraph";
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import type { Database } from "../db/types.js";
import { AttachmentStore } from "./attachment-store.js";
import { ThreadStateReader, type HistoryOptions, type RunSnapshots, type StateReadableGraph } from "./thread-state.js";
import { RunConflictError } from "../errors.js";
import { ThreadStore, type SearchThreadsOptions, type ThreadRecord } from "./thread-store.js";

/**
 * `runtime.threads`: the conversations behind runs. Records (metadata, status derived from runs)
 * come from the threads table; state and history come from the agent graph's checkpoints.
 */
export interface ThreadsApi {
  create(options?: { threadId?: string | undefined; metadata?: Record<string, unknown> | undefined; ifExists?: "raise" | "do_nothing" | undefined }): Promise<ThreadRecord>;
  get(threadId: string): Promise<ThreadRecord>;
  patch(threadId: string, metadata: Record<string, unknown>): Promise<ThreadRecord>;
  search(options?: SearchThreadsOptions): Promise<ThreadRecord[]>;
  /** Deletes the thread, its runs, its checkpoints and its attachments; refused while a run of it is active. */
  delete(threadId: string): Promise<void>;
  /** Makes sure the thread has a row, tagged with the graph of the run created on it; `runs.create` calls it. */
  touch(threadId: string, graphId?: string): Promise<void>;
  state(threadId: string): Promise<StateSnapshot>;
  stateAt(threadId: string, checkpointId: string): Promise<StateSnapshot>;
  history(threadId: string, options?: HistoryOptions): Promise<StateSnapshot[]>;
  /** How many threads match (metadata contains, status). */
  count(options?: Pick<SearchThreadsOptions, "metadata" | "status">): Promise<number>;
  /**
   * Writes `values` as node `asNode` (LangGraph's `updateState`) on the thread's latest checkpoint
   * or on `checkpointId` (forking there); refused (RunConflictError) while a run of the thread is
   * active. Returns the new checkpoint id.
   */
  updateState(threadId: string, values: unknown, options?: { asNode?: string | undefined; checkpointId?: string | undefined }): Promise<string>;
  /**
   * Pre-fills a new thread's state: each superstep's updates applied as one step (LangGraph's
   * `bulkUpdateState`), with the graph the thread's metadata names. Returns the last checkpoint id.
   */
  applySupersteps(threadId: string, supersteps: readonly { updates: readonly { values: unknown; asNode?: string | undefined }[] }[]): Promise<string>;
  /** The checkpoints run `runId` wrote after checkpoint `afterId`, oldest first (see ThreadStateReader). */
  runSnapshots(threadId: string, runId: string, afterId: string | undefined): Promise<RunSnapshots>;
  /** Every checkpoint of one subgraph invocation (namespace `node:task_id[|...]`), oldest first (see ThreadStateReader). */
  namespaceSnapshots(threadId: string, checkpointNs: string): Promise<StateSnapshot[]>;
}

/** Builds `runtime.threads` over the database; `graphFor(threadId)` gives the graph whose checkpoints a thread holds. */
export function createThreadsApi(db: Database, graphFor: (threadId: string, taggedGraphId: () => Promise<string | undefined>) => Promise<StateReadableGraph>): ThreadsApi {
  const store = new ThreadStore(db);
  // the graph a thread's metadata names, read only for a thread without runs
  const tagged = (threadId: string) => (): Promise<string | undefined> =>
    store.get(threadId).then(
      (thread) => (typeof thread.metadata["graph_id"] === "string" ? thread.metadata["graph_id"] : undefined),
      () => undefined,
    );
  const reader = new ThreadStateReader((threadId) => graphFor(threadId, tagged(threadId)));
  return {
    create: (options) => store.create(options),
    get: (threadId) => store.get(threadId),
    patch: (threadId, metadata) => store.patch(threadId, metadata),
    search: (options) => store.search(options),
    async delete(threadId) {
      await store.delete(threadId);
      await new PostgresCheckpointSaver(db).deleteThread(threadId);
      await new AttachmentStore(db).deleteForThread(threadId);
    },
    touch: (threadId, graphId) => store.touch(threadId, graphId),
    state: (threadId) => reader.state(threadId),
    stateAt: (threadId, checkpointId) => reader.stateAt(threadId, checkpointId),
    history: (threadId, options) => reader.history(threadId, options),
    count: (options) => store.count(options),
    async updateState(threadId, values, options) {
      await store.get(threadId);
      const active = await store.activeRun(threadId);
      if (active !== undefined) throw new RunConflictError(`thread ${threadId} has an active run ${active.runId} (${active.status}); its state changes when the run stops`, { threadId });
      const checkpointId = await reader.updateState(threadId, values, options);
      await store.patch(threadId, {});
      return checkpointId;
    },
    async applySupersteps(threadId, supersteps) {
      const checkpointId = await reader.applySupersteps(threadId, supersteps);
      await store.patch(threadId, {});
      return checkpointId;
    },
    runSnapshots: (threadId, runId, afterId) => reader.runSnapshots(threadId, runId, afterId),
    namespaceSnapshots: (threadId, checkpointNs) => reader.namespaceSnapshots(threadId, checkpointNs),
  };
}
