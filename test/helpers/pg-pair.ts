import { rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./pgbouncer.js";
import { pgWorkDir } from "./pg-cluster.js";

/** A primary and a streaming standby made by this test, in a temporary directory. */
export interface PgPair {
  readonly primaryPort: number;
  readonly standbyPort: number;
  /** A URL of one node, or of both (`hosts: "both"`), on database `postgres`. */
  url(hosts: "primary" | "standby" | "both"): string;
  /** Runs one statement on a node. */
  sql(node: "primary" | "standby", text: string): Promise<pg.QueryResult>;
  /** The primary dies at once (`pg_ctl stop -m immediate`: no shutdown checkpoint, as a crash). */
  killPrimary(): Promise<void>;
  /** `pg_ctl promote`: the standby replays what it received and accepts writes. */
  promoteStandby(): Promise<void>;
  /** Stops both nodes and removes every file. */
  destroy(): Promise<void>;
}

/**
 * Makes a primary (initdb, trust auth, loopback only, `fsync=off`) and a standby streaming from
 * it (`pg_basebackup -R`), each on a free port. `synchronous`: the primary waits for the standby to
 * flush each commit (`synchronous_standby_names='*'`, given on the primary's command line so the
 * standby, once promoted, does not wait for a standby of its own). As root, the programs run as
 * `postgres`. About 6 s on a 2-core machine, mostly initdb.
 */
export async function createPgPair(options: { synchronous: boolean }): Promise<PgPair> {
  const { dir, exec, common: local } = await pgWorkDir("devmind-pgpair-");
  const primaryPort = await freePort();
  const standbyPort = await freePort();
  const primaryDir = join(dir, "primary");
  const standbyDir = join(dir, "standby");
  const common = `${local} -c max_connections=60`;
  let started: string[] = [];
  const destroy = async (): Promise<void> => {
    for (const data of started) await exec("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    started = [];
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await exec("initdb", ["-D", primaryDir, "-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions"]);
    const sync = options.synchronous ? " -c synchronous_standby_names=*" : "";
    await exec("pg_ctl", ["-D", primaryDir, "-o", `-p ${primaryPort} ${common}${sync}`, "-l", join(dir, "primary.log"), "-w", "start"]);
    started.push(primaryDir);
    await exec("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", standbyDir, "-R", "-X", "stream", "-c", "fast", "--no-sync"]);
    await exec("pg_ctl", ["-D", standbyDir, "-o", `-p ${standbyPort} ${common}`, "-l", join(dir, "standby.log"), "-w", "start"]);
    started.push(standbyDir);
  } catch (error) {
    await destroy();
    throw error;
  }
  const host = (port: number): string => `127.0.0.1:${port}`;
  const pair: PgPair = {
    primaryPort,
    standbyPort,
    url(hosts) {
      const list = hosts === "primary" ? host(primaryPort) : hosts === "standby" ? host(standbyPort) : `${host(primaryPort)},${host(standbyPort)}`;
      return `postgres://postgres@${list}/postgres${hosts === "both" ? "?target_session_attrs=read-write" : ""}`;
    },
    async sql(node, text) {
      const client = new pg.Client({ connectionString: pair.url(node) });
      await client.connect();
      try {
        return await client.query(text);
      } finally {
        await client.end();
      }
    },
    async killPrimary() {
      await exec("pg_ctl", ["-D", primaryDir, "-m", "immediate", "-w", "stop"]);
      started = started.filter((d) => d !== primaryDir);
    },
    async promoteStandby() {
      await exec("pg_ctl", ["-D", standbyDir, "-w", "-t", "30", "promote"]);
    },
    destroy,
  };
  return pair;
}
