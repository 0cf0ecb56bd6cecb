import pg from "pg";
import { PG_POOL_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import { Backoff } from "./backoff.js";
import { validateChannelName } from "./channels.js";

/** Backoff between reconnect attempts of the listening connection: doubling, capped, jittered. */
const RECONNECT_BACKOFF = { firstMs: 100, maxMs: 5_000 } as const;

/** `application_name` of the listening connection, so it is recognisable in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = "devmind-listen";

type Handler = (payload: string) => void;

/**
 * The LISTEN side of a PgDatabase: one dedicated `pg.Client` (a pooled connection cannot hold a
 * LISTEN) that carries every channel of the Database. Connected on first `listen`; when it drops
 * it is replaced with bounded backoff and every channel is listened again. Notifications sent
 * while it is down are lost — callers keep a bounded poll as fallback.
 *
 * All LISTEN/UNLISTEN work goes through one queue that reconciles the server's channels with the
 * wanted ones, so interleaved listen/unlisten calls and reconnects cannot leave it out of step.
 */
export class PgListener {
  private readonly handlers = new Map<string, Set<Handler>>();
  private client: pg.Client | null = null;
  private listening = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly reconnectBackoff = new Backoff(RECONNECT_BACKOFF);
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly printable: string,
  ) {}

  /** See `Database.listen`. Rejects (and registers nothing) if the LISTEN cannot be made now. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const name = validateChannelName(channel);
    if (this.closed) throw closedError(this.printable);
    // a fresh function per call: the same callback listened twice is two subscriptions
    const handler: Handler = (payload) => onPayload(payload);
    const set = this.handlers.get(name) ?? new Set<Handler>();
    this.handlers.set(name, set);
    set.add(handler);
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
      if (!this.closed) await this.sync().catch(() => undefined);
    };
  }

  /** Ends the listening connection and forgets every handler. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handlers.clear();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    await this.queue;
    await client?.end().catch(() => undefined);
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
    if (this.handlers.size === 0 && this.client === null) return;
    const client = this.client ?? (await this.connect());
    for (const name of this.handlers.keys()) {
      if (this.listening.has(name)) continue;
      await client.query(`LISTEN "${name}"`);
      this.listening.add(name);
    }
    for (const name of [...this.listening]) {
      if (this.handlers.has(name)) continue;
      await client.query(`UNLISTEN "${name}"`);
      this.listening.delete(name);
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: PG_POOL_DEFAULTS.connectionTimeoutMillis,
      application_name: LISTENER_APPLICATION_NAME,
      // a silently dead peer (network cut) is noticed by TCP keepalive instead of never
      keepAlive: true,
    });
    client.on("notification", (message) => this.dispatch(message.channel, message.payload ?? ""));
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
    } catch (error) {
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
    return client;
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
    this.client = null;
    this.listening = new Set();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer !== null || this.handlers.size === 0) return;
    const delay = this.reconnectBackoff.next();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.sync().catch(() => this.scheduleReconnect());
    }, delay);
    // a pending reconnect alone must not keep the process alive
    this.retryTimer.unref();
  }
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
