import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";

/** A timestamptz as ISO-8601 UTC text with milliseconds. */
function iso(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Sort keys of `search` (LangGraph's `sort_by`), each a fixed column expression. */
export const THREAD_SORT_KEYS = ["thread_id", "created_at", "updated_at", "status"] as const;
/** One of THREAD_SORT_KEYS. */
export type ThreadSortKey = (typeof THREAD_SORT_KEYS)[number];

/** Which optional filters a search statement has. */
export interface ThreadSearchShape {
  metadata: boolean;
  ids: boolean;
  status: boolean;
  /** An access filter (AccessFilter) applies. */
  access: boolean;
  sortBy: ThreadSortKey;
  order: "asc" | "desc";
}

/**
 * Statements of the thread store for one schema. A thread's status is derived from its runs:
 * `busy` while one is pending or running, `interrupted` while the thread waits on a run that
 * ended at an interrupt (`waiting`), `error` when the latest finished run failed or timed out,
 * else `idle` (LangGraph Platform's thread statuses).
 */
export function threadSql(schema: string) {
  const s = quoteIdentifier(schema);
  const threads = `${s}.threads`;
  const runs = `${s}.runs`;
  const status = `(SELECT CASE
      WHEN bool_or(r.status IN ('pending', 'running')) THEN 'busy'
      WHEN bool_or(r.waiting) THEN 'interrupted'
      WHEN (array_agg(r.status ORDER BY r.created_at DESC, r.run_id DESC))[1] IN ('error', 'timeout') THEN 'error'
      ELSE 'idle' END
    FROM ${runs} r WHERE r.thread_id = t.thread_id)`;
  const columns = `t.thread_id, t.metadata, ${iso("t.created_at")} AS created_at, ${iso("t.updated_at")} AS updated_at, COALESCE(${status}, 'idle') AS status`;
  const searchCache = new Map<string, Statement>();
  return {
    /**
     * $1 thread id, $2 metadata json, $3 ttl minutes (NULL: none): inserts the thread unless it
     * exists; returns it either way with `created`.
     */
    create: statement(
      "threads_create",
      `WITH ins AS (
         INSERT INTO ${threads} (thread_id, metadata, ttl_minutes, expires_at)
         VALUES ($1::text, $2::jsonb, $3::float8, now() + $3::float8 * interval '1 minute')
         ON CONFLICT (thread_id) DO NOTHING RETURNING thread_id
       )
       SELECT ${columns}, EXISTS (SELECT 1 FROM ins) AS created FROM ${threads} t WHERE t.thread_id = $1::text
       UNION ALL
       SELECT $1::text, $2::jsonb, ${iso("now()")}, ${iso("now()")}, 'idle', true
        WHERE EXISTS (SELECT 1 FROM ins)`,
    ),
    /**
     * $1 thread id, $2 metadata json: makes sure the thread exists (with $2 as its metadata when
     * new, merged under the stored keys otherwise) and marks it updated now (its TTL restarts).
     */
    touch: statement(
      "threads_touch",
      `INSERT INTO ${threads} AS t (thread_id, metadata) VALUES ($1::text, $2::jsonb)
       ON CONFLICT (thread_id) DO UPDATE SET updated_at = now(), metadata = $2::jsonb || t.metadata,
         expires_at = now() + t.ttl_minutes * interval '1 minute'`,
    ),
    /**
     * $1 thread id, $2 metadata json, $3 access filter json: `touch` for a thread that must exist
     * already (a run created on a thread the caller named): marks it updated and merges $2 under
     * its keys only when it exists and $3 lets the caller see it. No row: not found (or hidden).
     */
    touchExisting: statement(
      "threads_touch_existing",
      `UPDATE ${threads} AS t SET updated_at = now(), metadata = $2::jsonb || t.metadata,
         expires_at = now() + t.ttl_minutes * interval '1 minute'
        WHERE t.thread_id = $1::text AND t.metadata @> $3::jsonb
       RETURNING t.thread_id`,
    ),
    /** $1 thread id, $2 access filter json (`{}`: any thread; see AccessFilter). */
    get: statement("threads_get", `SELECT ${columns} FROM ${threads} t WHERE t.thread_id = $1::text AND t.metadata @> $2::jsonb`),
    /**
     * $1 thread id, $2 metadata json merged into the stored one, $3 new ttl minutes (NULL: keep the
     * TTL), $4 access filter json; the TTL restarts.
     */
    patch: statement(
      "threads_patch",
      `UPDATE ${threads} t SET metadata = t.metadata || $2::jsonb, updated_at = now(),
              ttl_minutes = COALESCE($3::float8, t.ttl_minutes),
              expires_at = now() + COALESCE($3::float8, t.ttl_minutes) * interval '1 minute'
        WHERE t.thread_id = $1::text AND t.metadata @> $4::jsonb RETURNING ${columns}`,
    ),
    /**
     * $1 source thread id, $2 new thread id, $3 access filter json (of the source): a new thread with the source's metadata (its
     * `thread_id` key naming the new thread, as the official server's copy) and TTL; no row when
     * the source does not exist.
     */
    copy: statement(
      "threads_copy",
      `INSERT INTO ${threads} (thread_id, metadata, ttl_minutes, expires_at)
       SELECT $2::text, t.metadata || jsonb_build_object('thread_id', $2::text), t.ttl_minutes, now() + t.ttl_minutes * interval '1 minute'
         FROM ${threads} t WHERE t.thread_id = $1::text AND t.metadata @> $3::jsonb
       RETURNING thread_id`,
    ),
    /** $1 limit: ids of threads past their TTL without a pending or running run, soonest lapsed first. */
    expired: statement(
      "threads_expired",
      `SELECT t.thread_id FROM ${threads} t
        WHERE t.expires_at IS NOT NULL AND t.expires_at <= now()
          AND NOT EXISTS (SELECT 1 FROM ${runs} r WHERE r.thread_id = t.thread_id AND r.status IN ('pending', 'running'))
        ORDER BY t.expires_at LIMIT $1::integer`,
    ),
    /** $1 thread id: whether a run of it is pending or running. */
    active: statement("threads_active", `SELECT r.run_id::text AS run_id, r.status FROM ${runs} r WHERE r.thread_id = $1::text AND r.status IN ('pending', 'running') LIMIT 1`),
    /** $1 thread id: deletes the thread and its runs (their events, decisions and ledger cascade). */
    deleteThread: statement(
      "threads_delete",
      `WITH gone AS (DELETE FROM ${threads} t WHERE t.thread_id = $1::text RETURNING 1),
            gone_runs AS (DELETE FROM ${runs} r WHERE r.thread_id = $1::text RETURNING 1)
       SELECT (SELECT count(*) FROM gone)::integer AS threads, (SELECT count(*) FROM gone_runs)::integer AS runs`,
    ),
    /** $1 metadata json (null: any), $2 status (null: any), $3 access filter json: how many threads match. */
    count: statement(
      "threads_count",
      `SELECT count(*)::integer AS total FROM (SELECT t.metadata, COALESCE(${status}, 'idle') AS status FROM ${threads} t) x
        WHERE ($1::jsonb IS NULL OR x.metadata @> $1::jsonb) AND ($2::text IS NULL OR x.status = $2::text) AND x.metadata @> $3::jsonb`,
    ),
    /** Parameters in order: [metadata json] [ids text[]] [status] [access filter json] limit offset. */
    search(shape: ThreadSearchShape): Statement {
      const key = JSON.stringify(shape);
      const cached = searchCache.get(key);
      if (cached !== undefined) return cached;
      const where: string[] = [];
      let n = 0;
      const next = (): string => `$${(n += 1)}`;
      if (shape.metadata) where.push(`x.metadata @> ${next()}::jsonb`);
      if (shape.ids) where.push(`x.thread_id = ANY(${next()}::text[])`);
      if (shape.status) where.push(`x.status = ${next()}::text`);
      if (shape.access) where.push(`x.metadata @> ${next()}::jsonb`);
      const limit = next();
      const offset = next();
      const sortColumn = { thread_id: "x.thread_id", created_at: "x.c_at", updated_at: "x.u_at", status: "x.status" }[shape.sortBy];
      const order = shape.order === "asc" ? "ASC" : "DESC";
      const built = statement(
        "threads_search",
        `SELECT x.thread_id, x.metadata, x.created_at, x.updated_at, x.status
           FROM (SELECT ${columns}, t.created_at AS c_at, t.updated_at AS u_at FROM ${threads} t) x
          ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY ${sortColumn} ${order}, x.thread_id ${order}
          LIMIT ${limit}::integer OFFSET ${offset}::integer`,
      );
      searchCache.set(key, built);
      return built;
    },
  };
}

/** The statements of `threadSql` for one schema. */
export type ThreadSql = ReturnType<typeof threadSql>;
