import { assistantIdFor } from "../../graphs/assistant-id.js";
import { RUNTIME_DEFAULTS, SERVER_DEFAULTS, THREAD_DEFAULTS } from "../../constants.js";
import { canonicalJson } from "../../vocabulary/canonical-json.js";
import { retryDatabaseFaults } from "../execution/backoff.js";
import type { Database, Queryable, Row } from "../../db/types.js";
import { RunConflictError, ThreadNotFoundError } from "../../errors.js";
import { checkThreadId, runInputError } from "../queue/run-record.js";
import { accessJson, type AccessFilter } from "../../vocabulary/access-filter.js";
import { THREAD_SORT_KEYS, threadSql, type ThreadSortKey, type ThreadSql } from "./thread-sql.js";

/** A thread's status, derived from its runs (LangGraph's ThreadStatus). */
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

/** A thread as stored: its metadata and times; its messages live in the checkpoints. */
export interface ThreadRecord {
  thread_id: string;
  metadata: Record<string, unknown>;
  /** ISO timestamps (UTC, millisecond precision). */
  created_at: string;
  updated_at: string;
  status: ThreadStatus;
}

/** Filters, order and page of `search` (LangGraph's `POST /threads/search`). */
export interface SearchThreadsOptions {
  /** Threads whose metadata contains this object (jsonb `@>`). */
  metadata?: Record<string, unknown> | undefined;
  ids?: string[] | undefined;
  status?: ThreadStatus | undefined;
  /** 1..500, default 10. */
  limit?: number | undefined;
  offset?: number | undefined;
  sortBy?: ThreadSortKey | undefined;
  sortOrder?: "asc" | "desc" | undefined;
  /** Only threads the caller may see (the auth handler's filter, in the same statement). */
  access?: AccessFilter | undefined;
}

const SEARCH_MAX = 500;

/** Metadata a thread gets once a run of graph `graphId` was created on it: the graph and its assistant's id. */
export function threadRunMetadata(graphId: string = SERVER_DEFAULTS.graphId): Readonly<Record<string, string>> {
  return { graph_id: graphId, assistant_id: assistantIdFor(graphId) };
}
const THREAD_STATUSES: readonly ThreadStatus[] = ["idle", "busy", "interrupted", "error"];

/**
 * The threads table (migration 0004): what `/threads` lists and searches. Runs create their
 * thread's row (`touch`), so threads started from the CLI are listed too. One statement per call.
 *
 * @example
 *   const threads = new ThreadStore(db);
 *   const thread = await threads.create({ metadata: { graph_id: "agent" } });
 *   await threads.search({ metadata: { graph_id: "agent" }, limit: 20 });
 */
export class ThreadStore {
  private readonly sql: ThreadSql;

  constructor(private readonly db: Database) {
    this.sql = threadSql(db.schema);
  }

  /**
   * Creates a thread (a new uuid unless `threadId` is given), deleted by the TTL sweep once
   * `ttlMinutes` passed without an update when given. An existing id: `ifExists` "raise"
   * (default) throws RunConflictError, "do_nothing" returns the stored thread.
   */
  async create(options: { threadId?: string | undefined; metadata?: Record<string, unknown> | undefined; ifExists?: "raise" | "do_nothing" | undefined; ttlMinutes?: number | undefined } = {}): Promise<ThreadRecord> {
    // the id is chosen once: a try after a lost connection (its first try's commit may have
    // landed, the answer lost) that finds the thread with this id and these metadata is that
    // try's own success, not "already exists" (issue 37)
    const threadId = options.threadId === undefined ? crypto.randomUUID() : checkThreadId(options.threadId);
    const metadata = checkMetadata(options.metadata);
    const ttl = checkTtl(options.ttlMinutes);
    let faulted = false;
    const row = await retryDatabaseFaults(
      async () => {
        const found = (await this.db.query(this.sql.create, [threadId, metadata, ttl])).rows[0];
        if (found === undefined) throw new Error(`thread ${threadId} was neither created nor found`);
        return found;
      },
      { maxMs: RUNTIME_DEFAULTS.answerFaultWaitMs, only: "unreachable", onFault: () => (faulted = true) },
    );
    const ownRepeat = faulted && canonicalJson(row["metadata"] ?? {}) === canonicalJson(JSON.parse(metadata) as unknown);
    if (row["created"] !== true && !ownRepeat && (options.ifExists ?? "raise") === "raise") {
      throw new RunConflictError(`thread ${threadId} already exists`, { threadId, conflict: "thread_exists" });
    }
    return threadFromRow(row);
  }

  /**
   * Makes sure the thread has a row (runs call it when they are created) and marks it updated.
   * The thread's metadata gains `threadRunMetadata(graphId)`'s keys it does not have, as LangGraph
   * servers tag a thread with the graph that ran on it (Agent Chat UI lists threads by it).
   * `metadata`: more keys a new thread gets (a stateless cron's tick: the cron's, its owner's).
   */
  async touch(threadId: string, graphId?: string, metadata: Record<string, unknown> = {}, tx?: Queryable): Promise<void> {
    await (tx ?? this.db).query(this.sql.touch, [checkThreadId(threadId), checkMetadata({ ...metadata, ...threadRunMetadata(graphId) })]);
  }

  /**
   * `touch` for a thread that must exist (one statement, in `tx` when given): ThreadNotFoundError
   * when there is none, or `access` hides it — the check a run on a named thread needs, made in
   * the run's creating transaction instead of a read before it.
   */
  async touchExisting(threadId: string, graphId: string, access: AccessFilter | undefined, tx?: Queryable): Promise<void> {
    const result = await (tx ?? this.db).query(this.sql.touchExisting, [checkThreadId(threadId), checkMetadata({ ...threadRunMetadata(graphId) }), accessJson(access)]);
    if (result.rows.length === 0) throw new ThreadNotFoundError(threadId);
  }

  /** The thread; ThreadNotFoundError when there is none, or `access` hides it. */
  async get(threadId: string, access?: AccessFilter): Promise<ThreadRecord> {
    const result = await this.db.query(this.sql.get, [checkThreadId(threadId), accessJson(access)]);
    const row = result.rows[0];
    if (row === undefined) throw new ThreadNotFoundError(threadId);
    return threadFromRow(row);
  }

  /**
   * Merges `metadata` into the thread's and restarts its TTL (`ttlMinutes` replaces it);
   * ThreadNotFoundError when there is none, or `access` hides it.
   */
  async patch(threadId: string, metadata: Record<string, unknown>, ttlMinutes?: number, access?: AccessFilter): Promise<ThreadRecord> {
    const result = await this.db.query(this.sql.patch, [checkThreadId(threadId), checkMetadata(metadata), checkTtl(ttlMinutes), accessJson(access)]);
    const row = result.rows[0];
    if (row === undefined) throw new ThreadNotFoundError(threadId);
    return threadFromRow(row);
  }

  /**
   * Deletes the thread and its runs (with their events, decisions and ledger rows). Refuses
   * (RunConflictError) while a run of it is pending or running; ThreadNotFoundError
   * when neither a thread row nor a run has this id. The caller deletes the checkpoints.
   */
  async delete(threadId: string): Promise<void> {
    checkThreadId(threadId);
    const active = (await this.db.query(this.sql.active, [threadId])).rows[0];
    if (active !== undefined) {
      throw new RunConflictError(`thread ${threadId} has an active run ${String(active["run_id"])} (${String(active["status"])}); cancel it first`, { threadId });
    }
    const row = (await this.db.query(this.sql.deleteThread, [threadId])).rows[0];
    if (Number(row?.["threads"] ?? 0) === 0 && Number(row?.["runs"] ?? 0) === 0) throw new ThreadNotFoundError(threadId);
  }

  /**
   * Inserts thread `toThread` with `fromThread`'s metadata (`thread_id` naming the copy) and TTL,
   * in `tx`; ThreadNotFoundError when `fromThread` does not exist or `access` hides it.
   */
  async copyRow(tx: Queryable, fromThread: string, toThread: string, access?: AccessFilter): Promise<void> {
    const row = (await tx.query(this.sql.copy, [checkThreadId(fromThread), checkThreadId(toThread), accessJson(access)])).rows[0];
    if (row === undefined) throw new ThreadNotFoundError(fromThread);
  }

  /** Up to `limit` threads past their TTL without an active run, soonest lapsed first. */
  async expired(limit: number): Promise<string[]> {
    return (await this.db.query(this.sql.expired, [limit])).rows.map((row) => String(row["thread_id"]));
  }

  /** The thread's pending or running run, if any. */
  async activeRun(threadId: string): Promise<{ runId: string; status: string } | undefined> {
    const row = (await this.db.query(this.sql.active, [checkThreadId(threadId)])).rows[0];
    return row === undefined ? undefined : { runId: String(row["run_id"]), status: String(row["status"]) };
  }

  /** How many threads match every given filter (LangGraph's `POST /threads/count`). */
  async count(options: Pick<SearchThreadsOptions, "metadata" | "status" | "access"> = {}): Promise<number> {
    if (options.status !== undefined && !THREAD_STATUSES.includes(options.status)) throw runInputError(`status must be one of ${THREAD_STATUSES.join(", ")}`, { field: "status" });
    const metadata = options.metadata === undefined ? null : checkMetadata(options.metadata);
    const result = await this.db.query(this.sql.count, [metadata, options.status ?? null, accessJson(options.access)]);
    return Number(result.rows[0]?.["total"] ?? 0);
  }

  /** Threads matching every given filter, newest update first unless sorted otherwise. */
  async search(options: SearchThreadsOptions = {}): Promise<ThreadRecord[]> {
    const limit = options.limit ?? 10;
    const offset = options.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX) throw runInputError(`limit must be an integer from 1 to ${SEARCH_MAX}`, { field: "limit" });
    if (!Number.isInteger(offset) || offset < 0) throw runInputError("offset must be a non-negative integer", { field: "offset" });
    if (options.status !== undefined && !THREAD_STATUSES.includes(options.status)) throw runInputError(`status must be one of ${THREAD_STATUSES.join(", ")}`, { field: "status" });
    const sortBy = options.sortBy ?? "updated_at";
    if (!THREAD_SORT_KEYS.includes(sortBy)) throw runInputError(`sort_by must be one of ${THREAD_SORT_KEYS.join(", ")}`, { field: "sort_by" });
    const values: unknown[] = [];
    if (options.metadata !== undefined) values.push(checkMetadata(options.metadata));
    if (options.ids !== undefined) values.push(options.ids.map((id) => checkThreadId(id)));
    if (options.status !== undefined) values.push(options.status);
    if (options.access !== undefined) values.push(accessJson(options.access));
    values.push(limit, offset);
    const shape = { metadata: options.metadata !== undefined, ids: options.ids !== undefined, status: options.status !== undefined, access: options.access !== undefined, sortBy, order: options.sortOrder ?? "desc" } as const;
    const result = await this.db.query(this.sql.search(shape), values);
    return result.rows.map(threadFromRow);
  }
}

/** A TTL in minutes (LangGraph's `ttl.ttl`): a positive finite number up to THREAD_DEFAULTS.maxTtlMinutes; null when not given. */
function checkTtl(ttlMinutes: number | undefined): number | null {
  if (ttlMinutes === undefined) return null;
  if (typeof ttlMinutes !== "number" || !Number.isFinite(ttlMinutes) || ttlMinutes <= 0 || ttlMinutes > THREAD_DEFAULTS.maxTtlMinutes) {
    throw runInputError(`ttl must be a number of minutes above 0 and at most ${THREAD_DEFAULTS.maxTtlMinutes}`, { field: "ttl" });
  }
  return ttlMinutes;
}

function checkMetadata(metadata: Record<string, unknown> | undefined): string {
  if (metadata === undefined) return "{}";
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) throw runInputError("metadata must be an object", { field: "metadata" });
  const json = JSON.stringify(metadata);
  if (json.includes("\\u0000")) throw runInputError("metadata must be JSON without NUL characters", { field: "metadata" });
  return json;
}

function threadFromRow(row: Row): ThreadRecord {
  return {
    thread_id: String(row["thread_id"]),
    metadata: (row["metadata"] as Record<string, unknown> | null) ?? {},
    created_at: String(row["created_at"]),
    updated_at: String(row["updated_at"]),
    status: row["status"] as ThreadStatus,
  };
}
