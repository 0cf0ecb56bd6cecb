import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import { RUN_COMPLETIONS_CHANNEL } from "../events/event-sql.js";

/**
 * Statements of `run_completions` (migration 0010) for one schema (a validated identifier). A
 * row is claimed by moving `next_attempt_at` past the time one delivery may take, so a worker
 * that dies mid-delivery leaves it to be claimed again then.
 */
export function runCompletionSql(schema: string) {
  const s = quoteIdentifier(schema);
  const completions = `${s}.run_completions`;
  const runs = `${s}.runs`;
  return {
    /** $1 run id, $2 webhook (or NULL), $3 delete the thread after the run, $4 milliseconds before the row may be handled. */
    insert: statement(
      "run_completions_insert",
      `INSERT INTO ${completions} (run_id, webhook, delete_thread, next_attempt_at)
       VALUES ($1::uuid, $2::text, $3::boolean, now() + $4::float8 * interval '1 millisecond')`,
    ),
    /** $1 run id: a held row (see insert) may be handled now (the completion loops are notified); a row already claimed or retried keeps its time. */
    release: statement(
      "run_completions_release",
      `UPDATE ${completions} SET next_attempt_at = now() WHERE run_id = $1::uuid AND done_at IS NULL AND attempts = 0 AND next_attempt_at > now()
       RETURNING pg_notify('${RUN_COMPLETIONS_CHANNEL}', run_id::text)::text AS woken`,
    ),
    /**
     * $1 limit, $2 milliseconds a claim holds: open rows of terminal runs that are due, locked
     * against other workers; counts the webhook attempt about to be made.
     */
    claim: statement(
      "run_completions_claim",
      `WITH due AS (
         SELECT c.run_id FROM ${completions} c JOIN ${runs} r ON r.run_id = c.run_id
          WHERE c.done_at IS NULL AND c.next_attempt_at <= now()
            AND r.status IN ('success', 'error', 'timeout', 'interrupted')
          ORDER BY c.next_attempt_at
          LIMIT $1::integer
          FOR UPDATE OF c SKIP LOCKED
       )
       UPDATE ${completions} c
          SET next_attempt_at = now() + $2::float8 * interval '1 millisecond',
              attempts = c.attempts + CASE WHEN c.webhook IS NOT NULL AND c.outcome IS NULL THEN 1 ELSE 0 END
         FROM due, ${runs} r
        WHERE c.run_id = due.run_id AND r.run_id = c.run_id
       RETURNING c.run_id::text AS run_id, r.thread_id, c.webhook, c.delete_thread, c.attempts, c.outcome`,
    ),
    /** $1 run id, $2 outcome, $3 error text (NULL keeps the last attempt's): the webhook is settled (delivered, failed, refused). */
    settle: statement(
      "run_completions_settle",
      `UPDATE ${completions} SET outcome = $2::text, last_error = COALESCE($3::text, last_error),
         delivered_at = CASE WHEN $2::text = 'delivered' THEN now() ELSE delivered_at END,
         next_attempt_at = now()
       WHERE run_id = $1::uuid`,
    ),
    /** $1 run id, $2 error text, $3 milliseconds until the next attempt. */
    retryLater: statement(
      "run_completions_retry",
      `UPDATE ${completions} SET last_error = $2::text, next_attempt_at = now() + $3::float8 * interval '1 millisecond' WHERE run_id = $1::uuid`,
    ),
    /** $1 run id: nothing is left to do. */
    done: statement("run_completions_done", `UPDATE ${completions} SET done_at = now() WHERE run_id = $1::uuid`),
    /** $1 run id: the row as it is (tests and `runtime.runs.completion`). */
    get: statement(
      "run_completions_get",
      `SELECT run_id::text AS run_id, webhook, delete_thread, attempts, outcome, last_error,
              delivered_at IS NOT NULL AS delivered, done_at IS NOT NULL AS done
         FROM ${completions} WHERE run_id = $1::uuid`,
    ),
  };
}
