import { sleep } from "../sleep.js";

/** Settings of a `Backoff`. */
export interface BackoffOptions {
  /** First delay. */
  firstMs: number;
  /** Largest delay before jitter. */
  maxMs: number;
}

/**
 * Bounded, jittered exponential backoff for waiting out a database fault: the n-th consecutive
 * wait is `min(maxMs, firstMs * 2^(n-1))`, scaled by a random factor in [0.5, 1] so many
 * workers coming back together do not hit the database in step. `reset()` after a success.
 * The one backoff of devmind: workers, the executor, stream reads (`retryDatabaseFaults`,
 * src/runtime/execution/backoff.ts) and the LISTEN connection's reconnects (src/db/pg-listener.ts) use it.
 */
export class Backoff {
  private failures = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** Consecutive failures recorded since the last reset. */
  get attempts(): number {
    return this.failures;
  }

  /** The next delay (recording one more failure). */
  next(): number {
    this.failures += 1;
    const raw = Math.min(this.options.maxMs, this.options.firstMs * 2 ** Math.min(30, this.failures - 1));
    return Math.max(1, Math.round(raw * (0.5 + Math.random() * 0.5)));
  }

  /** Waits the next delay; resolves early (false) when `signal` aborts, true after the full wait. */
  async wait(signal?: AbortSignal): Promise<boolean> {
    const ms = this.next();
    await sleep(ms, signal);
    return signal?.aborted !== true;
  }

  /** Starts over from `firstMs` (after a success). */
  reset(): void {
    this.failures = 0;
  }
}
