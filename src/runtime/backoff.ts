import { DATABASE_FAULT_DEFAULTS } from "../constants.js";
import { databaseFaultOf } from "../db/database-faults.js";

/** Whether an error is a database fault (unreachable or refusing writes): a pure classifier, for code outside src/runtime. */
export { isDatabaseFault } from "../db/database-faults.js";

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
  wait(signal?: AbortSignal): Promise<boolean> {
    const ms = this.next();
    return new Promise((resolve) => {
      if (signal?.aborted === true) return resolve(false);
      const done = (full: boolean): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(full);
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  reset(): void {
    this.failures = 0;
  }
}

/**
 * Runs `fn`, and while it fails on a database fault (see `databaseFaultOf`) waits with a jittered
 * backoff and runs it again — for at most `maxMs` in all, then the last fault is thrown; any other
 * error is thrown at once. `signal` aborting stops the waiting (the fault is thrown). For reads
 * that can simply be repeated (a stream's next look at the table).
 */
export async function retryDatabaseFaults<T>(
  fn: () => Promise<T>,
  options: { maxMs: number; signal?: AbortSignal | undefined; onFault?: ((error: unknown, attempt: number) => void) | undefined },
): Promise<T> {
  const backoff = new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: DATABASE_FAULT_DEFAULTS.backoffMaxMs });
  const giveUpAt = Date.now() + options.maxMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (databaseFaultOf(error) === null || Date.now() >= giveUpAt) throw error;
      options.onFault?.(error, backoff.attempts + 1);
      if (!(await backoff.wait(options.signal))) throw error;
    }
  }
}
