import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";

/**
 * The queue gauges in one statement, by graph: pending runs and the oldest one's age, running
 * runs, and threads waiting at an interrupt and the longest wait (seconds). Reads the partial
 * indexes of pending, running and waiting runs only (no scan of ended runs).
 */
export function queueSql(schema: string): { queue: Statement } {
  const runs = `${quoteIdentifier(schema)}.runs`;
  return {
    queue: statement(
      "metrics_queue",
      `SELECT graph_id,
              count(*) FILTER (WHERE status = 'pending')::int AS pending,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE status = 'pending')), 0)::float8 AS oldest_pending_s,
              count(*) FILTER (WHERE status = 'running')::int AS running,
              count(*) FILTER (WHERE waiting)::int AS waiting,
              COALESCE(EXTRACT(EPOCH FROM now() - min(COALESCE(finished_at, updated_at)) FILTER (WHERE waiting)), 0)::float8 AS oldest_waiting_s
         FROM (SELECT graph_id, status, created_at, waiting, finished_at, updated_at FROM ${runs} WHERE status = 'pending'
               UNION ALL SELECT graph_id, status, created_at, waiting, finished_at, updated_at FROM ${runs} WHERE status = 'running'
               UNION ALL SELECT graph_id, status, created_at, waiting, finished_at, updated_at FROM ${runs} WHERE waiting) AS open
        GROUP BY graph_id`,
    ),
  };
}
