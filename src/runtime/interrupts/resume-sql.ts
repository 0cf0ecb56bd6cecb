import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

const COLUMNS = `u.run_id::text AS run_id, u.resume_id::text AS resume_id, u.interrupt_ids, u.command, u.value_digest, u.principal, u.reason,
  to_char(u.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS decided_at,
  to_char(u.consumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS consumed_at`;

/** Every statement of the resume store (migration 0006's `run_resumes`), for one schema. */
export function resumeSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /**
     * $1 run id, $2 resume id, $3 interrupt ids, $4 command json, $5 digest, $6 principal, $7 reason.
     * Stores the resume while the run is what its thread waits on (`waiting`: the value answers
     * its interrupts, and the run that resumes it reads it there) or still pending (a run created
     * with a Command's update / goto). One row when stored; none otherwise.
     */
    record: statement(
      "resumes_record",
      `WITH target AS (
         SELECT r.run_id FROM ${s}.runs r WHERE r.run_id = $1::uuid AND (r.waiting OR r.status = 'pending') FOR UPDATE
       )
       INSERT INTO ${s}.run_resumes AS u (run_id, resume_id, interrupt_ids, command, value_digest, principal, reason)
       SELECT t.run_id, $2::uuid, $3::text[], $4::jsonb, $5::text, $6::text, $7::text FROM target t
       RETURNING ${COLUMNS}`,
    ),
    /** $1 run id: resumes not used up yet (given since the run last paused), oldest first. */
    open: statement(
      "resumes_open",
      `SELECT ${COLUMNS} FROM ${s}.run_resumes u WHERE u.run_id = $1::uuid AND u.consumed_at IS NULL ORDER BY u.decided_at, u.resume_id`,
    ),
    /** $1 run id: every resume of the run, oldest first (the audit trail). */
    list: statement(
      "resumes_list",
      `SELECT ${COLUMNS} FROM ${s}.run_resumes u WHERE u.run_id = $1::uuid ORDER BY u.decided_at, u.resume_id`,
    ),
  };
}
