import type { StateSnapshot } from "@langchain/langgraph";
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import type { Database } from "../db/types.js";
import { AttachmentStore } from "./attachment-store.js";
import { ThreadStateReader, type RunSnapshots, type StateReadableGraph } from "./thread-state.js";
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
  history(threadId: string, options?: { limit?: number | undefined; before?: string | undefined }): Promise<StateSnapshot[]>;
  /** The checkpoints run `runId` wrote after checkpoint `afterId`, oldest first (see ThreadStateReader). */
  runSnapshots(threadId: string, runId: string, afterId: string | undefined): Promise<RunSnapshots>;
  /** Every checkpoint of one subgraph invocation (namespace `node:task_id[|...]`), oldest first (see ThreadStateReader). */
  namespaceSnapshots(threadId: string, checkpointNs: string): Promise<StateSnapshot[]>;
}

/** Builds `runtime.threads` over the database; `graphFor(threadId)` gives the graph whose checkpoints a thread holds. */
export function createThreadsApi(db: Database, graphFor: (threadId: string) => Promise<StateReadableGraph>): ThreadsApi {
  const store = new ThreadStore(db);
  const reader = new ThreadStateReader(graphFor);
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
    runSnapshots: (threadId, runId, afterId) => reader.runSnapshots(threadId, runId, afterId),
    namespaceSnapshots: (threadId, checkpointNs) => reader.namespaceSnapshots(threadId, checkpointNs),
  };
}
