import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

/**
 * Statements that delete data in bulk for `runtime.truncate` (the official server's
 * `POST /internal/truncate`) and for deleting an assistant's threads, on one schema. Deleting a
 * run deletes its events, decisions, ledger rows, resumes and completion (ON DELETE CASCADE).
 * A running run is never deleted: `runs` and `threadRuns` skip it, and `running` tells the caller
 * whether one is left (it refuses, rolling back, rather than delete under a worker).
 */
export function purgeSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /** Every run that is not running. */
    runs: statement("purge_runs", `DELETE FROM ${s}.runs r WHERE r.status <> 'running'`),
    /** How many runs are running. */
    running: statement("purge_running", `SELECT count(*)::integer AS running FROM ${s}.runs r WHERE r.status = 'running'`),
    /** Every thread, its files and the crons bound to a thread. */
    threads: statement(
      "purge_threads",
      `WITH gone_threads AS (DELETE FROM ${s}.threads t RETURNING 1),
            gone_files AS (DELETE FROM ${s}.attachments a RETURNING 1),
            gone_crons AS (DELETE FROM ${s}.crons c WHERE c.thread_id IS NOT NULL RETURNING 1)
       SELECT (SELECT count(*) FROM gone_threads)::integer AS threads`,
    ),
    /** Every checkpoint with its blobs and writes. */
    checkpoints: statement(
      "purge_checkpoints",
      `WITH gone_writes AS (DELETE FROM ${s}.checkpoint_writes w RETURNING 1),
            gone_blobs AS (DELETE FROM ${s}.checkpoint_blobs b RETURNING 1),
            gone AS (DELETE FROM ${s}.checkpoints c RETURNING 1)
       SELECT (SELECT count(*) FROM gone)::integer AS checkpoints`,
    ),
    /** $1 ids of the graphs' default assistants (kept): every other assistant (with its versions) and its crons. */
    assistants: statement(
      "purge_assistants",
      `WITH gone AS (DELETE FROM ${s}.assistants a WHERE a.assistant_id::text <> ALL($1::text[]) RETURNING a.assistant_id::text AS assistant_id),
            gone_crons AS (DELETE FROM ${s}.crons c WHERE c.assistant_id IN (SELECT assistant_id FROM gone) RETURNING 1)
       SELECT (SELECT count(*) FROM gone)::integer AS assistants`,
    ),
    /** Every item of the memory store. */
    store: statement("purge_store", `DELETE FROM ${s}.store_items i`),
    /**
     * $1 assistant id, $2 limit: up to $2 ids of the assistant's threads — those whose metadata
     * names it (`assistant_id`, as the official server tags a thread its runs use) or that have a run of it.
     */
    assistantThreads: statement(
      "purge_assistant_threads",
      `SELECT t.thread_id FROM ${s}.threads t WHERE t.metadata @> jsonb_build_object('assistant_id', $1::text)
       UNION
       SELECT DISTINCT r.thread_id FROM ${s}.runs r WHERE r.assistant_id::text = $1::text
       ORDER BY 1 LIMIT $2::integer`,
    ),
  };
}

/** The statements of `purgeSql` for one schema. */
export type PurgeSql = ReturnType<typeof purgeSql>;
