/** One row of a query result, keyed by column name. */
export type Row = Record<string, unknown>;

/** What every query returns, whichever engine ran it. */
export interface QueryResult<R = Row> {
  rows: R[];
  rowCount: number;
}

/**
 * A SQL statement with a stable name. On PostgreSQL the name makes the statement prepared once
 * per connection and reused (no parse or plan per call); on PGlite it is only informative.
 * Build one with `statement()` from `src/db/statement.ts`.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** Something that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /** Runs one statement with `$n` parameters and returns its rows. */
  query<R = Row>(sql: string | Statement, values?: readonly unknown[]): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  execScript(sql: string): Promise<void>;
}

/**
 * A transaction that can send a statement together with its COMMIT (PostgreSQL: one round trip
 * for both). See `withCommit`.
 */
export interface CommittingQueryable extends Queryable {
  /**
   * Sends the statement and COMMIT at once: the transaction commits when the statement (and every
   * one before it) succeeds, else nothing commits and the statement's promise rejects. No
   * statement may follow. An exception the transaction's function throws after this does not
   * undo what committed: use it for a transaction's last statement, whose result decides nothing.
   */
  queryAndCommit<R = Row>(sql: string | Statement, values?: readonly unknown[]): Promise<QueryResult<R>>;
}

/**
 * `tx` for a transaction's last statement: its query goes out with COMMIT where the engine can
 * (`CommittingQueryable`, PostgreSQL); elsewhere (PGlite, in-process) it is `tx` itself and
 * COMMIT follows the transaction's function as usual.
 */
export function withCommit(tx: Queryable): Queryable {
  const committing = tx as Partial<CommittingQueryable>;
  if (typeof committing.queryAndCommit !== "function") return tx;
  return {
    query: (sql, values) => (committing as CommittingQueryable).queryAndCommit(sql, values),
    execScript: (sql) => tx.execScript(sql),
  };
}

/**
 * `target` with each statement run through `through` (which calls `send` to run it there): for
 * observers and fault injectors. A transaction that can send a statement with COMMIT keeps that
 * (`queryAndCommit`), so wrapping one costs no round trip. `scripts: false` leaves `execScript`
 * untouched.
 */
export function throughQueryable(
  target: Queryable,
  through: <T>(sql: string | Statement, send: () => Promise<T>) => Promise<T>,
  options: { scripts?: boolean } = {},
): Queryable {
  const wrapped: Queryable = {
    query: (sql, values) => through(sql, () => target.query(sql, values)),
    execScript: options.scripts === false ? (sql) => target.execScript(sql) : (sql) => through(sql, () => target.execScript(sql)),
  };
  const committing = target as Partial<CommittingQueryable>;
  if (typeof committing.queryAndCommit !== "function") return wrapped;
  const withLast: CommittingQueryable = {
    ...wrapped,
    queryAndCommit: (sql, values) => through(sql, () => (committing as CommittingQueryable).queryAndCommit(sql, values)),
  };
  return withLast;
}

/**
 * The database seam: the same SQL and migrations run on a `pg.Pool` (PostgreSQL) or on an
 * embedded PGlite. Open one with `openDatabase()`.
 */
export interface Database extends Queryable {
  /** Which engine serves this database. */
  readonly kind: "postgres" | "pglite";
  /** The validated schema that holds every devmind table. */
  readonly schema: string;
  /** Where the data lives, safe to print: a URL without password, a directory, or `memory://`. */
  readonly location: string;
  /**
   * Runs `fn` inside BEGIN … COMMIT on one connection; rolls back and re-throws if it throws.
   * Keep the work short and serialise values before calling.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` with the payload of every notification on `channel` (sent with
   * `notify()` from `src/db/channels.ts`, i.e. `SELECT pg_notify($1, $2)`) until the returned
   * unlisten function is awaited. Resolves once the LISTEN is in effect, so a caller that
   * listens first and reads second misses nothing sent after its read.
   *
   * PostgreSQL: one dedicated connection per Database carries every channel, across processes;
   * it is connected on first use and, if it drops, reconnected with bounded backoff and every
   * channel listened again — notifications sent while it was down are lost, so callers keep a
   * bounded poll as fallback. PGlite: its built-in listen, in-process only.
   * `channel` must be a fixed identifier from code (`CHANNEL_NAME_PATTERN`); `close()` ends it all.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL: where a dedicated connection that keeps its session goes (a session-level lock
   * for crash detection), or null behind a transaction pooler without a direct URL. Absent on
   * PGlite (one process: its data-directory lock already tells a dead owner).
   */
  sessionTarget?(): { url: () => string; printable: string } | null;
  /**
   * PGlite: records in the data directory's lock file that a `devmind serve` / `dev` listening at
   * `url` holds it, with the server's local owner key (`ownerKey`, read from the 0600 lock file by
   * that CLI command, which proves with it that it could open the database itself), so a CLI command
   * finding the directory held goes through that server's API (`readLockHolder`). Absent on
   * PostgreSQL, where any number of processes share the database.
   */
  announceServer?(url: string, ownerKey?: string): void;
  /** Releases connections (and the data-directory lock for PGlite). Safe to call twice. */
  close(): Promise<void>;
}
