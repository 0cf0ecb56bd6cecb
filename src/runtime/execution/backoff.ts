import { DATABASE_FAULT_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import { Backoff } from "../../db/backoff.js";

/** Whether an error is a database fault (unreachable or refusing writes): a pure classifier, for code outside src/runtime. */
export { isDatabaseFault } from "../../db/database-faults.js";

export { Backoff, type BackoffOptions } from "../../db/backoff.js";

/**
 * Runs `fn`, and while it fails on a database fault (see `databaseFaultOf`) waits with a jittered
 * backoff and runs it again — for at most `maxMs` in all, then the last fault is thrown; any other
 * error is thrown at once. `signal` aborting stops the waiting (the fault is thrown). For reads
 * that can simply be repeated (a stream's next look at the table).
 */
export async function retryDatabaseFaults<T>(
  fn: () => Promise<T>,
  options: {
    maxMs: number;
    signal?: AbortSignal | undefined;
    onFault?: ((error: unknown, attempt: number) => void) | undefined;
    /** `unreachable`: only a lost connection is retried; storage refusing writes is thrown at once. */
    only?: "unreachable" | undefined;
  },
): Promise<T> {
  const backoff = new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: DATABASE_FAULT_DEFAULTS.backoffMaxMs });
  const giveUpAt = Date.now() + options.maxMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const kind = databaseFaultOf(error);
      if (kind === null || (options.only !== undefined && kind !== options.only) || Date.now() >= giveUpAt) throw error;
      options.onFault?.(error, backoff.attempts + 1);
      if (!(await backoff.wait(options.signal))) throw error;
    }
  }
}
