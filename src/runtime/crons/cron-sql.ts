import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";

/** A timestamptz as ISO-8601 UTC text with milliseconds, the format of `Date.toISOString()`. */
function iso(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The columns `cronFromRow` reads, from the crons row aliased `c`. */
const CRON_COLUMNS = `c.cron_id::text AS cron_id, c.assistant_id, c.graph_id, c.thread_id, c.schedule, c.timezone,
  c.payload, c.metadata, c.user_id, c.enabled, ${iso("c.end_time")} AS end_time, ${iso("c.next_run_at")} AS next_run_at,
  ${iso("c.last_run_at")} AS last_run_at, c.last_run_id::text AS last_run_id,
  ${iso("c.created_at")} AS created_at, ${iso("c.updated_at")} AS updated_at`;

/** What `search` may sort by (the SDK's CronSortBy), mapped to columns. */
export const CRON_SORT_COLUMNS = {
  cron_id: "c.cron_id",
  assistant_id: "c.assistant_id",
  thread_id: "c.thread_id",
  created_at: "c.created_at",
  updated_at: "c.updated_at",
  next_run_date: "c.next_run_at",
} as const;
export type CronSortBy = keyof typeof CRON_SORT_COLUMNS;

/**
 * The filters of `search` and `count`: `$1` assistant id, `$2` thread id, `$3` enabled, `$4`
 * metadata containment (null skips one), `$5` the caller's access filter (`{}`: any; AccessFilter).
 */
const FILTERS = `($1::text IS NULL OR c.assistant_id = $1::text)
  AND ($2::text IS NULL OR c.thread_id = $2::text)
  AND ($3::boolean IS NULL OR c.enabled = $3::boolean)
  AND ($4::jsonb IS NULL OR c.metadata @> $4::jsonb)
  AND c.metadata @> $5::jsonb`;

/**
 * Every statement of the cron store for one schema (a validated identifier). The scheduler's
 * `claimDue` locks due crons with SKIP LOCKED, so concurrent workers each take different crons,
 * and `advance` moves a claimed cron to its next tick in the same transaction as the tick's run.
 */
export function cronSql(schema: string) {
  const crons = `${quoteIdentifier(schema)}.crons`;
  const searchCache = new Map<string, Statement>();
  return {
    /** `$1 id, $2 assistant, $3 graph, $4 thread, $5 schedule, $6 timezone, $7 payload, $8 metadata, $9 enabled, $10 end_time, $11 next_run_at`. */
    insert: statement(
      "crons_insert",
      `INSERT INTO ${crons} AS c (cron_id, assistant_id, graph_id, thread_id, schedule, timezone, payload, metadata, enabled, end_time, next_run_at)
       VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10::timestamptz, $11::timestamptz)
       RETURNING ${CRON_COLUMNS}`,
    ),
    get: statement("crons_get", `SELECT ${CRON_COLUMNS} FROM ${crons} c WHERE c.cron_id = $1::uuid AND c.metadata @> $2::jsonb`),
    /** The cron locked for an update (`$1` id), with the database's clock. */
    getForUpdate: statement("crons_get_for_update", `SELECT ${CRON_COLUMNS}, ${iso("now()")} AS db_now FROM ${crons} c WHERE c.cron_id = $1::uuid AND c.metadata @> $2::jsonb FOR UPDATE`),
    /** `$1 id, $2 schedule, $3 timezone, $4 payload, $5 metadata, $6 enabled, $7 end_time, $8 next_run_at`. */
    update: statement(
      "crons_update",
      `UPDATE ${crons} AS c SET schedule = $2, timezone = $3, payload = $4::jsonb, metadata = $5::jsonb, enabled = $6,
         end_time = $7::timestamptz, next_run_at = $8::timestamptz, updated_at = now()
       WHERE c.cron_id = $1::uuid RETURNING ${CRON_COLUMNS}`,
    ),
    delete: statement("crons_delete", `DELETE FROM ${crons} c WHERE c.cron_id = $1::uuid AND c.metadata @> $2::jsonb RETURNING c.cron_id::text AS cron_id`),
    count: statement("crons_count", `SELECT count(*)::integer AS count FROM ${crons} c WHERE ${FILTERS}`),
    /** `search` sorted by an allow-listed column; `$6` limit, `$7` offset. */
    search(sortBy: CronSortBy, order: "asc" | "desc"): Statement {
      const key = `${sortBy}:${order}`;
      let built = searchCache.get(key);
      if (built === undefined) {
        const direction = order === "asc" ? "ASC" : "DESC";
        built = statement(
          `crons_search_${sortBy}_${order}`,
          `SELECT ${CRON_COLUMNS} FROM ${crons} c WHERE ${FILTERS}
           ORDER BY ${CRON_SORT_COLUMNS[sortBy]} ${direction} NULLS LAST, c.cron_id ${direction} LIMIT $6::integer OFFSET $7::integer`,
        );
        searchCache.set(key, built);
      }
      return built;
    },
    /**
     * Locks up to `$2` enabled crons due now of the graphs `$1` (the worker's loaded graphs),
     * oldest tick first, skipping crons another worker holds; with the database's clock.
     */
    claimDue: statement(
      "crons_claim_due",
      `SELECT ${CRON_COLUMNS}, ${iso("now()")} AS db_now FROM ${crons} c
       WHERE c.enabled AND c.next_run_at <= now() AND c.graph_id = ANY($1::text[])
       ORDER BY c.next_run_at, c.cron_id LIMIT $2::integer FOR UPDATE SKIP LOCKED`,
    ),
    /** A claimed cron to its next tick: `$1 id, $2 next_run_at (null: none left), $3 the tick's run id (null: no run)`. */
    advance: statement(
      "crons_advance",
      `UPDATE ${crons} AS c SET next_run_at = $2::timestamptz,
         last_run_at = CASE WHEN $3::uuid IS NULL THEN c.last_run_at ELSE now() END,
         last_run_id = COALESCE($3::uuid, c.last_run_id)
       WHERE c.cron_id = $1::uuid`,
    ),
    /** The database's clock, for the first tick of a new cron. */
    now: statement("crons_now", `SELECT ${iso("now()")} AS db_now`),
  };
}

export type CronSql = ReturnType<typeof cronSql>;
