import type { Logger } from "../logger.js";

/** A running periodic sweep; `stop()` ends it and waits for a sweep in progress. */
export interface TtlSweeper {
  stop(): Promise<void>;
}

/**
 * Calls `sweep` every `intervalMs` (measured from the end of the previous sweep, so sweeps never
 * overlap) until stopped. The timer does not keep the process alive; a failed sweep is logged and
 * the next one runs on schedule.
 */
export function startTtlSweeper(sweep: () => Promise<number>, intervalMs: number, logger: Logger): TtlSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
        .then((deleted) => {
          if (deleted > 0) logger.debug({ event: "store.swept", deleted }, "expired store items deleted");
        })
        .catch((error: unknown) => {
          logger.warn({ event: "store.sweep_failed", err: error instanceof Error ? error.message : String(error) }, "store TTL sweep failed");
        })
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
