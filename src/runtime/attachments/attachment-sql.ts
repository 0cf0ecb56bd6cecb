import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

/** Every column but the bytes, in the shape `AttachmentStore` maps to `AttachmentInfo`. */
const INFO = `id::text AS id, run_id, thread_id, tool_call_id, part, name, mime_type, size::text AS size, sha256,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** Every statement of the attachment store, for one schema (a validated identifier). */
export function attachmentSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /**
     * $1 id, $2 run id, $3 thread id, $4 tool call id, $5 part, $6 name, $7 mime type, $8 size,
     * $9 sha256, $10 bytes: inserts, or returns nothing when the call already stored this part.
     */
    insert: statement(
      "attachments_insert",
      `INSERT INTO ${s}.attachments (id, run_id, thread_id, tool_call_id, part, name, mime_type, size, sha256, bytes)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (run_id, tool_call_id, part) WHERE run_id IS NOT NULL DO NOTHING
       RETURNING ${INFO}`,
    ),
    /** $1 run id, $2 tool call id, $3 part: what that call stored. */
    byCall: statement(
      "attachments_by_call",
      `SELECT ${INFO} FROM ${s}.attachments WHERE run_id = $1 AND tool_call_id = $2 AND part = $3`,
    ),
    /** $1 id: the attachment with its bytes. */
    get: statement("attachments_get", `SELECT ${INFO}, bytes FROM ${s}.attachments WHERE id = $1::uuid`),
    /** $1 id: the attachment without its bytes. */
    info: statement("attachments_info", `SELECT ${INFO} FROM ${s}.attachments WHERE id = $1::uuid`),
    /** $1 thread id: deletes the thread's attachments; returns how many. */
    deleteForThread: statement(
      "attachments_delete_for_thread",
      `WITH gone AS (DELETE FROM ${s}.attachments WHERE thread_id = $1 RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    ),
    /** $1 run id: every attachment of the run, oldest first. */
    listForRun: statement(
      "attachments_list_for_run",
      `SELECT ${INFO} FROM ${s}.attachments WHERE run_id = $1 ORDER BY created_at, tool_call_id, part`,
    ),
  };
}
