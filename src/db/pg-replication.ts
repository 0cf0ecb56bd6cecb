import pg from "pg";
import { PG_TOPOLOGY_DEFAULTS } from "../constants.js";
import type { Logger } from "../logger.js";
import type { PrimaryLocator } from "./pg-primary.js";
import type { PgHost } from "./pg-url.js";
import type { Queryable } from "./types.js";

/** What `checkReplication` found about one standby of a multi-host URL. */
export interface StandbyReport {
  host: string;
  state: "streaming" | "unreachable" | "not_a_standby";
  /** Bytes of WAL the standby has not replayed yet (null when unknown). */
  lagBytes: number | null;
  replayPaused: boolean;
}

/** What the primary says about its replication, and each other host of the URL. */
export interface ReplicationReport {
  primary: string;
  /** The primary's `synchronous_standby_names`: empty means commits do not wait for any standby. */
  synchronousStandbyNames: string;
  standbys: StandbyReport[];
}

/**
 * Checks the hosts of a multi-host DATABASE_URL besides the primary, and logs what puts a
 * failover at risk: replication that is asynchronous (`database.replication_async`: a promoted
 * standby may lack the last commits — among them the ledger rows saying a tool call started, so
 * the call could run again), and a standby that lags (`database.standby_lagging`, replay
 * `standbyLagWarnBytes` or more behind, or paused) or cannot be reached
 * (`database.standby_unreachable`). Runs go on either way: they only ever write to the primary.
 */
export async function checkReplication(primary: Queryable, locator: PrimaryLocator, logger: Logger): Promise<ReplicationReport> {
  const state = await primary.query<{ names: string; lsn: string }>("SELECT current_setting('synchronous_standby_names') AS names, pg_current_wal_lsn()::text AS lsn");
  const names = state.rows[0]?.names ?? "";
  const primaryLsn = state.rows[0]?.lsn ?? "0/0";
  const primaryName = locator.currentName();
  const others = locator.target.hosts.filter((host) => locator.target.nameOf(host) !== primaryName);
  const standbys = await Promise.all(others.map((host) => inspectStandby(locator, host, primaryLsn)));
  const variable = "DATABASE_URL";
  if (names.trim() === "" && standbys.length > 0) {
    logger.warn(
      { event: "database.replication_async", primary: primaryName, standbys: standbys.map((s) => s.host) },
      `${variable} lists standbys (${standbys.map((s) => s.host).join(", ")}), but the primary ${primaryName} replicates asynchronously ` +
        `(synchronous_standby_names is empty): after a failover the promoted standby may lack the last commits, and a tool call ` +
        `already made could run again. Set synchronous_standby_names on the primary (docs/database-operations.md, Poolers and failover).`,
    );
  }
  for (const standby of standbys) {
    if (standby.state === "unreachable") {
      logger.warn({ event: "database.standby_unreachable", standby: standby.host }, `standby ${standby.host} of ${variable} cannot be reached: a failover to it would not be possible now`);
    } else if (standby.state === "not_a_standby") {
      logger.warn({ event: "database.standby_not_in_recovery", standby: standby.host, primary: primaryName }, `${standby.host} of ${variable} is not in recovery although ${primaryName} is the primary: two hosts accept writes (split brain?); devmind writes to ${primaryName} only`);
    } else if (standby.replayPaused || (standby.lagBytes ?? 0) >= PG_TOPOLOGY_DEFAULTS.standbyLagWarnBytes) {
      logger.warn(
        { event: "database.standby_lagging", standby: standby.host, lag_bytes: standby.lagBytes, replay_paused: standby.replayPaused },
        `standby ${standby.host} of ${variable} lags the primary ${primaryName}: ${standby.lagBytes ?? "?"} bytes of WAL not replayed` +
          `${standby.replayPaused ? " (replay is paused: pg_wal_replay_resume() on it)" : ""}; a failover to it waits for the replay` +
          `${names.trim() === "" ? ", and loses what it never received" : ""}`,
      );
    }
  }
  return { primary: primaryName, synchronousStandbyNames: names, standbys };
}

async function inspectStandby(locator: PrimaryLocator, host: PgHost, primaryLsn: string): Promise<StandbyReport> {
  const name = locator.target.nameOf(host);
  const client = new pg.Client({ connectionString: locator.target.urlFor(host), connectionTimeoutMillis: PG_TOPOLOGY_DEFAULTS.hostProbeTimeoutMs, application_name: "devmind-replication-check" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ standby: boolean; lag: string | null; paused: boolean | null }>(
      `SELECT pg_is_in_recovery() AS standby,
              pg_wal_lsn_diff($1::pg_lsn, COALESCE(pg_last_wal_replay_lsn(), '0/0'::pg_lsn))::text AS lag,
              CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END AS paused`,
      [primaryLsn],
    );
    const row = result.rows[0];
    if (row?.standby !== true) return { host: name, state: "not_a_standby", lagBytes: null, replayPaused: false };
    return { host: name, state: "streaming", lagBytes: row.lag === null ? null : Math.max(0, Number(row.lag)), replayPaused: row.paused === true };
  } catch {
    return { host: name, state: "unreachable", lagBytes: null, replayPaused: false };
  } finally {
    await client.end().catch(() => undefined);
  }
}
