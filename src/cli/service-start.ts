import { DATABASE_FAULT_DEFAULTS } from "../constants.js";
import { retryDatabaseFaults } from "../runtime/backoff.js";

/**
 * Starts a long-running command (`devmind worker`, `devmind serve`) whose database may be away
 * for a moment — a restart, a failover, a container starting next to it: `start` (open, migrate,
 * listen, start workers; it must clean up what it opened when it throws) is retried on database
 * faults with a jittered backoff for up to `DATABASE_FAULT_DEFAULTS.serviceStartMaxMs`, saying so
 * once on stderr. Any other error, or a database still away after that, ends the command as before.
 */
export async function startService<T>(name: string, start: () => Promise<T>): Promise<T> {
  return retryDatabaseFaults(start, {
    maxMs: DATABASE_FAULT_DEFAULTS.serviceStartMaxMs,
    onFault: (error, attempt) => {
      if (attempt !== 1) return;
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`devmind ${name}: the database is unreachable while starting (${reason}); retrying for up to ${DATABASE_FAULT_DEFAULTS.serviceStartMaxMs / 1000} s\n`);
    },
  });
}
