import { randomBytes } from "node:crypto";
import pg from "pg";
import { toDatabaseFault } from "../../src/db/database-faults.js";
import { throughQueryable, type Database, type Queryable, type Statement } from "../../src/db/types.js";
import { REQUIRE_POSTGRES, TEST_DATABASE_URL } from "./databases.js";
import { createPgCluster, type PgCluster } from "./pg-cluster.js";

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

/**
 * Creates a fresh database named `devmind_fault_…` on the test server, or on `serverUrl` (a
 * small disk's own cluster: `SmallDisk.serverUrl`), in `tablespace` when given.
 */
export async function createFaultDatabase(options: { tablespace?: string; serverUrl?: string } = {}): Promise<FaultDatabase> {
  const server = options.serverUrl ?? TEST_DATABASE_URL;
  if (server === undefined) throw new Error("fault tests need DEVMIND_TEST_DATABASE_URL");
  const name = `devmind_fault_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const adminUrl = new URL(server);
  adminUrl.pathname = "/postgres";
  const admin = new pg.Pool({ connectionString: adminUrl.toString(), max: 2, application_name: "devmind-fault-admin" });
  admin.on("error", () => undefined);
  await admin.query(`CREATE DATABASE "${name}"${options.tablespace === undefined ? "" : ` TABLESPACE "${options.tablespace}"`}`);
  const url = new URL(server);
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
 * A small disk for a database: a tmpfs mounted in a temp directory and a tablespace on it, in a
 * PostgreSQL cluster of its own started for it (`createPgCluster`), so a database created in it
 * fills up for real (SQLSTATE 53100) and no other test's session meets the full tablespace (a
 * shared server's sessions would, when they evict its dirty buffers).
 */
export interface SmallDisk {
  readonly tablespace: string;
  /** The URL of its cluster (database `postgres`): give it to `createFaultDatabase({ serverUrl })`. */
  readonly serverUrl: string;
  /** Stops and removes the cluster, unmounts and deletes the directory. */
  remove(): Promise<void>;
}

/**
 * What `createSmallDisk` made: a small disk; `inject` where this machine cannot mount a tmpfs
 * (not root) or DEVMIND_TEST_INJECT_DISK_FULL=1 asks for the fallback (the caller injects the
 * failure at the database seam); `skip` where the tmpfs was made but no cluster could be
 * started (no server programs, initdb failing), with why.
 */
export type SmallDiskOutcome = { kind: "disk"; disk: SmallDisk } | { kind: "inject" } | { kind: "skip"; why: string };

/**
 * Mounts a tmpfs of `sizeMb`, starts a cluster of its own and creates a tablespace on the tmpfs.
 * Where no cluster can be made it answers `skip`, or throws when DEVMIND_REQUIRE_POSTGRES=1 (a
 * run that requires PostgreSQL must not skip the full-disk cases).
 */
export async function createSmallDisk(sizeMb: number): Promise<SmallDiskOutcome> {
  if (process.getuid?.() !== 0 || process.env["DEVMIND_TEST_INJECT_DISK_FULL"] === "1") return { kind: "inject" };
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
    return { kind: "inject" };
  }
  const unmount = (): void => {
    // lazily when busy: the directory never stays mounted
    if (!run("umount", [dir])) run("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  };
  let cluster: PgCluster | undefined;
  try {
    if (!run("chown", ["postgres:postgres", dir])) throw new Error(`cannot give ${dir} to the postgres user`);
    cluster = await createPgCluster();
    const tablespace = `devmind_small_${Date.now().toString(36)}`;
    await cluster.sql(`CREATE TABLESPACE "${tablespace}" LOCATION '${dir.replace(/'/g, "''")}'`);
    const made = cluster;
    return {
      kind: "disk",
      disk: {
        tablespace,
        serverUrl: made.url(),
        async remove() {
          try {
            await made.destroy();
          } finally {
            unmount();
          }
        },
      },
    };
  } catch (error) {
    await cluster?.destroy().catch(() => undefined);
    unmount();
    const why = `no PostgreSQL cluster of its own for a small disk: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
    if (REQUIRE_POSTGRES) throw new Error(`${why} (DEVMIND_REQUIRE_POSTGRES=1)`);
    return { kind: "skip", why };
  }
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
