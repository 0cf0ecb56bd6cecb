import pg from "pg";
import { LIVENESS_DEFAULTS, PG_POOL_DEFAULTS } from "../constants.js";
import type { Logger } from "../logger.js";
import { Backoff } from "./backoff.js";

/** `application_name` of the lock's connection, so it is recognisable in pg_stat_activity. */
export const SESSION_LOCK_APPLICATION_NAME = "devmind-liveness";

/** Where a session lock connects: a single-host URL that keeps sessions (no transaction pooler). */
export interface SessionLockTarget {
  /** The URL to connect to now (it follows a failover). */
  url: () => string;
  printable: string;
}

/**
 * A session-level advisory lock `(namespace, key)` held on a dedicated connection for the life of
 * the process: PostgreSQL frees it when the process dies (its connection closes), which is how
 * other processes see the death at once. If the connection drops while the process lives (a
 * restart, a failover), it is reconnected with backoff and the lock taken again; meanwhile the
 * process's runs may be recovered by others, and the lease fences its late writes.
 */
export class SessionLock {
  private client: pg.Client | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly backoff = new Backoff({ firstMs: LIVENESS_DEFAULTS.reconnectFirstMs, maxMs: LIVENESS_DEFAULTS.reconnectMaxMs });

  private constructor(
    private readonly target: SessionLockTarget,
    readonly namespace: number,
    readonly key: number,
    private readonly logger: Logger,
    /** Called after the lock was taken again on a new connection (to re-register, say). */
    private readonly onRelocked: () => Promise<void>,
  ) {}

  /**
   * Connects and takes the lock with one of `keys()` (tried in turn while another process holds
   * it). Resolves to null when the connection turns out to go through a pooler (its connection id
   * is not the server backend's pid: a session lock would not outlive the statement) or no key
   * was free; throws what connecting threw.
   */
  static async take(
    target: SessionLockTarget,
    namespace: number,
    keys: () => number,
    logger: Logger,
    onRelocked: () => Promise<void> = async () => undefined,
  ): Promise<{ lock: SessionLock } | { lock: null; why: "pooler" | "keys" }> {
    const client = await connect(target);
    try {
      const backend = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      const processId = (client as unknown as { processID: number | null }).processID;
      if (processId !== null && processId !== backend.rows[0]?.pid) {
        await client.end().catch(() => undefined);
        return { lock: null, why: "pooler" };
      }
      for (let attempt = 0; attempt < LIVENESS_DEFAULTS.keyAttempts; attempt += 1) {
        const key = keys();
        const taken = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::integer, $2::integer) AS ok", [namespace, key]);
        if (taken.rows[0]?.ok === true) {
          const lock = new SessionLock(target, namespace, key, logger, onRelocked);
          lock.attach(client);
          return { lock };
        }
      }
      await client.end().catch(() => undefined);
      return { lock: null, why: "keys" };
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** Whether the lock is held now (false while its connection is being replaced). */
  get held(): boolean {
    return this.client !== null;
  }

  /** Releases the lock (closes its connection). Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private attach(client: pg.Client): void {
    this.client = client;
    const lost = (error?: unknown): void => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger.warn(
        { event: "liveness.lost", location: this.target.printable, error: error instanceof Error ? error.message : null },
        "the liveness lock's connection dropped: other processes may recover this process's runs (its leases fence what it writes late); taking the lock again",
      );
      this.retry();
    };
    client.on("error", lost);
    client.on("end", () => lost());
  }

  private retry(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.relock();
    }, this.backoff.next());
    this.timer.unref?.();
  }

  /** Runs `onRelocked` until it succeeds (a database refusing writes for a while), while the lock is held. */
  private async afterRelock(): Promise<void> {
    const backoff = new Backoff({ firstMs: LIVENESS_DEFAULTS.reconnectFirstMs, maxMs: LIVENESS_DEFAULTS.reconnectMaxMs });
    while (!this.closed && this.client !== null) {
      try {
        await this.onRelocked();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, backoff.next()).unref?.());
      }
    }
  }

  private async relock(): Promise<void> {
    let client: pg.Client | null = null;
    try {
      client = await connect(this.target);
      const taken = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::integer, $2::integer) AS ok", [this.namespace, this.key]);
      // the old session may still be ending on the server: try again shortly
      if (taken.rows[0]?.ok !== true) throw new Error("the lock is still held by the old session");
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.attach(client);
      this.backoff.reset();
      this.logger.info({ event: "liveness.held", location: this.target.printable }, "the liveness lock is held again");
      await this.afterRelock();
    } catch {
      await client?.end().catch(() => undefined);
      this.retry();
    }
  }
}

async function connect(target: SessionLockTarget): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: target.url(),
    application_name: SESSION_LOCK_APPLICATION_NAME,
    connectionTimeoutMillis: PG_POOL_DEFAULTS.connectionTimeoutMillis,
    // a half-open TCP connection (a host that vanished) is noticed by the kernel's keepalive, after
    // this much idle time rather than the kernel's default 2 hours
    keepAlive: true,
    keepAliveInitialDelayMillis: PG_POOL_DEFAULTS.keepAliveInitialDelayMs,
    // taking the lock (at start and after a reconnect) is bounded: a relock that hung would never retry
    query_timeout: PG_POOL_DEFAULTS.queryTimeoutMs,
  });
  // an error before `attach` must not be unhandled
  client.on("error", () => undefined);
  await client.connect();
  return client;
}
