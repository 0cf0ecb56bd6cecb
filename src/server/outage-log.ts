import { SERVER_DEFAULTS } from "../constants.js";
import type { Logger } from "../logger.js";

/**
 * The server's 503s (the database away or refusing writes) logged once per outage, not per
 * request: the first is logged at level error (`request.unavailable`, with its code); the rest
 * are counted; once none came for SERVER_DEFAULTS.outageQuietMs the outage is over and one line
 * says how many requests were answered 503 and for how long (`request.available`).
 */
export class OutageLog {
  private outage: { startedAt: number; lastAt: number; count: number; codes: Set<string> } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly quietMs: number = SERVER_DEFAULTS.outageQuietMs,
  ) {}

  /** A request was answered 503 for `code`. */
  unavailable(code: string, request: { method: string; path: string; requestId: string | null; error: string }): void {
    const now = Date.now();
    if (this.outage === null) {
      this.outage = { startedAt: now, lastAt: now, count: 1, codes: new Set([code]) };
      this.logger.error(
        { event: "request.unavailable", code, request_id: request.requestId, method: request.method, path: request.path, err: request.error },
        "the database is unavailable: answering 503 (logged once per outage; the count follows when it ends)",
      );
    } else {
      this.outage.lastAt = now;
      this.outage.count += 1;
      this.outage.codes.add(code);
    }
    this.arm();
  }

  /** Ends an outage in progress now (logging its count), e.g. when the server closes. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const outage = this.outage;
    this.outage = null;
    if (outage === null) return;
    const lastedMs = outage.lastAt - outage.startedAt;
    this.logger.info(
      { event: "request.available", unavailable_requests: outage.count, codes: [...outage.codes], lasted_ms: lastedMs },
      `${outage.count} request(s) answered 503 over ${lastedMs} ms while the database was unavailable; none for ${this.quietMs} ms since`,
    );
  }

  private arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.quietMs);
    this.timer.unref?.();
  }
}
