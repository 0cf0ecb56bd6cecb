import { randomBytes } from "node:crypto";
import pg from "pg";
import { toDatabaseFault } from "../../src/db/database-faults.js";
import { throughQueryable, type Database, type Queryable, type Statement } from "../../src/db/types.js";
import { TEST_DATABASE_URL } from "./databases.js";

/**
 * A PostgreSQL database of its own for a fault test, on the test server: faults are made by
 * terminating the backends of this database only (never the server's others), or by making it
 * read-only, so parallel tests and other users of the server are not touched.
 */
export interface FaultDatabase {
  /** Name of the database. */
  readonly name: string;
  /** URL of the database (same server, user and options as the test URL). */
  readonly url: string;
  /** Terminates every backend connected to this database; returns how many were terminated. */
  killBackends(): Promise<number>;
  /** Makes new transactions of this database read-only (on) or writable (off), and drops every connection so it takes effect. */
  setReadOnly(on: boolean): Promise<void>;
  /** Runs SQL on the server's maintenance connection (outside the fault database). */
  admin(sql: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** Drops the database (connections forced out). */
  drop(): Promise<void>;
}

/** Creates a fresh database named `devmind_fault_…` on the test server. */
export async function createFaultDatabase(options: { tablespace?: string } = {}): Promise<FaultDatabase> {
  if (TEST_DATABASE_URL === undefined) throw new Error("fault tests need DEVMIND_TEST_DATABASE_URL");
  const name = `devmind_fault_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const adminUrl = new URL(TEST_DATABASE_URL);
  adminUrl.pathname = "/postgres";
  const admin = new pg.Pool({ connectionString: adminUrl.toString(), max: 2, application_name: "devmind-fault-admin" });
  admin.on("error", () => undefined);
  await admin.query(`CREATE DATABASE "${name}"${options.tablespace === undefined ? "" : ` TABLESPACE "${options.tablespace}"`}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const killBackends = async (): Promise<number> => {
    const result = await admin.query("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
    return (result.rows[0] as { n: number }).n;
  };
  return {
    name,
    url: url.toString(),
    killBackends,
    async setReadOnly(on) {
      await admin.query(`ALTER DATABASE "${name}" SET default_transaction_read_only = ${on ? "on" : "off"}`);
      await killBackends();
    },
    admin: (sql, values) => admin.query(sql, values),
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * A small disk for a database: a tmpfs mounted in a temp directory and a tablespace on it, so a
 * database created in it fills up for real (SQLSTATE 53100). Needs root (mount) and a PostgreSQL
 * server on this machine; returns null where either is missing, or when
 * DEVMIND_TEST_INJECT_DISK_FULL=1 asks to try the fallback (the caller then injects the failure
 * at the database seam).
 */
export interface SmallDisk {
  readonly tablespace: string;
  /** Removes the tablespace (its databases must be dropped first), unmounts and deletes the directory. */
  remove(): Promise<void>;
}

/** Mounts a tmpfs of `sizeMb` and creates a tablespace on it; null when this machine cannot. */
export async function createSmallDisk(sizeMb: number): Promise<SmallDisk | null> {
  if (TEST_DATABASE_URL === undefined || process.getuid?.() !== 0 || process.env["DEVMIND_TEST_INJECT_DISK_FULL"] === "1") return null;
  const host = new URL(TEST_DATABASE_URL).hostname;
  if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(host)) return null;
  const { execFileSync } = await import("node:child_process");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "devmind-smalldisk-"));
  const run = (command: string, args: string[]): boolean => {
    try {
      execFileSync(command, args, { stdio: "ignore", timeout: 30_000 });
      return true;
    } catch {
      return false;
    }
  };
  if (!run("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m,mode=0700`, "tmpfs", dir])) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  const unmount = (): void => {
    run("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  };
  if (!run("chown", ["postgres:postgres", dir])) {
    unmount();
    return null;
  }
  const tablespace = `devmind_small_${Date.now().toString(36)}`;
  const adminUrl = new URL(TEST_DATABASE_URL);
  adminUrl.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  admin.on("error", () => undefined);
  try {
    await admin.connect();
    await admin.query(`CREATE TABLESPACE "${tablespace}" LOCATION '${dir.replace(/'/g, "''")}'`);
  } catch {
    await admin.end().catch(() => undefined);
    unmount();
    return null;
  }
  return {
    tablespace,
    async remove() {
      try {
        await admin.query(`DROP TABLESPACE IF EXISTS "${tablespace}"`);
      } finally {
        await admin.end().catch(() => undefined);
        unmount();
      }
    },
  };
}

/**
 * Fills the database at `url` until PostgreSQL reports the disk full: a table of incompressible
 * rows grows until an insert fails with 53100. Returns a function that drops the table (the space
 * comes back at once).
 */
export async function fillDisk(url: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  const table = `devmind_filler_${Date.now().toString(36)}`;
  try {
    await client.query(`CREATE TABLE public."${table}" (x text)`);
    await client.query(`ALTER TABLE public."${table}" ALTER COLUMN x SET STORAGE EXTERNAL`);
    for (let round = 0; round < 10_000; round += 1) {
      try {
        await client.query(`INSERT INTO public."${table}" SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 64) g, generate_series(1, 32) r GROUP BY r`);
      } catch (error) {
        if ((error as { code?: string }).code === "53100") break;
        throw error;
      }
    }
  } finally {
    await client.end().catch(() => undefined);
  }
  return async () => {
    const dropper = new pg.Client({ connectionString: url });
    dropper.on("error", () => undefined);
    await dropper.connect();
    try {
      await dropper.query(`DROP TABLE IF EXISTS public."${table}"`);
    } finally {
      await dropper.end().catch(() => undefined);
    }
  };
}

/**
 * Where no small disk can be made: `db` with a switch that makes every statement that writes
 * (INSERT, UPDATE, DELETE, and WITH … INSERT/UPDATE) fail as a full disk does (SQLSTATE 53100,
 * wrapped by the seam's own classifier), reads still answering. `needsSpace(text)` picks the writes
 * that fail (default: all); a real full disk still takes a small in-place update.
 */
export function injectDiskFull(db: Database, needsSpace: (text: string) => boolean = () => true): { db: Database; setFull(on: boolean): void } {
  let full = false;
  const writes = (sql: string | Statement): boolean => {
    const text = typeof sql === "string" ? sql : sql.text;
    return /\b(INSERT|UPDATE|DELETE)\b/i.test(text) && needsSpace(text);
  };
  const failure = (): unknown =>
    toDatabaseFault(Object.assign(new Error('could not extend file "base/1/2": No space left on device'), { code: "53100" }), db.location);
  const wrap = (target: Queryable): Queryable => throughQueryable(target, (sql, send) => (full && writes(sql) ? Promise.reject(failure()) : send()));
  const wrapped = wrap(db);
  const faulty: Database = {
    kind: db.kind,
    schema: db.schema,
    location: db.location,
    query: wrapped.query,
    execScript: wrapped.execScript,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    close: () => db.close(),
  };
  return { db: faulty, setFull: (on) => (full = on) };
}
