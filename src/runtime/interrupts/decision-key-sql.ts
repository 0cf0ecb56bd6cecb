import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

const COLUMNS = `k.run_id::text AS run_id, k.decision_key, k.request_digest, k.principal, k.next_run_id::text AS next_run_id,
  to_char(k.decided_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS decided_at`;

/** Every statement of the decision keys (migration 0017's `decision_keys`), for one schema. */
export function decisionKeySql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /** $1 run id, $2 key: the answer stored under this key, if any. */
    find: statement("decision_keys_find", `SELECT ${COLUMNS} FROM ${s}.decision_keys k WHERE k.run_id = $1::uuid AND k.decision_key = $2`),
    /**
     * $1 run id, $2 key, $3 request digest, $4 principal, $5 the run the answer created (or null).
     * One row when stored; none when the key is taken (a concurrent repeat committed first).
     */
    insert: statement(
      "decision_keys_insert",
      `INSERT INTO ${s}.decision_keys AS k (run_id, decision_key, request_digest, principal, next_run_id)
       VALUES ($1::uuid, $2, $3, $4, $5::uuid)
       ON CONFLICT (run_id, decision_key) DO NOTHING
       RETURNING ${COLUMNS}`,
    ),
  };
}
