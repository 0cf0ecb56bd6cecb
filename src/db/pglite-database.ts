import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { MEMORY_DATA_DIR, PGLITE_LOCK_FILE, PGLITE_SUBDIR } from "../constants.js";
import { DatabaseError } from "../errors.js";
import { validateChannelName } from "./channels.js";
import { acquireLockFile, type HeldLock } from "./lock-file.js";
import type { Database, Queryable, QueryResult, Row, Statement } from "./types.js";

type PgliteRunner = Pick<PGlite, "query" | "exec"> | Transaction;

class PgliteQueryable implements Queryable {
  constructor(protected readonly runner: PgliteRunner) {}

  async query<R = Row>(sql: string | Statement, values: readonly unknown[] = []): Promise<QueryResult<R>> {
    const text = typeof sql === "string" ? sql : sql.text;
    const result = await this.runner.query<R>(text, values as unknown[]);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  }

  async execScript(sql: string): Promise<void> {
    await this.runner.exec(sql);
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
    super(pglite);
  }

  /** Opens (creating if needed) the embedded database for `dataDir`. */
  static async open(dataDir: string, schema: string): Promise<PgliteDatabase> {
    if (dataDir === MEMORY_DATA_DIR) {
      const pglite = await PGlite.create();
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
      const pglite = await PGlite.create(pgdata);
      return new PgliteDatabase(pglite, schema, pgdata, lock);
    } catch (error) {
      lock.release();
      throw new DatabaseError("DATA_DIR_INVALID", `cannot open the embedded database in ${pgdata}: ${(error as Error).message}`, {
        details: { path: pgdata },
        cause: error,
      });
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pglite.transaction((tx) => fn(new PgliteQueryable(tx)));
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
