import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";

/** Statements of `orphan-runs.ts` for one schema (a validated identifier). */
export function orphanSql(schema: string): { expireLeases: Statement } {
  const runs = `${quoteIdentifier(schema)}.runs`;
  return {
    /**
     * $1 run id, or null for every run: ends the lease of running runs now, so the run store's
     * `requeueExpired` re-queues them (or ends them: cancelled, max_attempts) like a worker's reaper.
     */
    expireLeases: statement(
      "orphans_expire_leases",
      `UPDATE ${runs} SET lease_expires_at = now() - interval '1 millisecond'
        WHERE status = 'running' AND ($1::uuid IS NULL OR run_id = $1::uuid)
        RETURNING run_id::text AS run_id`,
    ),
  };
}
