import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

/** `owner` (a lease owner, `PROCESS:…`) belongs to the process `process` of live_processes. */
function ownedBy(owner: string, process: string): string {
  return `left(${owner}, length(${process}) + 1) = ${process} || ':'`;
}

/** The advisory locks of the namespace $1 held now in this database (session-level: a live process's). */
const HELD = `SELECT l.objid::bigint AS key FROM pg_catalog.pg_locks l
   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = $1::bigint::oid
     AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database())`;

/** Statements of crash detection (`process-liveness.ts`) for one schema (a validated identifier). */
export function livenessSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /** $1 process id, $2 lock key (held by the caller): forgets a dead process's row with that key. */
    forgetKey: statement("liveness_forget_key", `DELETE FROM ${s}.live_processes WHERE lock_key = $2::integer AND process_id <> $1::text`),
    /** $1 process id, $2 lock key: this process is live while it holds lock ($namespace, $2). */
    register: statement(
      "liveness_register",
      `INSERT INTO ${s}.live_processes (process_id, lock_key) VALUES ($1::text, $2::integer)
       ON CONFLICT (process_id) DO UPDATE SET lock_key = EXCLUDED.lock_key, started_at = now()`,
    ),
    /** $1 process id: this process leaves (a clean shutdown). */
    unregister: statement("liveness_unregister", `DELETE FROM ${s}.live_processes WHERE process_id = $1::text`),
    /**
     * $1 namespace, $2 the asking process's id (never itself: its own lock may be between two
     * connections): every running run whose owner is a registered process whose lock is free (the
     * server freed it: the process died) gets its lease ended now, for `requeueExpired`; rows of
     * gone processes that own no running run are forgotten. Returns the runs with their owners.
     */
    expireGoneOwners: statement(
      "liveness_expire_gone",
      `WITH held AS (${HELD}),
       gone AS (
         SELECT p.process_id FROM ${s}.live_processes p
          WHERE p.lock_key::bigint NOT IN (SELECT key FROM held) AND p.process_id <> $2::text
       ),
       orphaned AS (
         SELECT r.run_id, r.lease_owner FROM ${s}.runs r JOIN gone g ON ${ownedBy("r.lease_owner", "g.process_id")}
          WHERE r.status = 'running' AND r.lease_expires_at >= now()
            FOR UPDATE OF r SKIP LOCKED
       ),
       expired AS (
         UPDATE ${s}.runs AS r SET lease_expires_at = now() - interval '1 millisecond'
           FROM orphaned o WHERE r.run_id = o.run_id
         RETURNING r.run_id::text AS run_id, o.lease_owner AS owner
       ),
       forgotten AS (
         DELETE FROM ${s}.live_processes p USING gone g
          WHERE p.process_id = g.process_id
            AND NOT EXISTS (SELECT 1 FROM ${s}.runs r WHERE r.status = 'running' AND ${ownedBy("r.lease_owner", "g.process_id")})
       )
       SELECT run_id, owner FROM expired ORDER BY run_id`,
    ),
    /**
     * $1 namespace, $2 this process's id: the running runs of other processes, each with its
     * owner, lease expiry (ISO text, database clock), and whether the owner is a registered
     * process (`tracked`) whose lock is free (`gone`).
     */
    running: statement(
      "liveness_running",
      `WITH held AS (${HELD})
       SELECT r.run_id::text AS run_id, r.lease_owner AS owner,
              to_char(r.lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS lease_expires_at,
              p.process_id IS NOT NULL AS tracked,
              p.process_id IS NOT NULL AND p.lock_key::bigint NOT IN (SELECT key FROM held) AS gone
         FROM ${s}.runs r
         LEFT JOIN ${s}.live_processes p ON ${ownedBy("r.lease_owner", "p.process_id")}
        WHERE r.status = 'running' AND NOT (${ownedBy("r.lease_owner", "$2::text")})
        ORDER BY r.lease_expires_at, r.run_id`,
    ),
  };
}
