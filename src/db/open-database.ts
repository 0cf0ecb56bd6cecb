import { join, resolve } from "node:path";
import { CONFIG_DEFAULTS, PGLITE_LOCK_FILE } from "../constants.js";
import { readLockHolder, type LockHolder } from "./lock-file.js";
import type { Logger } from "../logger.js";
import { validateSchemaName } from "./identifiers.js";
import { PgliteDatabase } from "./pglite-database.js";
import type { DataDirProgress } from "./pglite-data-dir.js";
import type { Database } from "./types.js";

export type { DataDirProgress, DataDirSource } from "./pglite-data-dir.js";
export type { LockHolder } from "./lock-file.js";

/**
 * Who holds the embedded database of `dataDir` (its lock file), without opening or locking it:
 * free, a live process (with the URL it serves when it is a `devmind serve` / `dev`), or a
 * process that is gone (the next open takes the lock over). The lock file's path is in the answer.
 */
export function embeddedDatabaseHolder(dataDir: string): LockHolder {
  return readLockHolder(join(resolve(dataDir), PGLITE_LOCK_FILE));
}

/** Where to open the database; the same fields as the DATABASE_URL / DEVMIND_* variables. */
export interface OpenDatabaseOptions {
  /**
   * `postgres://…`: use that server. Unset: embedded PGlite. May go through a transaction pooler
   * (PgBouncer), and may name several hosts (`postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write`):
   * devmind uses the one that accepts writes and follows a failover.
   */
  url?: string | undefined;
  /**
   * PostgreSQL only (DEVMIND_DATABASE_DIRECT_URL): a connection that keeps its session, for
   * LISTEN, when `url` goes through a transaction pooler. Unset there: polling stands in (logged once).
   */
  directUrl?: string | undefined;
  /** PostgreSQL only: where a failover, a pooler without a direct URL or a lagging standby is reported. Default: silent. */
  logger?: Logger | undefined;
  /** Embedded database directory (PGlite in `<dataDir>/pgdata`), or `memory://`. */
  dataDir?: string | undefined;
  /** Schema holding every devmind table; a validated identifier. */
  schema?: string | undefined;
  /** PostgreSQL pool size. */
  maxConnections?: number | undefined;
  /** PostgreSQL: how long getting a connection may take before the query fails as DATABASE_UNREACHABLE (default 10 s). */
  connectionTimeoutMs?: number | undefined;
  /**
   * Embedded PGlite: load the pgvector extension (`@electric-sql/pglite-pgvector`) so the memory
   * store (`PostgresStore` with an `index`) can rank searches by embeddings. Costs a little start-up
   * time, hence off by default. PostgreSQL: ignored; the store loads the server's extension itself.
   */
  vector?: boolean | undefined;
  /** Embedded PGlite: told before and after a new database is created (a copy of the built template, or initdb). */
  onProgress?: ((progress: DataDirProgress) => void) | undefined;
}

/**
 * Opens the database seam: a `pg.Pool` for a URL (checked with one round trip), else embedded
 * PGlite under `dataDir` with an exclusive lock file, or in memory for `memory://`.
 * Tables are not created here; call `migrate(db)` next.
 *
 * @example
 *   const db = await openDatabase({ url: process.env.DATABASE_URL });
 *   await migrate(db);
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const schema = validateSchemaName(options.schema ?? CONFIG_DEFAULTS.dbSchema);
  if (options.url !== undefined && options.url !== "") {
    // loaded only here: on the embedded database, the PostgreSQL driver (pg and its modules) is never loaded
    const { PgDatabase } = await import("./pg-database.js");
    return PgDatabase.open(options.url, schema, {
      max: options.maxConnections,
      connectionTimeoutMs: options.connectionTimeoutMs,
      directUrl: options.directUrl,
      logger: options.logger,
    });
  }
  return PgliteDatabase.open(options.dataDir ?? CONFIG_DEFAULTS.dataDir, schema, { vector: options.vector === true, onProgress: options.onProgress });
}
