import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./pgbouncer.js";

const run = promisify(execFile);

/** The newest local PostgreSQL's programs (initdb, pg_ctl, pg_basebackup), or undefined. */
export const PG_BIN = (() => {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  const bin = versions.map((v) => join(root, v, "bin")).find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_basebackup")));
  return bin;
})();

/** A temporary directory for local clusters, and a way to run PostgreSQL's programs on it. */
export interface PgWorkDir {
  readonly dir: string;
  /** Runs one of PG_BIN's programs (as `postgres` when this process is root), bounded to 60 s. */
  exec(program: string, args: string[]): Promise<void>;
  /** Server options every local cluster starts with: its socket in `dir`, loopback only, no fsync. */
  readonly common: string;
}

/** Makes a temporary directory for local clusters (owned by `postgres` when this process is root: the server refuses to run as root). */
export async function pgWorkDir(prefix: string): Promise<PgWorkDir> {
  if (PG_BIN === undefined) throw new Error("no PostgreSQL server programs under /usr/lib/postgresql");
  const bin = PG_BIN;
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return {
    dir,
    exec: async (program, args) => {
      const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]] : [join(bin, program), args];
      await run(file, argv, { timeout: 60_000 });
    },
    common: `-k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=16MB`,
  };
}

/** One PostgreSQL cluster made by a test (initdb in a temporary directory), alone on a free port. */
export interface PgCluster {
  readonly port: number;
  /** Its URL on `database` (default `postgres`), user `postgres`, trust auth. */
  url(database?: string): string;
  /** Runs one statement on database `postgres`. */
  sql(text: string): Promise<pg.QueryResult>;
  /** Stops it (`-m immediate`) and removes every file; safe to call twice. */
  destroy(): Promise<void>;
}

/**
 * Makes and starts a cluster of its own (initdb, trust auth, loopback only, `fsync=off`), so a
 * test that harms its server (fills a tablespace, kills it) touches no other test's sessions.
 * As root, the programs run as `postgres`. About 3 to 6 s on a 2-core machine, mostly initdb.
 * Throws where it cannot (no server programs, initdb or start failing).
 */
export async function createPgCluster(options: { maxConnections?: number } = {}): Promise<PgCluster> {
  const work = await pgWorkDir("devmind-pgcluster-");
  const port = await freePort();
  const data = join(work.dir, "data");
  let started = false;
  const destroy = async (): Promise<void> => {
    if (started) await work.exec("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    started = false;
    rmSync(work.dir, { recursive: true, force: true });
  };
  try {
    await work.exec("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions"]);
    await work.exec("pg_ctl", ["-D", data, "-o", `-p ${port} ${work.common} -c max_connections=${options.maxConnections ?? 100}`, "-l", join(work.dir, "server.log"), "-w", "start"]);
    started = true;
  } catch (error) {
    await destroy();
    throw error;
  }
  const cluster: PgCluster = {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async sql(text) {
      const client = new pg.Client({ connectionString: cluster.url() });
      await client.connect();
      try {
        return await client.query(text);
      } finally {
        await client.end();
      }
    },
    destroy,
  };
  return cluster;
}
