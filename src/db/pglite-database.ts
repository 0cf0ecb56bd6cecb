import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite, type Extensions, type Transaction } from "@electric-sql/pglite";
import { CONFIG_DEFAULTS, MEMORY_DATA_DIR, PGLITE_LOCK_FILE, PGLITE_SUBDIR, PGVECTOR_PACKAGE, PGVECTOR_VERSION } from "../constants.js";
import { ConfigError, DatabaseError } from "../errors.js";
import { validateChannelName } from "./channels.js";
import { toDatabaseFault } from "./database-faults.js";
import { acquireLockFile, type HeldLock } from "./lock-file.js";
import { pgliteVersion } from "./pglite-template.js";
import { discardNewDataDir, ensureInitialisedDataDir, pgliteStartParams, unopenableDataDirError, type DataDirProgress } from "./pglite-data-dir.js";
import { quoteIdentifier } from "./identifiers.js";
import type { Database, Queryable, QueryResult, Row, Statement } from "./types.js";

/**
 * PGlite's pgvector build, loaded only when asked for (it unpacks a bundle at start). It is an
 * optional peer dependency: a project that wants semantic search on the embedded database installs
 * it, so every other project keeps one PGlite (the package pins a PGlite of its own as its peer).
 */
async function vectorExtension(): Promise<Extensions> {
  let loaded: { vector: unknown };
  try {
    loaded = (await import(PGVECTOR_PACKAGE)) as { vector: unknown };
  } catch (error) {
    throw new ConfigError(
      `openDatabase({ vector: true }) on the embedded database needs the package ${PGVECTOR_PACKAGE}, which is not installed (${(error as Error).message.split("\n")[0]}). ` +
        `Install it beside devmind: npm install --save-exact ${PGVECTOR_PACKAGE}@${PGVECTOR_VERSION}, with "overrides": {"${PGVECTOR_PACKAGE}": {"@electric-sql/pglite": "${pgliteVersion()}"}} in package.json so it shares devmind's PGlite`,
      { package: PGVECTOR_PACKAGE },
    );
  }
  return { vector: loaded.vector as Extensions[string] };
}

type PgliteRunner = Pick<PGlite, "query" | "exec"> | Transaction;

class PgliteQueryable implements Queryable {
  constructor(
    protected readonly runner: PgliteRunner,
    protected readonly where: string,
  ) {}

  async query<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    const text = typeof sql === "string" ? sql : sql.text;
    try {
      const result = await this.runner.query<R>(text, values as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    } catch (error) {
      // a full disk or a closed instance is a database fault here too, never a run's bug
      throw toDatabaseFault(error, this.where);
    }
  }

  async execScript(sql: string): Promise<void> {
    try {
      await this.runner.exec(sql);
    } catch (error) {
      throw toDatabaseFault(error, this.where);
    }
  }
}

/**
 * Opens `pgdata`. A directory this process has just copied from the template that PGlite cannot
 * open (a template from a PostgreSQL major it does not read) is made again with initdb; any other
 * directory that cannot be opened is an error naming it, never deleted.
 */
async function openFresh(
  pgdata: string,
  extensions: Extensions,
  fromTemplate: boolean,
  onProgress: ((progress: DataDirProgress) => void) | undefined,
): Promise<PGlite> {
  try {
    return await PGlite.create(pgdata, { extensions, startParams: pgliteStartParams() });
  } catch (error) {
    if (!fromTemplate) throw unopenableDataDirError(pgdata, error);
  }
  discardNewDataDir(pgdata);
  await ensureInitialisedDataDir(pgdata, { templateDir: null, onProgress, initdbReason: "the copy of the template could not be opened" });
  try {
    return await PGlite.create(pgdata, { extensions, startParams: pgliteStartParams() });
  } catch (error) {
    throw unopenableDataDirError(pgdata, error);
  }
}

/**
 * A Database over embedded PGlite: persisted under `<dataDir>/pgdata` behind an exclusive lock
 * file, or in memory for `memory://`. One process, one connection; PGlite serialises queries
 * and keeps plain queries out of an open transaction. `listen` is PGlite's own: notifications
 * reach listeners of this instance only (one process holds the directory anyway).
 */
export class PgliteDatabase extends PgliteQueryable implements Database {
  readonly kind = "pglite" as const;
  private closed = false;

  private constructor(
    private readonly pglite: PGlite,
    readonly schema: string,
    readonly location: string,
    private readonly lock: HeldLock | null,
  ) {
    super(pglite, location);
  }

  /**
   * Opens (creating if needed) the embedded database for `dataDir`; `vector` loads pgvector;
   * `onProgress` hears about the creation of a new one (`templateDir`: see ensureInitialisedDataDir).
   */
  static async open(
    dataDir: string,
    schema: string,
    options: { vector?: boolean; onProgress?: ((progress: DataDirProgress) => void) | undefined; templateDir?: string | null } = {},
  ): Promise<PgliteDatabase> {
    const extensions = options.vector === true ? await vectorExtension() : {};
    if (dataDir === MEMORY_DATA_DIR) {
      const pglite = await PGlite.create({ extensions, startParams: pgliteStartParams() });
      return new PgliteDatabase(pglite, schema, MEMORY_DATA_DIR, null);
    }
    if (dataDir.trim() === "" || dataDir.includes("\0")) {
      throw new DatabaseError("DATA_DIR_INVALID", `DEVMIND_DATA_DIR must be a directory path, got ${JSON.stringify(dataDir)}`, {
        details: { variable: "DEVMIND_DATA_DIR" },
      });
    }
    const root = resolve(dataDir);
    try {
      mkdirSync(root, { recursive: true });
    } catch (error) {
      throw new DatabaseError("DATA_DIR_INVALID", `cannot create data directory ${root}: ${(error as Error).message}`, {
        details: { variable: "DEVMIND_DATA_DIR", path: root },
        cause: error,
      });
    }
    const pgdata = join(root, PGLITE_SUBDIR);
    const lock = acquireLockFile(join(root, PGLITE_LOCK_FILE), `the embedded database in ${pgdata}`);
    try {
      const made = await ensureInitialisedDataDir(pgdata, { onProgress: options.onProgress, templateDir: options.templateDir });
      const pglite = await openFresh(pgdata, extensions, made.source === "template", options.onProgress);
      // the template is migrated in the default schema: a database for another schema starts without it
      if (made.source === "template" && schema !== CONFIG_DEFAULTS.dbSchema) {
        await pglite.exec(`DROP SCHEMA IF EXISTS ${quoteIdentifier(CONFIG_DEFAULTS.dbSchema)} CASCADE`);
      }
      return new PgliteDatabase(pglite, schema, pgdata, lock);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  announceServer(url: string, ownerKey?: string): void {
    this.lock?.announce(url, ownerKey);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pglite.transaction((tx) => fn(new PgliteQueryable(tx, this.location)));
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const name = validateChannelName(channel);
    if (this.closed) throw new DatabaseError("DATABASE_UNREACHABLE", `the embedded database at ${this.location} was closed`, { details: { location: this.location } });
    // a fresh function per call: PGlite keeps callbacks in a Set, and two subscriptions with one
    // callback must stay two
    const unlisten = await this.pglite.listen(name, (payload) => onPayload(payload));
    let active = true;
    return async () => {
      if (!active || this.closed) return;
      active = false;
      await unlisten();
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.pglite.close();
    } finally {
      this.lock?.release();
    }
  }
}
