import { randomBytes } from "node:crypto";
import pg from "pg";
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
