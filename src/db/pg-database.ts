import pg from "pg";
import { PG_POOL_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import { toDatabaseFault } from "./database-faults.js";
import { PgListener } from "./pg-listener.js";
import type { Database, Queryable, QueryResult, Row, Statement } from "./types.js";

/**
 * Parses and checks a PostgreSQL URL, returning a printable form without the password.
 * Throws DATABASE_URL_INVALID for anything but `postgres://` / `postgresql://` with a host.
 */
export function checkDatabaseUrl(url: string): { printable: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseError("DATABASE_URL_INVALID", "DATABASE_URL is not a valid URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE", {
      details: { variable: "DATABASE_URL" },
    });
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new DatabaseError("DATABASE_URL_INVALID", `DATABASE_URL must start with postgres:// or postgresql://, got ${parsed.protocol}//`, {
      details: { variable: "DATABASE_URL" },
    });
  }
  if (parsed.hostname === "" && !parsed.searchParams.has("host")) {
    throw new DatabaseError("DATABASE_URL_INVALID", "DATABASE_URL has no host: expected postgres://USER@HOST[:PORT]/DATABASE", {
      details: { variable: "DATABASE_URL" },
    });
  }
  if (parsed.password !== "") parsed.password = "***";
  return { printable: parsed.toString() };
}

/**
 * Wraps a database fault (connection lost or refused, restart, pool connect timeout, disk full,
 * read-only, permission revoked) into DATABASE_UNREACHABLE / DATABASE_WRITE_FAILED; other errors
 * pass through.
 */
export function mapPgError(error: unknown, printable: string): unknown {
  return toDatabaseFault(error, printable);
}

class PgQueryable implements Queryable {
  constructor(
    private readonly client: pg.Pool | pg.PoolClient,
    private readonly printable: string,
  ) {}

  async query<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    const config = typeof sql === "string" ? { text: sql, values: values as unknown[] } : { name: sql.name, text: sql.text, values: values as unknown[] };
    try {
      const result = await this.client.query(config);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    } catch (error) {
      throw mapPgError(error, this.printable);
    }
  }

  async execScript(sql: string): Promise<void> {
    try {
      await this.client.query(sql);
    } catch (error) {
      throw mapPgError(error, this.printable);
    }
  }
}

/**
 * A Database over a `pg.Pool`. Statements with a name are prepared per connection, so the hot
 * checkpoint path skips parse and plan after first use. `listen` uses one more, dedicated
 * connection (outside the pool), opened on first use.
 */
export class PgDatabase extends PgQueryable implements Database {
  readonly kind = "postgres" as const;
  private closed = false;
  private readonly listener: PgListener;

  private constructor(
    private readonly pool: pg.Pool,
    readonly schema: string,
    readonly location: string,
    url: string,
  ) {
    super(pool, location);
    this.listener = new PgListener(url, location);
  }

  /** Opens a pool for `url` and checks the server answers; throws DATABASE_UNREACHABLE if not. */
  static async open(url: string, schema: string, options: { max?: number | undefined; connectionTimeoutMs?: number | undefined } = {}): Promise<PgDatabase> {
    const { printable } = checkDatabaseUrl(url);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? PG_POOL_DEFAULTS.max,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? PG_POOL_DEFAULTS.connectionTimeoutMillis,
      idleTimeoutMillis: PG_POOL_DEFAULTS.idleTimeoutMillis,
      application_name: "devmind",
    });
    // an idle client losing its connection must not crash the process; the next query reconnects
    pool.on("error", () => undefined);
    const db = new PgDatabase(pool, schema, printable, url);
    try {
      await db.query("SELECT 1");
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
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
    let client: pg.PoolClient;
    try {
      client = await new Promise<pg.PoolClient>((resolve, reject) => {
        this.pool.connect((error, connected) => {
          if (error !== undefined || connected === undefined) return reject(error ?? new Error("the pool returned no client"));
          connected.on("error", onError);
          resolve(connected);
        });
      });
    } catch (error) {
      throw mapPgError(error, this.location);
    }
    try {
      await client.query("BEGIN");
      const result = await fn(new PgQueryable(client, this.location));
      await client.query("COMMIT");
      return result;
    } catch (error) {
      if (broken === null) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          broken = rollbackError;
        }
      }
      throw mapPgError(error, this.location);
    } finally {
      client.removeListener("error", onError);
      // pg-pool re-adds its idle listener on release; a broken client is destroyed, not returned
      client.release(broken === null ? undefined : broken instanceof Error ? broken : true);
    }
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
}
