import { randomUUID } from "node:crypto";
import { accessJson, type AccessFilter } from "../../vocabulary/access-filter.js";
import { CRON_DEFAULTS } from "../../constants.js";
import type { Database, Queryable, Row } from "../../db/types.js";
import { DevmindError } from "../../errors.js";
import { nextTick, type CronSchedule } from "./cron-schedule.js";
import { cronSql, CRON_SORT_COLUMNS, type CronSortBy, type CronSql } from "./cron-sql.js";
import { isUuid, runInputError, serializeJson } from "../queue/run-record.js";

/** What every tick of a cron creates: the fields of a run create. */
export interface CronPayload {
  input: unknown;
  config?: Record<string, unknown>;
  context?: unknown;
  /** What a tick does when its thread has an active run: "reject" skips the tick, "enqueue" queues behind it. */
  multitask_strategy?: "reject" | "enqueue";
  /** Each tick's run calls this URL when it ends. */
  webhook?: string;
  /** Stateless crons: "delete" deletes each tick's thread after its run. */
  on_run_completed?: "keep" | "delete";
}

/** A cron as `runtime.crons` returns it: the LangGraph SDK's `Cron`, plus when it last ran. */
export interface CronRecord {
  cron_id: string;
  /** The graph each tick runs. */
  assistant_id: string;
  /** The thread every tick runs on; null: each tick runs on a new thread. */
  thread_id: string | null;
  schedule: string;
  /** IANA time zone of the schedule; null: UTC. */
  timezone: string | null;
  /** ISO time after which the cron has no ticks; null: none. */
  end_time: string | null;
  payload: CronPayload;
  metadata: Record<string, unknown>;
  user_id: string | null;
  enabled: boolean;
  /** The next tick (ISO); null when none is left. */
  next_run_date: string | null;
  /** When the last tick's run was created, and its id. */
  last_run_date: string | null;
  last_run_id: string | null;
  /** Stateless crons: whether each tick's thread is kept or deleted after its run; null for a thread's cron. */
  on_run_completed: "keep" | "delete" | null;
  created_at: string;
  updated_at: string;
}

/** Filters, page and order of `search` (the SDK's `client.crons.search`). */
export interface CronSearchOptions {
  assistantId?: string | undefined;
  threadId?: string | undefined;
  enabled?: boolean | undefined;
  /** Crons whose metadata contains every pair. */
  metadata?: Record<string, unknown> | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  sortBy?: CronSortBy | undefined;
  sortOrder?: "asc" | "desc" | undefined;
  /** Only crons the caller may see (the auth handler's filter over their metadata, in the same statement). */
  access?: AccessFilter | undefined;
}

/** A cron claimed by the scheduler, locked in its transaction. */
export interface DueCron {
  cron: CronRecord;
  schedule: CronSchedule;
  /** The database's clock when it was claimed. */
  now: Date;
}

/** What a scheduler pass did to one due cron. */
export interface CronTick {
  cron_id: string;
  /** The tick's run; null when none was created (past end_time, or the thread was busy under "reject"). */
  run_id: string | null;
  next_run_date: string | null;
}

/** The cron's own "not found" (HTTP 404). */
export function cronNotFound(cronId: string): DevmindError {
  return new DevmindError("NOT_FOUND", `no cron ${JSON.stringify(String(cronId).slice(0, 100))}`, { details: { cronId: String(cronId).slice(0, 100) } });
}

function cronFromRow(row: Row): CronRecord {
  const threadId = (row["thread_id"] as string | null) ?? null;
  return {
    cron_id: String(row["cron_id"]),
    assistant_id: String(row["assistant_id"]),
    thread_id: threadId,
    schedule: String(row["schedule"]),
    timezone: (row["timezone"] as string | null) ?? null,
    end_time: (row["end_time"] as string | null) ?? null,
    payload: row["payload"] as CronPayload,
    metadata: (row["metadata"] as Record<string, unknown>) ?? {},
    user_id: (row["user_id"] as string | null) ?? null,
    enabled: row["enabled"] === true,
    next_run_date: (row["next_run_at"] as string | null) ?? null,
    last_run_date: (row["last_run_at"] as string | null) ?? null,
    last_run_id: (row["last_run_id"] as string | null) ?? null,
    on_run_completed: threadId === null ? ((row["payload"] as CronPayload).on_run_completed ?? "keep") : null,
    created_at: String(row["created_at"]),
    updated_at: String(row["updated_at"]),
  };
}

function endDate(cron: { end_time: string | null }): Date | null {
  return cron.end_time === null ? null : new Date(cron.end_time);
}

/**
 * The storage of crons: records, search, and the scheduler's claim. Inputs reach it validated
 * (`runtime.crons` checks schedules, time zones and payloads); every statement has `$n`
 * parameters only. `claimTicks` is the heart of the scheduler: due crons are locked with
 * `FOR UPDATE SKIP LOCKED`, each tick's run is created and the cron moved to its next future
 * tick in that one transaction, so any number of workers create exactly one run per due tick.
 *
 * @example
 *   const crons = new CronStore(db);
 *   const cron = await crons.create({ assistantId: "agent", threadId: null, schedule: { schedule: "0 9 * * 1-5", timezone: "Europe/Paris" }, payload: { input }, metadata: {}, enabled: true, endTime: null });
 */
export class CronStore {
  private readonly sql: CronSql;

  constructor(private readonly db: Database) {
    this.sql = cronSql(db.schema);
  }

  /** Stores a cron; its first tick is the first after the database's `now()` (null past `endTime`). */
  async create(options: {
    assistantId: string;
    graphId: string;
    threadId: string | null;
    schedule: CronSchedule;
    payload: CronPayload;
    metadata: Record<string, unknown>;
    enabled: boolean;
    endTime: Date | null;
  }): Promise<CronRecord> {
    const payload = serializeJson(options.payload, "payload");
    const metadata = serializeJson(options.metadata, "metadata");
    const now = new Date(String((await this.db.query(this.sql.now)).rows[0]?.["db_now"]));
    const next = nextTick(options.schedule, now, options.endTime);
    const result = await this.db.query(this.sql.insert, [
      randomUUID(),
      options.assistantId,
      options.graphId,
      options.threadId,
      options.schedule.schedule,
      options.schedule.timezone,
      payload,
      metadata,
      options.enabled,
      options.endTime?.toISOString() ?? null,
      next?.toISOString() ?? null,
    ]);
    return cronFromRow(result.rows[0] as Row);
  }

  /** The cron; NOT_FOUND (404) for an unknown id or one that is not a uuid. */
  async get(cronId: string, access?: AccessFilter): Promise<CronRecord> {
    if (!isUuid(cronId)) throw cronNotFound(cronId);
    const row = (await this.db.query(this.sql.get, [cronId, accessJson(access)])).rows[0];
    if (row === undefined) throw cronNotFound(cronId);
    return cronFromRow(row);
  }

  /** Crons matching every filter given, in `sortBy` order (default `created_at` desc), one page. */
  async search(options: CronSearchOptions = {}): Promise<CronRecord[]> {
    const sortBy = options.sortBy ?? "created_at";
    if (!(sortBy in CRON_SORT_COLUMNS)) throw runInputError(`sort_by must be one of ${Object.keys(CRON_SORT_COLUMNS).join(", ")}`, { field: "sort_by" });
    const order = options.sortOrder ?? "desc";
    if (order !== "asc" && order !== "desc") throw runInputError('sort_order must be "asc" or "desc"', { field: "sort_order" });
    const limit = options.limit ?? CRON_DEFAULTS.searchLimit;
    const offset = options.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > CRON_DEFAULTS.maxSearchLimit) {
      throw runInputError(`limit must be an integer from 1 to ${CRON_DEFAULTS.maxSearchLimit}`, { field: "limit" });
    }
    if (!Number.isInteger(offset) || offset < 0) throw runInputError("offset must be a non-negative integer", { field: "offset" });
    const result = await this.db.query(this.sql.search(sortBy, order), [...this.filters(options), limit, offset]);
    return result.rows.map(cronFromRow);
  }

  /** How many crons match the filters of `search`. */
  async count(options: Pick<CronSearchOptions, "assistantId" | "threadId" | "enabled" | "metadata" | "access"> = {}): Promise<number> {
    const result = await this.db.query(this.sql.count, this.filters(options));
    return Number(result.rows[0]?.["count"] ?? 0);
  }

  /**
   * Changes a cron under its row lock. `change` gets the current record and the database's
   * clock and returns the new fields; when the schedule, time zone, end time or enabled flag
   * changed, the next tick is computed again from now.
   */
  async update(
    cronId: string,
    change: (current: CronRecord) => { schedule: CronSchedule; payload: CronPayload; metadata: Record<string, unknown>; enabled: boolean; endTime: Date | null },
    access?: AccessFilter,
  ): Promise<CronRecord> {
    if (!isUuid(cronId)) throw cronNotFound(cronId);
    return this.db.transaction(async (tx) => {
      const row = (await tx.query(this.sql.getForUpdate, [cronId, accessJson(access)])).rows[0];
      if (row === undefined) throw cronNotFound(cronId);
      const current = cronFromRow(row);
      const next = change(current);
      const payload = serializeJson(next.payload, "payload");
      const metadata = serializeJson(next.metadata, "metadata");
      const endTime = next.endTime?.toISOString() ?? null;
      const rescheduled =
        next.schedule.schedule !== current.schedule || next.schedule.timezone !== current.timezone || endTime !== current.end_time || (next.enabled && !current.enabled);
      const nextRun = rescheduled ? (nextTick(next.schedule, new Date(String(row["db_now"])), next.endTime)?.toISOString() ?? null) : current.next_run_date;
      const updated = await tx.query(this.sql.update, [cronId, next.schedule.schedule, next.schedule.timezone, payload, metadata, next.enabled, endTime, nextRun]);
      return cronFromRow(updated.rows[0] as Row);
    });
  }

  /** Deletes the cron (its past runs stay); NOT_FOUND when there is none. */
  async delete(cronId: string, access?: AccessFilter): Promise<void> {
    if (!isUuid(cronId)) throw cronNotFound(cronId);
    const result = await this.db.query(this.sql.delete, [cronId, accessJson(access)]);
    if (result.rows.length === 0) throw cronNotFound(cronId);
  }

  /**
   * One scheduler transaction: locks up to `limit` due crons of `graphIds` (skipping those
   * another worker holds), calls `createRun` for each whose tick is not past its end time, and
   * moves each to its first tick after the database's now (missed ticks are not replayed).
   * `createRun` runs in the same transaction and returns the run id, or null when it created
   * none; if anything throws, nothing of the pass is kept and the crons stay due.
   */
  async claimTicks(graphIds: readonly string[], limit: number, createRun: (tx: Queryable, due: DueCron) => Promise<string | null>): Promise<CronTick[]> {
    if (graphIds.length === 0) return [];
    return this.db.transaction(async (tx) => {
      const rows = (await tx.query(this.sql.claimDue, [[...graphIds], limit])).rows;
      const ticks: CronTick[] = [];
      for (const row of rows) {
        const cron = cronFromRow(row);
        const now = new Date(String(row["db_now"]));
        const schedule = { schedule: cron.schedule, timezone: cron.timezone };
        const end = endDate(cron);
        const tickAt = new Date(cron.next_run_date as string);
        const runId = end !== null && tickAt.getTime() > end.getTime() ? null : await createRun(tx, { cron, schedule, now });
        const next = nextTick(schedule, now, end)?.toISOString() ?? null;
        await tx.query(this.sql.advance, [cron.cron_id, next, runId]);
        ticks.push({ cron_id: cron.cron_id, run_id: runId, next_run_date: next });
      }
      return ticks;
    });
  }

  private filters(options: Pick<CronSearchOptions, "assistantId" | "threadId" | "enabled" | "metadata" | "access">): unknown[] {
    const metadata = options.metadata === undefined || options.metadata === null ? null : serializeJson(options.metadata, "metadata");
    return [options.assistantId ?? null, options.threadId ?? null, options.enabled ?? null, metadata, accessJson(options.access)];
  }
}
