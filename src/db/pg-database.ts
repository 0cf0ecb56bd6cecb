import pg from "pg";
import { PG_POOL_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { classifyDriverError, databaseFaultOf, toDatabaseFault } from "./database-faults.js";
import { isQueryTimeout, queryTimeoutError, sendCancel } from "./pg-cancel.js";
import { PgListener } from "./pg-listener.js";
import { PRIMARY_CHECK_SQL, PrimaryLocator } from "./pg-primary.js";
import { checkReplication } from "./pg-replication.js";
import { parsePgUrl } from "./pg-url.js";
import type { SessionLockTarget } from "./session-lock.js";
import type { CommittingQueryable, Database, Queryable, QueryResult, Row, Statement } from "./types.js";

/**
 * Parses and checks a PostgreSQL URL (one host, or several as libpq writes them:
 * `postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write`), returning a printable form
 * without the password. Throws DATABASE_URL_INVALID for anything but `postgres://` /
 * `postgresql://` with a host.
 */
export function checkDatabaseUrl(url: string, variable = "DATABASE_URL"): { printable: string } {
  const parsed = parsePgUrl(url, variable);
  if (parsed.hosts.length > 1) return { printable: parsed.printable };
  let single: URL;
  try {
    single = new URL(url);
  } catch {
    throw new DatabaseError("DATABASE_URL_INVALID", `${variable} is not a valid URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, {
      details: { variable },
    });
  }
  if (single.password !== "") single.password = "***";
  return { printable: single.toString() };
}

/**
 * Wraps a database fault (connection lost or refused, restart, pool connect timeout, disk full,
 * read-only, permission revoked) into DATABASE_UNREACHABLE / DATABASE_WRITE_FAILED; other errors
 * pass through.
 */
export function mapPgError(error: unknown, printable: string): unknown {
  return toDatabaseFault(error, printable);
}

/** How a PgDatabase runs statements on one connection (or on the pool). */
interface Runner {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
  query(text: string): Promise<pg.QueryResult>;
}

/**
 * A statement's config with its answer bounded: pg's `query_timeout` rejects it after `timeoutMs`
 * and, on a pipelined client (the pool's), destroys the connection, which fails every statement
 * sent behind it. 0: unbounded.
 */
function bounded(config: pg.QueryConfig, timeoutMs: number): pg.QueryConfig {
  return timeoutMs > 0 ? ({ ...config, query_timeout: timeoutMs } as pg.QueryConfig) : config;
}

/** A driver error as devmind's: a statement without an answer in time is DATABASE_UNREACHABLE (query_timeout). */
function mapStatementError(error: unknown, printable: string, timeoutMs: number): unknown {
  return isQueryTimeout(error) ? queryTimeoutError(error, printable, timeoutMs) : mapPgError(error, printable);
}

/**
 * A client given up on (a statement without an answer in time): the server is asked, once, to
 * cancel what its backend runs, since the backend may still run it or hold its locks.
 */
function cancelOnce(client: pg.PoolClient): void {
  const marked = client as unknown as { devmindCancelSent?: boolean };
  if (marked.devmindCancelSent === true) return;
  marked.devmindCancelSent = true;
  void sendCancel(client);
}

class PgQueryable implements Queryable {
  constructor(
    private readonly runner: Runner,
    protected readonly printable: string,
    /** False behind a transaction pooler: a named statement prepared on one server connection is unknown on the next. */
    private readonly named: boolean,
    private readonly onFault: (error: unknown) => void,
    /** Each statement's answer is awaited at most this long (PG_POOL_DEFAULTS.queryTimeoutMs; 0: unbounded). */
    protected readonly queryTimeoutMs: number,
  ) {}

  async query<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    const text = typeof sql === "string" ? sql : sql.text;
    const config: pg.QueryConfig = typeof sql !== "string" && this.named ? { name: sql.name, text, values: values as unknown[] } : { text, values: values as unknown[] };
    try {
      const result = await this.runner.query(bounded(config, this.queryTimeoutMs));
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    } catch (error) {
      this.onFault(error);
      throw mapStatementError(error, this.printable, this.queryTimeoutMs);
    }
  }

  /** A script (a migration) is not bounded: a long one is legitimate. */
  async execScript(sql: string): Promise<void> {
    try {
      await this.runner.query(sql);
    } catch (error) {
      this.onFault(error);
      throw mapPgError(error, this.printable);
    }
  }
}

/**
 * A transaction's statements on its one client, which runs in pg's pipeline mode: each statement
 * goes out when it is called, so statements called together — and BEGIN with the first of them,
 * COMMIT with the one `queryAndCommit` sends — share one round trip instead of one each. The
 * server still runs them one after another, each with its own snapshot, in the transaction.
 */
class PgTransactionQueryable extends PgQueryable implements CommittingQueryable {
  private commitSent: Promise<pg.QueryResult> | null = null;
  private readonly inFlight: Promise<unknown>[] = [];
  private firstFailure: { error: unknown } | null = null;
  private holding = false;

  constructor(
    private readonly client: pg.PoolClient,
    printable: string,
    named: boolean,
    onFault: (error: unknown) => void,
    queryTimeoutMs: number,
  ) {
    super(client, printable, named, onFault, queryTimeoutMs);
  }

  override query<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    if (this.commitSent !== null) {
      return Promise.reject(new DatabaseError("DATABASE_WRITE_FAILED", "a statement was sent after its transaction's COMMIT; it was not run (the transaction is over)"));
    }
    this.holdWrites();
    const sent = super.query<R>(sql, values);
    this.inFlight.push(
      sent.catch((error: unknown) => {
        this.firstFailure ??= { error };
      }),
    );
    return sent;
  }

  queryAndCommit<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    const sent = this.query<R>(sql, values);
    this.commitSent = this.client.query(bounded({ text: "COMMIT" }, this.queryTimeoutMs));
    this.commitSent.catch(() => undefined);
    return sent;
  }

  /**
   * Holds the socket's writes until the current synchronous work is done (node's cork, released
   * on the next tick): statements called together leave in one write, one system call.
   */
  holdWrites(): void {
    if (this.holding) return;
    const stream = corkable(this.client);
    if (stream === undefined) return;
    this.holding = true;
    stream.cork();
    process.nextTick(() => {
      this.holding = false;
      stream.uncork();
    });
  }

  /** Whether COMMIT is on its way (sent by `queryAndCommit`): the transaction's end is its answer, no ROLLBACK can follow. */
  get committing(): boolean {
    return this.commitSent !== null;
  }

  /** Resolves (never rejects) once every statement sent, and COMMIT if sent, has its answer: the client may be released. */
  async drained(): Promise<void> {
    await Promise.all(this.inFlight);
    await this.commitSent?.catch(() => undefined);
  }

  /** With COMMIT sent: resolves when it committed; a rolled-back transaction throws its first failure. */
  async committed(): Promise<void> {
    if (this.commitSent === null) return;
    const answer = await this.commitSent;
    // COMMIT of a transaction a failed statement aborted answers ROLLBACK, without an error
    if (answer.command !== "COMMIT") {
      throw this.firstFailure?.error ?? new DatabaseError("DATABASE_WRITE_FAILED", `the transaction was rolled back (the server answered ${String(answer.command)} to COMMIT)`);
    }
  }
}

/** The client's socket when it can be corked (node's net.Socket): writes made until uncork go out in one. */
function corkable(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  return typeof stream?.cork === "function" && typeof stream.uncork === "function" ? (stream as { cork(): void; uncork(): void }) : undefined;
}

/** Options of `PgDatabase.open`. */
export interface PgOpenOptions {
  max?: number | undefined;
  connectionTimeoutMs?: number | undefined;
  /**
   * DEVMIND_DATABASE_DIRECT_URL: a connection that keeps its session (no transaction pooler),
   * used for what needs one — LISTEN. Unset: LISTEN goes over `url` when that keeps sessions, and
   * is replaced by polling (logged once) when it does not.
   */
  directUrl?: string | undefined;
  /** Where failovers, a pooler without a direct URL and lagging standbys are reported. */
  logger?: Logger | undefined;
  /** Each statement's answer is awaited at most this long (default PG_POOL_DEFAULTS.queryTimeoutMs; 0: unbounded). */
  queryTimeoutMs?: number | undefined;
  /** The LISTEN connection's watchdog (default PG_LISTEN_DEFAULTS). */
  listenCheck?: { checkMs: number; checkTimeoutMs: number } | undefined;
}

/**
 * A Database over a `pg.Pool`. Statements with a name are prepared per connection, so the hot
 * checkpoint path skips parse and plan after first use — unless the URL goes through a pooler
 * (PgBouncer in transaction mode and alike: detected at open, since the pooler's connection id
 * is not the server's), where every statement is sent unnamed. Every transaction is
 * self-contained (transaction-level advisory locks, `SET LOCAL`), so it survives a transaction
 * pooler. `listen` uses one more, dedicated connection (outside the pool) to the direct URL or
 * the URL, opened on first use.
 *
 * A URL may name several hosts (`postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write`):
 * connections go to the first that accepts writes, and when it fails or turns read-only the
 * hosts are asked again (a failover; see `PrimaryLocator`).
 */
export class PgDatabase extends PgQueryable implements Database {
  readonly kind = "postgres" as const;
  private closed = false;
  private readonly listener: PgListener;

  private constructor(
    private readonly pool: pg.Pool,
    readonly schema: string,
    readonly location: string,
    private readonly locator: PrimaryLocator,
    /** Whether the pool's connections keep their session (no transaction pooler in between). */
    readonly sessions: boolean,
    listener: (db: PgDatabase) => PgListener,
    /** Where a connection that keeps its session goes: the direct URL, or the URL without a pooler; null: none. */
    private readonly sessionSource: PrimaryLocator | null,
    queryTimeoutMs: number,
  ) {
    super({ query: (config: pg.QueryConfig | string) => this.queryOnce(config) }, location, sessions, (error) => suspectHost(locator, error), queryTimeoutMs);
    this.listener = listener(this);
  }

  /**
   * Opens a pool for `url`, finds its primary (several hosts) and checks the server answers and
   * accepts writes; throws DATABASE_UNREACHABLE naming what is wrong if not.
   */
  static async open(url: string, schema: string, options: PgOpenOptions = {}): Promise<PgDatabase> {
    const logger = options.logger ?? silentLogger;
    const { printable } = checkDatabaseUrl(url);
    const locator = new PrimaryLocator(parsePgUrl(url), { variable: "DATABASE_URL", logger });
    const direct = options.directUrl === undefined || options.directUrl === "" ? null : new PrimaryLocator(parsePgUrl(options.directUrl, "DEVMIND_DATABASE_DIRECT_URL"), { variable: "DEVMIND_DATABASE_DIRECT_URL", logger });
    if (direct !== null) checkDatabaseUrl(options.directUrl as string, "DEVMIND_DATABASE_DIRECT_URL");
    await locator.locate();
    // LISTEN needs the primary too (a standby refuses it); a failure here only means polling later
    await direct?.locate().catch(() => undefined);

    const queryTimeoutMs = options.queryTimeoutMs ?? PG_POOL_DEFAULTS.queryTimeoutMs;
    const pool = new pg.Pool({
      // every new connection goes to the host the locator holds for the primary now
      Client: locatedClient(locator),
      max: options.max ?? PG_POOL_DEFAULTS.max,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? PG_POOL_DEFAULTS.connectionTimeoutMillis,
      idleTimeoutMillis: PG_POOL_DEFAULTS.idleTimeoutMillis,
      application_name: "devmind",
      // an idle connection to a vanished peer is closed by the kernel (its default waits 2 hours)
      keepAlive: true,
      keepAliveInitialDelayMillis: PG_POOL_DEFAULTS.keepAliveInitialDelayMs,
      // statements are sent as they are called: a transaction's independent statements, BEGIN and
      // COMMIT share round trips (PgTransactionQueryable); a lone statement behaves as ever
      pipeline: true,
      // several hosts: a connection that landed on a standby (a promotion not noticed yet) is refused
      ...(locator.multiHost ? { verify: verifyPrimary(locator, printable) } : {}),
    } as pg.PoolConfig);
    // an idle client losing its connection must not crash the process; the next query reconnects
    pool.on("error", () => undefined);
    let sessions: boolean;
    try {
      sessions = await inspectServer(pool, printable, queryTimeoutMs);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    const db = new PgDatabase(pool, schema, printable, locator, sessions, (self) => {
      const source = direct ?? locator;
      return new PgListener({
        url: () => source.currentUrl(),
        printable: source.target.printable,
        variable: direct === null ? "DATABASE_URL" : "DEVMIND_DATABASE_DIRECT_URL",
        onConnectFailed: () => source.suspect(),
        notify: async (channel, payload) => void (await self.query("SELECT pg_notify($1, $2)", [channel, payload])),
        logger,
        check: options.listenCheck,
      });
    }, direct ?? (sessions ? locator : null), queryTimeoutMs);
    if (!sessions) {
      logger.info(
        { event: "database.pooler", location: printable, direct_url: direct !== null },
        `DATABASE_URL goes through a connection pooler: statements are sent unprepared${direct === null ? "" : "; LISTEN uses DEVMIND_DATABASE_DIRECT_URL"}`,
      );
    }
    if (locator.multiHost) await checkReplication(db, locator, logger).catch(() => undefined);
    return db;
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    // While checked out, a client has no listener of the pool's: a connection that dies between
    // BEGIN and COMMIT (a restart, pg_terminate_backend) would emit an unhandled 'error' and end
    // the process. This one records it; the query in flight fails on its own, and the broken
    // client is destroyed below instead of going back to the pool. It is attached inside the
    // pool's callback, synchronously: a termination notice arriving in the same packet as the
    // connection's readiness is emitted before any `await` would resume.
    let broken: unknown = null;
    const onError = (error: unknown): void => {
      broken ??= error;
    };
    const client = await this.checkout(onError);
    const onFault = (error: unknown): void => {
      suspectHost(this.locator, error);
      // a statement without an answer in time: the connection is dead to us (pg destroyed it)
      if (isQueryTimeout(error)) {
        broken ??= error;
        cancelOnce(client);
      }
    };
    const tx = new PgTransactionQueryable(client, this.location, this.sessions, onFault, this.queryTimeoutMs);
    try {
      // BEGIN goes out with the statements `fn` sends before it first waits (pipeline mode): no round trip of its own
      tx.holdWrites();
      const begun = client.query(bounded({ text: "BEGIN" }, this.queryTimeoutMs));
      begun.catch(() => undefined);
      const running = fn(tx);
      running.catch(() => undefined);
      const pending = begun.then(() => running);
      let result: T;
      try {
        result = await pending;
      } finally {
        await tx.drained();
      }
      if (tx.committing) await tx.committed();
      else await client.query(bounded({ text: "COMMIT" }, this.queryTimeoutMs));
      return result;
    } catch (error) {
      onFault(error);
      if (broken === null && !tx.committing) {
        try {
          await client.query(bounded({ text: "ROLLBACK" }, this.queryTimeoutMs));
        } catch (rollbackError) {
          onFault(rollbackError);
          broken = rollbackError;
        }
      }
      throw mapStatementError(error, this.location, this.queryTimeoutMs);
    } finally {
      client.removeListener("error", onError);
      // pg-pool re-adds its idle listener on release; a broken client is destroyed, not returned
      client.release(broken === null ? undefined : broken instanceof Error ? broken : true);
    }
  }

  /**
   * Where a dedicated connection that keeps its session goes (a session-level lock, see
   * `SessionLock`): DEVMIND_DATABASE_DIRECT_URL when set, else the URL when no pooler is in
   * between; null behind a transaction pooler without a direct URL.
   */
  sessionTarget(): SessionLockTarget | null {
    const source = this.sessionSource;
    return source === null ? null : { url: () => source.currentUrl(), printable: source.target.printable };
  }

  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    return this.listener.listen(channel, onPayload);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.listener.close();
    } finally {
      await this.pool.end();
    }
  }

  /** One statement on a pooled client (`checkout`: a failover found while connecting is followed at once). */
  private async queryOnce(config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    let broken: unknown = null;
    const onError = (error: unknown): void => {
      broken ??= error;
    };
    const client = await this.checkout(onError);
    try {
      return await client.query(config as pg.QueryConfig);
    } catch (error) {
      if (classifyDriverError(error) === "unreachable") broken ??= error;
      // no answer in time: pg destroyed the connection; the server is asked to stop the statement
      if (isQueryTimeout(error)) {
        broken ??= error;
        cancelOnce(client);
      }
      throw error;
    } finally {
      client.removeListener("error", onError);
      client.release(broken === null ? undefined : broken instanceof Error ? broken : true);
    }
  }

  /** A pooled client with `onError` attached; with several hosts, one more try after a failover was found. */
  private async checkout(onError: (error: unknown) => void): Promise<pg.PoolClient> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await new Promise<pg.PoolClient>((resolve, reject) => {
          this.pool.connect((error, connected) => {
            if (error !== undefined || connected === undefined) return reject(error ?? new Error("the pool returned no client"));
            connected.on("error", onError);
            resolve(connected);
          });
        });
      } catch (error) {
        if (attempt === 1 && this.locator.multiHost && classifyDriverError(error) !== null) {
          const before = this.locator.currentName();
          const found = await this.locator.locate().then(
            () => this.locator.currentName(),
            (notFound: unknown) => notFound,
          );
          if (typeof found !== "string") throw found;
          if (found !== before) continue;
        }
        throw mapPgError(error, this.location);
      }
    }
  }
}

/** A pg.Client class whose instances connect to the locator's current host. */
function locatedClient(locator: PrimaryLocator): typeof pg.Client {
  return class LocatedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === "object" ? config : {}), connectionString: locator.currentUrl() });
    }
  };
}

/** pg-pool's `verify`: a new connection must be on a primary; a standby sends the locator looking. */
function verifyPrimary(locator: PrimaryLocator, printable: string) {
  return (client: pg.PoolClient, done: (error?: Error) => void): void => {
    // pg-pool takes its idle listener off before `verify` and gives the client no other: a
    // connection dying now (a failover) would emit an unhandled 'error' and end the process
    let broken: Error | null = null;
    const onError = (error: Error): void => {
      broken ??= error;
    };
    client.on("error", onError);
    const finish = (error?: Error): void => {
      client.removeListener("error", onError);
      done(error ?? broken ?? undefined);
    };
    client.query<{ standby: boolean }>(PRIMARY_CHECK_SQL).then(
      (result) => {
        if (result.rows[0]?.standby !== true) return finish();
        locator.suspect();
        // 57P03 cannot_connect_now: a fault that is waited out briefly, like the rest of a failover
        finish(Object.assign(new Error(`${locator.currentName()} is a standby (in recovery) now; looking for the primary of ${printable}`), { code: "57P03" }));
      },
      (error: Error) => finish(error),
    );
  };
}

/** A fault that may mean the host is gone or demoted sends the locator looking (several hosts only). */
function suspectHost(locator: PrimaryLocator, error: unknown): void {
  if (!locator.multiHost) return;
  const raw = error instanceof DatabaseError && error.cause !== undefined ? error.cause : error;
  const code = (raw as { code?: unknown } | null)?.code;
  if (databaseFaultOf(error) === "unreachable" || classifyDriverError(raw) === "unreachable" || code === "25006") locator.suspect();
}

/**
 * The check at open: one connection answers, it is not a standby, and whether it keeps its
 * session — a pooler hands out its own connection id (BackendKeyData), which is not the server
 * backend's pid. Returns true when there is no pooler in between.
 */
async function inspectServer(pool: pg.Pool, printable: string, queryTimeoutMs: number): Promise<boolean> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw mapPgError(error, printable);
  }
  let failed: Error | undefined;
  try {
    const result = await client.query<{ pid: number; standby: boolean }>(bounded({ text: "SELECT pg_backend_pid() AS pid, pg_is_in_recovery() AS standby" }, queryTimeoutMs));
    const row = result.rows[0];
    if (row?.standby === true) {
      throw new DatabaseError(
        "DATABASE_UNREACHABLE",
        `the server at ${printable} is a standby (in recovery), and devmind writes: point DATABASE_URL at the primary, ` +
          `or list every host (postgres://USER@PRIMARY:PORT,STANDBY:PORT/DB?target_session_attrs=read-write)`,
        { details: { location: printable, cause: "standby" } },
      );
    }
    const processId = (client as unknown as { processID: number | null }).processID;
    return processId === null || processId === row?.pid;
  } catch (error) {
    if (isQueryTimeout(error)) {
      failed = error as Error;
      throw queryTimeoutError(error, printable, queryTimeoutMs);
    }
    throw mapPgError(error, printable);
  } finally {
    // a connection that did not answer in time is destroyed, not pooled
    client.release(failed);
  }
}
