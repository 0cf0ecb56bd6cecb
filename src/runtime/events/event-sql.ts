import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import { fenceCte } from "../queue/fence.js";
import { FINAL_EVENT_TYPES } from "../queue/status.js";

/**
 * The notification channel of run events: every append notifies it with the run id as payload,
 * in the same statement, so followers in any process wake when the append commits.
 */
export const RUN_EVENTS_CHANNEL = "devmind_run_events";

/**
 * The notification channel of run ends: an append holding a run's final event (FINAL_EVENT_TYPES)
 * also notifies this one, with the run id as payload, so whoever waits for the run's end
 * (`runs.wait`, `join`) looks at the run once, not at every event.
 */
export const RUN_ENDS_CHANNEL = "devmind_run_ends";

/**
 * The notification channel of run completions (webhooks, thread deletes after a run): the final
 * event of a run that has a `run_completions` row notifies it, and so does the release of a held
 * row, so the completion loop handles it at once instead of polling for it.
 */
export const RUN_COMPLETIONS_CHANNEL = "devmind_run_completions";

const FINAL_TYPES_SQL = FINAL_EVENT_TYPES.map((type) => `'${type}'`).join(", ");

function appendText(schema: string, fenced: boolean): string {
  const s = quoteIdentifier(schema);
  const key = fenced ? "$4" : "$3";
  // seq = current max + ordinality: two appenders racing compute the same seqs and one fails on
  // the primary key; the store retries it with a fresh snapshot. A batch key already stored (a
  // retry whose first try committed, its answer lost) stores nothing and returns the first try's rows
  return `WITH ${fenced ? `${fenceCte(schema, 1, 3)},` : ""}
       run AS (
         SELECT run_id, thread_id FROM ${s}.runs
          WHERE run_id = $1::uuid ${fenced ? "AND EXISTS (SELECT 1 FROM fence)" : ""}
       ),
       prior AS (
         SELECT seq, type, at, data FROM ${s}.run_events
          WHERE run_id = $1::uuid AND ${key}::uuid IS NOT NULL AND batch_key = ${key}::uuid
       ),
       base AS (SELECT COALESCE(max(seq), 0) AS seq FROM ${s}.run_events WHERE run_id = $1::uuid),
       ins AS (
         INSERT INTO ${s}.run_events (run_id, seq, type, data, batch_key)
         SELECT run.run_id, base.seq + e.ord, e.value ->> 'type', COALESCE(e.value -> 'data', '{}'::jsonb), ${key}::uuid
           FROM run CROSS JOIN base CROSS JOIN jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, ord)
          WHERE NOT EXISTS (SELECT 1 FROM prior)
         RETURNING seq, type, at, data
       )
       SELECT run.thread_id, stored.seq, stored.type, stored.at, stored.data
         FROM (SELECT * FROM ins UNION ALL SELECT * FROM prior) AS stored CROSS JOIN run
        CROSS JOIN (SELECT pg_notify('${RUN_EVENTS_CHANNEL}', $1::uuid::text)) AS notified
         LEFT JOIN (SELECT pg_notify('${RUN_ENDS_CHANNEL}', $1::uuid::text) AS ended,
                           CASE WHEN EXISTS (SELECT 1 FROM ${s}.run_completions c WHERE c.run_id = $1::uuid)
                                THEN pg_notify('${RUN_COMPLETIONS_CHANNEL}', $1::uuid::text) END AS completing
                     WHERE EXISTS (SELECT 1 FROM run) AND EXISTS (SELECT 1 FROM jsonb_array_elements($2::jsonb) AS f(value) WHERE f.value ->> 'type' IN (${FINAL_TYPES_SQL}))) AS ended ON true
        ORDER BY stored.seq`;
}

/** Every statement of the event store, for one schema (a validated identifier). */
export function eventSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /**
     * $1 run id, $2 jsonb array of {type, data}, $3 batch key (uuid or null): appends them after
     * the run's last seq, stamps `at = now()`, notifies RUN_EVENTS_CHANNEL; returns the stored rows
     * (none if no such run). A batch key stored before: nothing is appended, its rows are returned.
     */
    append: statement("events_append", appendText(schema, false)),
    /** Like `append`, fenced: $3 lease epoch, $4 batch key. Writes nothing unless the fence holds. */
    appendFenced: statement("events_append_fenced", appendText(schema, true)),
    /**
     * $1 run id, $2 after seq, $3 limit (null: all). One row with null seq for a run without
     * events past $2; no row at all for an unknown run.
     */
    read: statement(
      "events_read",
      `SELECT r.thread_id, e.seq, e.type, e.at, e.data
         FROM ${s}.runs r
         LEFT JOIN LATERAL (
           SELECT seq, type, at, data FROM ${s}.run_events
            WHERE run_id = r.run_id AND seq > $2::integer
            ORDER BY seq
            LIMIT $3::bigint
         ) AS e ON true
        WHERE r.run_id = $1::uuid
        ORDER BY e.seq`,
    ),
    /** $1 run id: the run's last seq (0 without events); no row for an unknown run. */
    lastSeq: statement(
      "events_last_seq",
      `SELECT (SELECT COALESCE(max(e.seq), 0) FROM ${s}.run_events e WHERE e.run_id = r.run_id)::integer AS seq
         FROM ${s}.runs r WHERE r.run_id = $1::uuid`,
    ),
  };
}

/** Statements of `eventSql`. */
export type EventSql = ReturnType<typeof eventSql>;
