import type { Logger } from "../logger.js";

/** A running periodic sweep; `stop()` ends it and waits for a sweep in progress. */
export interface TtlSweeper {
  stop(): Promise<void>;
}

/**
 * Calls `sweep` every `intervalMs` (measured from the end of the previous sweep, so sweeps never
 * overlap) until stopped. The timer does not keep the process alive; a failed sweep is logged and
 * the next one runs on schedule. `what` names the swept items in the log events (`store.swept`,
 * `threads.swept`).
 */
export function startTtlSweeper(sweep: () => Promise<number>, intervalMs: number, logger: Logger, what: "store" | "threads" = "store"): TtlSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
        .then((deleted) => {
          if (deleted > 0) logger.debug({ event: `${what}.swept`, deleted }, what === "store" ? "expired store items deleted" : "expired threads deleted");
        })
        .catch((error: unknown) => {
          logger.warn({ event: `${what}.sweep_failed`, err: error instanceof Error ? error.message : String(error) }, `${what === "store" ? "store" : "thread"} TTL sweep failed`);
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
