import { sleep } from "../../sleep.js";
import { withCommit, type Database, type Queryable, type Row } from "../../db/types.js";
import { retryDatabaseFaults } from "../execution/backoff.js";
import { DevmindError, RunNotFoundError } from "../../errors.js";
import { RUN_EVENTS_CHANNEL, eventSql, type EventSql } from "./event-sql.js";
import { checkFence, leaseLost, type Fence } from "../queue/fence.js";
import { checkRunId } from "../queue/run-record.js";
import { createRedactor, type Redactor } from "../../secret-redaction.js";
import { isRunEventType, isStoredRunEventType, type RunEventData, type StoredRunEventData } from "./run-events.js";

/** The envelope of a stored run event: its run, thread, per-run `seq` and `at` (an ISO timestamp). */
export type RunEventEnvelope = {
  run_id: string;
  thread_id: string;
  seq: number;
  at: string;
};

/**
 * A stored run event (CONTRACT section 6): the envelope `{run_id, thread_id, seq, at}` and one
 * member of the union, `type` and its own fields. `switch (event.type)` narrows the fields.
 * (devmind never stores `model.delta` or `graph.stopped`: `NewRunEvent` leaves them out.)
 */
export type RunEvent = RunEventEnvelope & RunEventData;

/**
 * A stored event whose type this version does not know (written by a newer version sharing the
 * database): kept readable as it was stored (same envelope, same JSON through the CLI and HTTP),
 * typed loosely and apart from `RunEvent`, so it never weakens the narrowing of the known types.
 * Code that reads fields tells the two apart with `isRunEvent`.
 */
export type ForeignRunEvent = RunEventEnvelope & { type: string; [field: string]: unknown };

/** What reading a run's events yields: known events, and (rarely) foreign ones. */
export type StoredRunEvent = RunEvent | ForeignRunEvent;

/**
 * An event to append: a member of the stored union, `type` and its own fields (the envelope is
 * the store's). Only known types with their exact fields can be written.
 */
export type NewRunEvent = StoredRunEventData;

/** Which stored events `read` returns: those with seq > `after` (default 0), at most `limit`. */
export interface ReadEventsOptions {
  after?: number;
  limit?: number;
}

/** How `follow` runs and when it ends. */
export interface FollowEventsOptions {
  /** Start after this seq (default 0: from the first event). */
  after?: number;
  /** Ends the iteration (quietly) when aborted. */
  signal?: AbortSignal;
  /**
   * Ends the iteration once it returns true and every event stored by then was yielded; asked
   * before each look at the table (e.g. "is the run terminal?").
   */
  isDone?: () => Promise<boolean> | boolean;
  /** Fallback poll interval when no notification arrives (default EVENT_STORE_DEFAULTS.followPollMs). */
  pollMs?: number;
  /** Reads failing on a database fault are retried this long before the fault is thrown (default EVENT_STORE_DEFAULTS.followFaultMaxMs). */
  faultMaxMs?: number;
}

/** Defaults of the event store. */
export const EVENT_STORE_DEFAULTS = {
  /** `follow` looks at the table at least this often even if no notification arrives. */
  followPollMs: 1_000,
  /** `follow` waits out a database fault this long at most (then throws it). */
  followFaultMaxMs: 120_000,
  /** `follow` reads at most this many events per query. */
  followBatch: 500,
  /** Tries of one append when concurrent appenders take the same seq. */
  appendAttempts: 20,
} as const;

/** seq is an integer column. */
const MAX_SEQ = 2_147_483_647;

/** Fields of the envelope; an event's own fields may not be named so. */
const ENVELOPE_KEYS = new Set(["run_id", "thread_id", "seq", "type", "at"]);

/**
 * Run events, stored durably with a per-run `seq` and delivered live.
 *
 * Secrets: stored events are redacted, not refused. The value of any secret-named field
 * (`api_key`, `authorization`, `password`, `*_token`, …) becomes `[REDACTED]`, and secret-looking
 * text anywhere (`sk-…`, `Bearer …`, GitHub/Slack/AWS/Google keys, URL passwords) is replaced in
 * place. Refusing would turn a model echoing a key into a failed run and a hole in the audit
 * trail; redacting keeps the event and never stores the key. With a redactor from
 * `createRedactor(configSecrets(config))` the configured keys are hidden whatever their shape.
 * See `src/secret-redaction.ts`.
 *
 * @example
 *   const events = new EventStore(db);
 *   await events.append(runId, [{ type: "run.started", attempt: 1, worker }], fence);
 *   for await (const event of events.follow(runId, { signal, isDone })) print(event);
 */
export class EventStore {
  private readonly sql: EventSql;

  /** `redactor`: hides the configured secret values too (default: the patterns only). */
  constructor(
    private readonly db: Database,
    private readonly redactor: Redactor = createRedactor(),
  ) {
    this.sql = eventSql(db.schema);
  }

  /**
   * Appends `events` in order after the run's last seq, in one statement that also stamps `at`
   * and notifies followers; returns them as stored. With a `fence`, nothing is written unless
   * the lease is still held at that epoch (else LeaseLostError). An unknown run is
   * RunNotFoundError. Concurrent appenders to one run are retried on a seq collision (bounded);
   * inside a caller's transaction (`tx`) a collision is not retried but thrown. `key` (a uuid)
   * makes the append idempotent: kept across a batch's retries, a retry whose first try committed
   * (its answer lost in a failover) stores nothing again and returns what the first try stored.
   */
  async append(runId: string, events: readonly NewRunEvent[], fence?: Fence, options: { tx?: Queryable; key?: string } = {}): Promise<RunEvent[]> {
    checkRunId(runId);
    if (fence !== undefined) {
      checkFence(fence);
      if (fence.runId.toLowerCase() !== runId.toLowerCase()) {
        throw new DevmindError("RUN_INPUT_INVALID", `fence of run ${fence.runId} used to append events to run ${runId}`);
      }
    }
    if (!Array.isArray(events)) throw new DevmindError("RUN_INPUT_INVALID", "events must be an array of {type, ...fields}");
    if (events.length === 0) return [];
    const payload = serializeEvents(events, this.redactor);
    const runner = options.tx ?? this.db;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result =
          fence === undefined
            ? await runner.query(this.sql.append, [runId, payload, options.key ?? null])
            : await runner.query(this.sql.appendFenced, [runId, payload, fence.epoch, options.key ?? null]);
        if (result.rows.length === 0) throw fence === undefined ? new RunNotFoundError(runId) : leaseLost(fence);
        // every row is of a type just checked as stored, so each is a RunEvent
        return result.rows.map((row) => toEvent(runId, row)).filter(isRunEvent);
      } catch (error) {
        if (options.tx !== undefined || !isSeqCollision(error) || attempt >= EVENT_STORE_DEFAULTS.appendAttempts) throw error;
        await sleep(Math.random() * 5 * attempt);
      }
    }
  }

  /**
   * In one transaction: runs `write` (a fenced status change, given the transaction) and, when it
   * returns true, appends `events` after it — so a process that dies in between leaves both or
   * neither (a run that ended always has its final event). Returns what `write` returned; false
   * means nothing was stored. A seq collision with a concurrent appender retries the whole
   * transaction (bounded).
   */
  async appendWith(runId: string, events: readonly NewRunEvent[], write: (tx: Queryable) => Promise<boolean>): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.db.transaction(async (tx) => {
          if (!(await write(tx))) return false;
          // the events go out with COMMIT (one round trip): if they fail, the write rolls back too
          await this.append(runId, events, undefined, { tx: withCommit(tx) });
          return true;
        });
      } catch (error) {
        if (!isSeqCollision(error) || attempt >= EVENT_STORE_DEFAULTS.appendAttempts) throw error;
        await sleep(Math.random() * 5 * attempt);
      }
    }
  }

  /**
   * In one transaction: runs `write` (given the transaction), then appends the events it returns
   * for run `runId` — so the write and its events commit together or not at all, and events that
   * depend on what `write` found (e.g. the status a cancel left) are decided inside it. Returns
   * `write`'s value. A seq collision with a concurrent appender retries the whole transaction
   * (bounded), so `write` must be repeatable.
   */
  async writeWith<T>(runId: string, write: (tx: Queryable) => Promise<{ value: T; events: readonly NewRunEvent[] }>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.db.transaction(async (tx) => {
          const { value, events } = await write(tx);
          await this.append(runId, events, undefined, { tx: withCommit(tx) });
          return value;
        });
      } catch (error) {
        if (!isSeqCollision(error) || attempt >= EVENT_STORE_DEFAULTS.appendAttempts) throw error;
        await sleep(Math.random() * 5 * attempt);
      }
    }
  }

  /** The seq of the run's last stored event (0 when it has none); RunNotFoundError for an unknown run. */
  async lastSeq(runId: string): Promise<number> {
    const result = await this.db.query<{ seq: number }>(this.sql.lastSeq, [checkRunId(runId)]);
    const row = result.rows[0];
    if (row === undefined) throw new RunNotFoundError(runId);
    return Number(row.seq);
  }

  /** The run's stored events with seq > `after`, in seq order; RunNotFoundError for an unknown run. */
  async read(runId: string, options: ReadEventsOptions = {}): Promise<StoredRunEvent[]> {
    checkRunId(runId);
    const after = options.after ?? 0;
    if (!Number.isSafeInteger(after) || after < 0 || after > MAX_SEQ) throw new DevmindError("RUN_INPUT_INVALID", `after must be a non-negative integer, got ${String(after)}`);
    const limit = options.limit;
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw new DevmindError("RUN_INPUT_INVALID", `limit must be a positive integer, got ${String(limit)}`);
    }
    const result = await this.db.query(this.sql.read, [runId, after, limit ?? null]);
    if (result.rows.length === 0) throw new RunNotFoundError(runId);
    return result.rows.filter((row) => row["seq"] !== null).map((row) => toEvent(runId, row));
  }

  /**
   * The run's events after `after`, stored ones first, then new ones as they are appended, each
   * exactly once and in seq order. Woken by LISTEN on RUN_EVENTS_CHANNEL (across processes on
   * PostgreSQL, in-process on PGlite) and by a bounded poll as fallback (also when listening
   * fails). Ends when `signal` aborts, or when `isDone()` is true and every event stored by then
   * was yielded. Breaking out of the loop stops listening.
   */
  async *follow(runId: string, options: FollowEventsOptions = {}): AsyncGenerator<StoredRunEvent, void, undefined> {
    checkRunId(runId);
    const { signal, isDone } = options;
    const pollMs = options.pollMs ?? EVENT_STORE_DEFAULTS.followPollMs;
    const faultMaxMs = options.faultMaxMs ?? EVENT_STORE_DEFAULTS.followFaultMaxMs;
    if (!(pollMs > 0)) throw new DevmindError("RUN_INPUT_INVALID", `pollMs must be positive, got ${String(pollMs)}`);
    let cursor = options.after ?? 0;
    if (signal?.aborted) return;

    const key = runId.toLowerCase();
    let pending = true;
    let wake: (() => void) | null = null;
    const poke = (): void => {
      pending = true;
      wake?.();
    };
    // listen before the first read, so nothing appended after that read goes unnoticed
    const unlisten = await this.db.listen(RUN_EVENTS_CHANNEL, (payload) => payload === key && poke()).catch(() => null);
    signal?.addEventListener("abort", poke, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        // asked before reading: whatever was stored when the run was done is still drained below;
        // a database that is away for a moment is waited out (bounded), the cursor kept
        const done = isDone === undefined ? false : await retryDatabaseFaults(async () => isDone(), { maxMs: faultMaxMs, signal });
        pending = false;
        for (;;) {
          const batch = await retryDatabaseFaults(() => this.read(runId, { after: cursor, limit: EVENT_STORE_DEFAULTS.followBatch }), { maxMs: faultMaxMs, signal });
          for (const event of batch) {
            if (signal?.aborted) return;
            if (event.seq <= cursor) continue;
            cursor = event.seq;
            yield event;
          }
          if (batch.length < EVENT_STORE_DEFAULTS.followBatch) break;
        }
        if (done || signal?.aborted) return;
        if (!pending) await waitForWake(pollMs, (resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      signal?.removeEventListener("abort", poke);
      await unlisten?.().catch(() => undefined);
    }
  }
}

/** Resolves after `ms`, or earlier when the function handed to `register` is called. */
function waitForWake(ms: number, register: (resolve: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      resolve();
    }
    register(done);
  });
}

function serializeEvents(events: readonly NewRunEvent[], redactor: Redactor): string {
  const rows = events.map((event: unknown, index) => {
    const where = `event ${index}`;
    if (event === null || typeof event !== "object" || Array.isArray(event)) throw new DevmindError("RUN_INPUT_INVALID", `${where} must be an object {type, ...fields}`);
    // typed callers cannot get these wrong; the checks hold for callers outside the type system
    const { type, ...data } = event as { type?: unknown };
    if (typeof type !== "string" || !isStoredRunEventType(type)) {
      throw new DevmindError("RUN_INPUT_INVALID", `${where} has an unknown type ${JSON.stringify(type)}: expected a stored run event type like "run.started"`);
    }
    for (const field of Object.keys(data)) {
      if (ENVELOPE_KEYS.has(field)) throw new DevmindError("RUN_INPUT_INVALID", `${where} (${type}) may not set the envelope field ${field}`);
    }
    return { type, data };
  });
  try {
    return redactor.json(rows);
  } catch (error) {
    throw new DevmindError("RUN_INPUT_INVALID", `events are not serialisable as JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A stored row as an event: the envelope, then the row's data fields. The one place a row becomes
 * a typed event: a type of the union is trusted to carry its fields (every writer is typed by
 * `NewRunEvent`); any other type (a newer version's) stays readable as a `ForeignRunEvent`.
 */
function toEvent(runId: string, row: Row): StoredRunEvent {
  const event: ForeignRunEvent = {
    run_id: runId.toLowerCase(),
    thread_id: String(row["thread_id"]),
    seq: Number(row["seq"]),
    type: String(row["type"]),
    at: isoTime(row["at"]),
  };
  const data = row["data"];
  if (data !== null && typeof data === "object") {
    for (const [field, value] of Object.entries(data)) if (!ENVELOPE_KEYS.has(field)) event[field] = value;
  }
  return isRunEventType(event.type) ? (event as RunEvent) : event;
}

/** True for a stored event of a known type: narrows `StoredRunEvent` to `RunEvent`, whose `type` then narrows its fields. */
export function isRunEvent(event: StoredRunEvent): event is RunEvent {
  return isRunEventType(event.type);
}

/** A timestamptz column as ISO text, whichever driver parsed it. */
function isoTime(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

function isSeqCollision(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === "23505" && (constraint === undefined || constraint === "run_events_pkey");
}
