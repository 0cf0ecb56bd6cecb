import { PURGE_DEFAULTS } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { RunConflictError } from "../../errors.js";
import { assistantIdFor } from "../../graphs/assistant-id.js";
import { purgeSql, type PurgeSql } from "./purge-sql.js";
import type { RunRecord, RunStatus } from "../queue/run-record.js";

/**
 * What `runtime.truncate` deletes (the official server's `POST /internal/truncate` body):
 * `runs` every run (with its events, decisions, ledger, resumes); `threads` every thread with its
 * runs, checkpoints, files and thread crons (devmind keeps a thread's state in its checkpoints);
 * `assistants` every assistant but the loaded graphs' defaults (with their crons);
 * `checkpointer` every checkpoint; `store` every memory store item.
 */
export interface TruncateFlags {
  runs?: boolean | undefined;
  threads?: boolean | undefined;
  assistants?: boolean | undefined;
  checkpointer?: boolean | undefined;
  store?: boolean | undefined;
}

/** The run operations a purge uses to stop what it deletes (`runtime.runs`). */
export interface PurgeRunControl {
  list(options: { status?: RunStatus; threadId?: string; limit?: number }): Promise<RunRecord[]>;
  get(runId: string): Promise<RunRecord>;
  cancel(runId: string): Promise<RunRecord>;
  waitStopped(runId: string, options: { timeoutMs: number }): Promise<RunRecord>;
}

const ACTIVE: readonly RunStatus[] = ["pending", "running"];

/**
 * Cancels every pending and running run (of `threadId` when given) and waits until
 * each running one stopped (PURGE_DEFAULTS.stopTimeoutMs each), in rounds while new ones appear.
 * RunConflictError (409) when one does not stop in time or runs keep starting: the caller then
 * deletes nothing rather than delete under a worker.
 */
export async function stopActiveRuns(runs: PurgeRunControl, threadId?: string): Promise<void> {
  for (let round = 0; round < PURGE_DEFAULTS.maxRounds; round += 1) {
    const lists = await Promise.all(ACTIVE.map((status) => runs.list({ status, limit: PURGE_DEFAULTS.pageSize, ...(threadId === undefined ? {} : { threadId }) })));
    const active = lists.flat();
    if (active.length === 0) return;
    for (const run of active) {
      // a run that ended (or was cancelled) meanwhile refuses the cancel: what counts is how it is now
      await runs.cancel(run.run_id).catch(() => undefined);
      const now = await runs.get(run.run_id);
      if (now.status !== "running") continue;
      const stopped = await runs.waitStopped(run.run_id, { timeoutMs: PURGE_DEFAULTS.stopTimeoutMs });
      if (stopped.status === "running") {
        throw new RunConflictError(`run ${run.run_id} did not stop within ${PURGE_DEFAULTS.stopTimeoutMs} ms of its cancel; nothing was deleted, try again`, { runId: run.run_id });
      }
    }
  }
  throw new RunConflictError(`runs kept starting while they were being cancelled (${PURGE_DEFAULTS.maxRounds} rounds); nothing was deleted, try again`);
}

/**
 * Bulk deletes over one database: `truncate` (CONTRACT section 8's `POST /internal/truncate`,
 * served only with DEVMIND_ALLOW_TRUNCATE) and the threads of an assistant (`DELETE
 * /assistants/{id}?delete_threads=true`). Both stop the runs they delete first (`stopActiveRuns`).
 */
export class Purger {
  private readonly sql: PurgeSql;

  constructor(
    private readonly db: Database,
    private readonly runs: PurgeRunControl,
    private readonly graphIds: () => string[],
  ) {
    this.sql = purgeSql(db.schema);
  }

  /**
   * Deletes what `flags` names (TruncateFlags) in one transaction, after stopping every active run
   * when runs or threads go. RunConflictError (nothing deleted) when a run is still running.
   */
  async truncate(flags: TruncateFlags): Promise<void> {
    const runsGo = flags.runs === true || flags.threads === true;
    if (runsGo) await stopActiveRuns(this.runs);
    const keep = this.graphIds().map((graphId) => assistantIdFor(graphId));
    await this.db.transaction(async (tx) => {
      if (runsGo) {
        await tx.query(this.sql.runs);
        const running = Number((await tx.query(this.sql.running)).rows[0]?.["running"] ?? 0);
        if (running > 0) throw new RunConflictError(`${running} run(s) started running while the runs were being deleted; nothing was deleted, try again`);
      }
      if (flags.threads === true) await tx.query(this.sql.threads);
      if (flags.threads === true || flags.checkpointer === true) await tx.query(this.sql.checkpoints);
      if (flags.assistants === true) await tx.query(this.sql.assistants, [keep]);
      if (flags.store === true) await tx.query(this.sql.store);
    });
  }

  /**
   * Deletes the threads of assistant `assistantId` (its uuid) — those whose metadata names it and
   * those with a run of it — each with `deleteThread` after stopping its active runs; returns
   * their ids. At most PURGE_DEFAULTS.pageSize * maxRounds threads per call.
   */
  async assistantThreads(assistantId: string, deleteThread: (threadId: string) => Promise<void>): Promise<string[]> {
    const deleted: string[] = [];
    for (let round = 0; round < PURGE_DEFAULTS.maxRounds; round += 1) {
      const ids = (await this.db.query(this.sql.assistantThreads, [assistantId, PURGE_DEFAULTS.pageSize])).rows.map((row) => String(row["thread_id"]));
      if (ids.length === 0) break;
      for (const threadId of ids) {
        await stopActiveRuns(this.runs, threadId);
        await deleteThread(threadId);
        deleted.push(threadId);
      }
    }
    return deleted;
  }
}
