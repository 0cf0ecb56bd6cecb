import { randomUUID } from "node:crypto";
import pg from "pg";
import { PG_LISTEN_DEFAULTS, PG_POOL_DEFAULTS, PG_TOPOLOGY_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import type { Logger } from "../logger.js";
import { Backoff } from "./backoff.js";
import { validateChannelName } from "./channels.js";

/** Backoff between reconnect attempts of the listening connection: doubling, capped, jittered. */
const RECONNECT_BACKOFF = { firstMs: 100, maxMs: 5_000 } as const;

/** `application_name` of the listening connection, so it is recognisable in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = "devmind-listen";

/** The channel a listening connection behind a pooler sends itself a test notification on. */
export const LISTEN_PROBE_CHANNEL = "devmind_listen_probe";

type Handler = (payload: string) => void;

/** Where a PgListener connects and whom it tells what. */
export interface PgListenerOptions {
  /** The single-host URL to connect to now (it follows a failover). */
  url: () => string;
  printable: string;
  /** The configuration variable the URL came from, for messages. */
  variable: "DATABASE_URL" | "DEVMIND_DATABASE_DIRECT_URL";
  /** A connection attempt failed: the host may be gone. */
  onConnectFailed?: () => void;
  /** Sends a notification through the database's pool (the test behind a pooler). */
  notify: (channel: string, payload: string) => Promise<void>;
  logger: Logger;
  /** The watchdog's period and bound (default PG_LISTEN_DEFAULTS). */
  check?: { checkMs: number; checkTimeoutMs: number } | undefined;
}

/**
 * The LISTEN side of a PgDatabase: one dedicated `pg.Client` (a pooled connection cannot hold a
 * LISTEN) that carries every channel of the Database. Connected on first `listen`; when it drops
 * it is replaced with bounded backoff and every channel is listened again. Notifications sent
 * while it is down are lost — callers keep a bounded poll as fallback.
 *
 * All LISTEN/UNLISTEN work goes through one queue that reconciles the server's channels with the
 * wanted ones, so interleaved listen/unlisten calls and reconnects cannot leave it out of step.
 *
 * Behind a connection pooler (its connection id is not the server backend's pid) the connection
 * first sends itself a notification: a transaction pooler (PgBouncer's `pool_mode = transaction`)
 * hands the LISTEN's server connection to others after the statement, so it never arrives. Then
 * every `listen` rejects with DATABASE_LISTEN_UNAVAILABLE — callers fall back to their bounded
 * polls — and the reason is logged once (`database.listen_unavailable`), naming
 * DEVMIND_DATABASE_DIRECT_URL.
 *
 * A connection that only listens sends nothing, so one that died silently (a network partition,
 * a vanished host: no FIN, no RST) would never be noticed and every notification after it lost.
 * A watchdog asks it `SELECT 1` every `checkMs`; without an answer within `checkTimeoutMs` it is
 * destroyed (logged once, `database.listen_lost`) and replaced as any dropped connection is.
 */
export class PgListener {
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Channels without handlers still LISTENed for a while (PG_POOL_DEFAULTS.listenLingerMs), each with the timer that ends it. */
  private readonly lingering = new Map<string, NodeJS.Timeout>();
  private client: pg.Client | null = null;
  private listening = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly reconnectBackoff = new Backoff(RECONNECT_BACKOFF);
  private closed = false;
  /** Set once LISTEN proved useless over this URL (a transaction pooler); never cleared. */
  private unavailable: DatabaseError | null = null;
  private readonly printable: string;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly check: { checkMs: number; checkTimeoutMs: number };

  constructor(private readonly options: PgListenerOptions) {
    this.printable = options.printable;
    this.check = options.check ?? PG_LISTEN_DEFAULTS;
  }

  /** See `Database.listen`. Rejects (and registers nothing) if the LISTEN cannot be made now. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const name = validateChannelName(channel);
    if (this.closed) throw closedError(this.printable);
    if (this.unavailable !== null) throw this.unavailable;
    // a fresh function per call: the same callback listened twice is two subscriptions
    const handler: Handler = (payload) => onPayload(payload);
    const set = this.handlers.get(name) ?? new Set<Handler>();
    this.handlers.set(name, set);
    set.add(handler);
    this.stopLingering(name);
    try {
      await this.sync();
    } catch (error) {
      this.remove(name, handler);
      throw mapListenError(error, this.printable);
    }
    let active = true;
    return async () => {
      if (!active) return;
      active = false;
      this.remove(name, handler);
      if (this.closed || this.handlers.has(name)) return;
      if (!this.listening.has(name)) return void (await this.sync().catch(() => undefined));
      // the channel stays LISTENed a while for the next listener (no UNLISTEN + LISTEN between two streams)
      this.stopLingering(name);
      const timer = setTimeout(() => {
        this.lingering.delete(name);
        if (!this.closed) void this.sync().catch(() => undefined);
      }, PG_POOL_DEFAULTS.listenLingerMs);
      timer.unref?.();
      this.lingering.set(name, timer);
    };
  }

  private stopLingering(name: string): void {
    const timer = this.lingering.get(name);
    if (timer !== undefined) clearTimeout(timer);
    this.lingering.delete(name);
  }

  /** Ends the listening connection and forgets every handler. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handlers.clear();
    for (const name of [...this.lingering.keys()]) this.stopLingering(name);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.stopWatchdog();
    const client = this.client;
    this.client = null;
    // ended first: a statement in flight on a dead connection (a LISTEN, the watchdog's check) is
    // failed at once (pg destroys the socket of a client with an active query), so the queue settles
    const ended = client?.end().catch(() => undefined);
    await this.queue;
    await ended;
  }

  private remove(name: string, handler: Handler): void {
    const set = this.handlers.get(name);
    set?.delete(handler);
    if (set?.size === 0) this.handlers.delete(name);
  }

  private sync(): Promise<void> {
    const run = this.queue.then(() => this.reconcile());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async reconcile(): Promise<void> {
    if (this.closed) return;
    // a LISTEN queued behind the one that found a transaction pooler fails the same way, without probing (and logging) again
    if (this.unavailable !== null) throw this.unavailable;
    if (this.handlers.size === 0 && this.client === null) return;
    const client = this.client ?? (await this.connect());
    for (const name of this.handlers.keys()) {
      if (this.listening.has(name)) continue;
      await client.query(`LISTEN "${name}"`);
      this.listening.add(name);
    }
    for (const name of [...this.listening]) {
      if (this.handlers.has(name) || this.lingering.has(name)) continue;
      await client.query(`UNLISTEN "${name}"`);
      this.listening.delete(name);
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.url(),
      connectionTimeoutMillis: PG_POOL_DEFAULTS.connectionTimeoutMillis,
      application_name: LISTENER_APPLICATION_NAME,
      // an idle connection to a vanished peer is closed by the kernel (its own default waits 2 hours)
      keepAlive: true,
      keepAliveInitialDelayMillis: PG_POOL_DEFAULTS.keepAliveInitialDelayMs,
      // the first statements (the session check, LISTEN) are bounded too: a half-open connection fails them
      query_timeout: PG_POOL_DEFAULTS.queryTimeoutMs,
    });
    client.on("notification", (message) => this.dispatch(message.channel, message.payload ?? ""));
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      this.options.onConnectFailed?.();
      throw error;
    }
    try {
      await this.checkSession(client);
    } catch (error) {
      client.removeAllListeners("end");
      client.removeAllListeners("error");
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw closedError(this.printable);
    }
    this.client = client;
    this.listening = new Set();
    this.reconnectBackoff.reset();
    this.startWatchdog(client);
    return client;
  }

  private startWatchdog(client: pg.Client): void {
    this.stopWatchdog();
    this.watchdog = setInterval(() => {
      // through the queue: one statement at a time on this connection, never beside a LISTEN
      this.queue = this.queue.then(() => this.ping(client)).catch(() => undefined);
    }, this.check.checkMs);
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  /** `SELECT 1` on the listening connection; no answer within the bound: destroyed, and so replaced. */
  private async ping(client: pg.Client): Promise<void> {
    if (this.closed || this.client !== client) return;
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      client.query("SELECT 1").then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.check.checkTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (answered || this.closed || this.client !== client) return;
    this.options.logger.warn(
      { event: "database.listen_lost", location: this.printable, timeout_ms: this.check.checkTimeoutMs },
      `the LISTEN connection to ${this.printable} did not answer within ${this.check.checkTimeoutMs} ms: taken for dead and replaced (notifications meanwhile are lost; callers poll)`,
    );
    destroyConnection(client);
    this.lost(client);
  }

  /**
   * A connection whose id is not its backend's pid goes through a pooler: it must prove that a
   * notification reaches it, or LISTEN is declared unavailable for good (and said once in the log).
   */
  private async checkSession(client: pg.Client): Promise<void> {
    const result = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    if ((client as unknown as { processID: number | null }).processID === result.rows[0]?.pid) return;
    const nonce = randomUUID();
    let heard = false;
    const onProbe = (message: pg.Notification): void => {
      if (message.channel === LISTEN_PROBE_CHANNEL && message.payload === nonce) heard = true;
    };
    client.on("notification", onProbe);
    try {
      await client.query(`LISTEN "${LISTEN_PROBE_CHANNEL}"`);
      await this.options.notify(LISTEN_PROBE_CHANNEL, nonce);
      const until = Date.now() + PG_TOPOLOGY_DEFAULTS.listenProbeMs;
      while (!heard && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      await client.query(`UNLISTEN "${LISTEN_PROBE_CHANNEL}"`).catch(() => undefined);
    } finally {
      client.removeListener("notification", onProbe);
    }
    if (heard) return;
    const direct = this.options.variable === "DEVMIND_DATABASE_DIRECT_URL";
    const message =
      `${this.options.variable} (${this.printable}) goes through a connection pooler that does not keep sessions ` +
      `(PgBouncer with pool_mode = transaction, or a hosted pooler): LISTEN/NOTIFY cannot work over it. ` +
      (direct
        ? "DEVMIND_DATABASE_DIRECT_URL must reach PostgreSQL itself (or a session-mode pooler). "
        : "Set DEVMIND_DATABASE_DIRECT_URL to a direct connection to PostgreSQL (or a session-mode pooler) for instant wake-ups. ") +
      "Until then workers, run waits and streams poll the database instead (every second or less).";
    this.unavailable = new DatabaseError("DATABASE_LISTEN_UNAVAILABLE", message, { details: { location: this.printable, variable: this.options.variable } });
    this.options.logger.warn({ event: "database.listen_unavailable", location: this.printable, variable: this.options.variable }, message);
    throw this.unavailable;
  }

  private dispatch(channel: string, payload: string): void {
    for (const handler of [...(this.handlers.get(channel) ?? [])]) {
      try {
        handler(payload);
      } catch {
        // one broken subscriber must not starve the others
      }
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.stopWatchdog();
    this.client = null;
    this.listening = new Set();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.unavailable !== null || this.retryTimer !== null || this.handlers.size === 0) return;
    const delay = this.reconnectBackoff.next();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.sync().catch(() => this.scheduleReconnect());
    }, delay);
    // a pending reconnect alone must not keep the process alive
    this.retryTimer.unref();
  }
}

/** Closes a client's socket at once: `end()` would wait for the answer of a statement that never comes. */
function destroyConnection(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

function closedError(printable: string): DatabaseError {
  return new DatabaseError("DATABASE_UNREACHABLE", `the database at ${printable} was closed`, { details: { location: printable } });
}

function mapListenError(error: unknown, printable: string): unknown {
  if (error instanceof DatabaseError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DatabaseError("DATABASE_UNREACHABLE", `cannot listen for notifications on PostgreSQL at ${printable}: ${message}`, {
    details: { location: printable },
    cause: error,
  });
}
