import pg from "pg";
import { PG_TOPOLOGY_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { PgHost, PgUrl } from "./pg-url.js";

/** What one host of a multi-host URL answered when asked whether it accepts writes. */
export interface HostProbe {
  host: string;
  state: "primary" | "standby" | "unreachable";
  /** Why a host is unreachable (the driver's message), else empty. */
  detail: string;
}

/** The question every host is asked: a primary answers false. */
const IN_RECOVERY_SQL = "SELECT pg_is_in_recovery() AS standby";

/**
 * Which host of a (possibly multi-host) PostgreSQL URL new connections go to: the first, in the
 * URL's order, that accepts writes — libpq's `target_session_attrs=read-write`, which
 * node-postgres does not implement. Asked again (`locate`, at most every
 * `relocateMinIntervalMs`, one search at a time) when a connection to the current host fails or
 * it turns out to be a standby: that is a failover, logged as `database.primary_changed`.
 * With one host there is nothing to choose and nothing is probed.
 */
export class PrimaryLocator {
  private current: PgHost;
  private searching: Promise<PgHost> | null = null;
  private searchedAt = 0;

  constructor(
    readonly target: PgUrl,
    private readonly options: { variable: string; logger: Logger },
  ) {
    this.current = target.hosts[0] as PgHost;
  }

  /** More than one host: connections are checked to be on the primary, and failures look for another. */
  get multiHost(): boolean {
    return this.target.hosts.length > 1;
  }

  /** The single-host URL new connections use now. */
  currentUrl(): string {
    return this.target.urlFor(this.current);
  }

  /** `host:port` of the current host. */
  currentName(): string {
    return this.target.nameOf(this.current);
  }

  /**
   * Finds the primary: tries every host in order and takes the first that is not in recovery.
   * Throws DATABASE_UNREACHABLE naming what each host answered when none accepts writes (all
   * down, all standbys — e.g. in the seconds between a primary's death and a standby's promotion).
   */
  locate(): Promise<PgHost> {
    if (!this.multiHost) return Promise.resolve(this.current);
    if (this.searching !== null) return this.searching;
    if (Date.now() - this.searchedAt < PG_TOPOLOGY_DEFAULTS.relocateMinIntervalMs) return Promise.resolve(this.current);
    this.searching = this.search().finally(() => {
      this.searching = null;
      this.searchedAt = Date.now();
    });
    return this.searching;
  }

  /** A connection to the current host failed or it refused a write: look again in the background. */
  suspect(): void {
    if (this.multiHost) this.locate().catch(() => undefined);
  }

  private async search(): Promise<PgHost> {
    const answers: HostProbe[] = [];
    for (const host of this.target.hosts) {
      const answer = await this.probe(host);
      answers.push(answer);
      if (answer.state !== "primary") continue;
      if (host !== this.current) {
        const from = this.currentName();
        this.current = host;
        this.options.logger.warn({ event: "database.primary_changed", from, to: answer.host }, `the primary of ${this.options.variable} is now ${answer.host} (was ${from}); new connections go there`);
      }
      return host;
    }
    const states = answers.map((a) => (a.state === "standby" ? `${a.host} is a standby (in recovery)` : `${a.host} is unreachable (${a.detail})`)).join("; ");
    const allStandbys = answers.every((a) => a.state === "standby");
    throw new DatabaseError(
      "DATABASE_UNREACHABLE",
      `no host of ${this.options.variable} accepts writes, and devmind needs the primary: ${states}` +
        (allStandbys ? `. Every host is a standby: add the primary to ${this.options.variable}, or promote a standby` : ""),
      { details: { location: this.target.printable, cause: allStandbys ? "all_standbys" : "no_primary", hosts: answers } },
    );
  }

  private async probe(host: PgHost): Promise<HostProbe> {
    const name = this.target.nameOf(host);
    const client = new pg.Client({
      connectionString: this.target.urlFor(host),
      connectionTimeoutMillis: PG_TOPOLOGY_DEFAULTS.hostProbeTimeoutMs,
      application_name: "devmind-locate",
    });
    client.on("error", () => undefined);
    try {
      await client.connect();
      const result = await client.query<{ standby: boolean }>(IN_RECOVERY_SQL);
      return { host: name, state: result.rows[0]?.standby === true ? "standby" : "primary", detail: "" };
    } catch (error) {
      return { host: name, state: "unreachable", detail: error instanceof Error ? error.message : String(error) };
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** The SQL that tells a primary from a standby, for a connection's first check. */
export const PRIMARY_CHECK_SQL = IN_RECOVERY_SQL;
