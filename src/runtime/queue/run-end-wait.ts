import { RUNTIME_DEFAULTS } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { RUN_ENDS_CHANNEL } from "../events/event-sql.js";
import type { RunRecord } from "./run-record.js";
import { FINAL_EVENT_TYPES } from "./status.js";

/**
 * One LISTEN on RUN_ENDS_CHANNEL per runtime, shared by every wait in the process: a wait adds a
 * callback for its run instead of a LISTEN and UNLISTEN of its own (each a statement, and a
 * transaction, on the listening connection). Listening starts with the first wait and lasts until
 * `close`; if it cannot start (the database is away), the next wait tries again.
 */
export class RunEndWatcher {
  private readonly waiters = new Map<string, Set<() => void>>();
  private listening: Promise<(() => Promise<void>) | null> | null = null;
  private closed = false;

  constructor(private readonly db: Database) {}

  /** Calls `onEnd` whenever the run's final event is committed in any process; resolves to the unwatch, or null when LISTEN is not available now. */
  async watch(runId: string, onEnd: () => void): Promise<(() => void) | null> {
    const key = runId.toLowerCase();
    const set = this.waiters.get(key) ?? new Set<() => void>();
    this.waiters.set(key, set);
    const entry = (): void => onEnd();
    set.add(entry);
    const unwatch = (): void => {
      set.delete(entry);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    };
    this.listening ??= this.closed ? Promise.resolve(null) : this.db.listen(RUN_ENDS_CHANNEL, (payload) => this.dispatch(payload)).catch(() => null);
    const stop = await this.listening;
    if (stop === null) {
      this.listening = null;
      unwatch();
      return null;
    }
    return unwatch;
  }

  /** Stops listening (the runtime closes). */
  async close(): Promise<void> {
    this.closed = true;
    const stop = await this.listening;
    this.listening = null;
    await stop?.().catch(() => undefined);
  }

  private dispatch(payload: string): void {
    for (const onEnd of [...(this.waiters.get(payload) ?? [])]) onEnd();
  }
}

/** What `waitForRunEnd` reads the run with and listens on. */
export interface RunEndWaitDeps {
  watcher: RunEndWatcher;
  /** Reads the run (a fault-tolerant read if the caller wants one). */
  get: (runId: string) => Promise<RunRecord>;
  /** In-process live events of the run (its final event among them); returns the unsubscribe. */
  subscribe: (runId: string, listener: (event: { type: string }) => void) => () => void;
}

/** How long `waitForRunEnd` waits and when it stops. */
export interface RunEndWaitOptions {
  /** Epoch ms: the run is returned as it is then. */
  deadline: number;
  signal?: AbortSignal | undefined;
  /** True once the run counts as ended for this caller. */
  isEnded: (run: RunRecord) => boolean;
}

/**
 * Waits until `isEnded(run)`, the deadline or the signal, and returns the run as last read. The
 * run is read once at the start and then only when it may have ended: its final event in this
 * process (a live event) or in any process (a NOTIFY on RUN_ENDS_CHANNEL). A bounded poll
 * (RUNTIME_DEFAULTS.waitPollMs; waitPollNoListenMs when LISTEN is not available) covers a
 * notification lost while the listening connection was down.
 */
export async function waitForRunEnd(deps: RunEndWaitDeps, runId: string, options: RunEndWaitOptions): Promise<RunRecord> {
  let woken = false;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    woken = true;
    wake?.();
  };
  // subscribed before the first read: an end committed after that read wakes the loop
  const unsubscribe = deps.subscribe(runId, (event) => {
    if (FINAL_EVENT_TYPES.includes(event.type)) poke();
  });
  const unwatch = await deps.watcher.watch(runId, poke);
  const pollMs = unwatch === null ? RUNTIME_DEFAULTS.waitPollNoListenMs : RUNTIME_DEFAULTS.waitPollMs;
  options.signal?.addEventListener("abort", poke, { once: true });
  try {
    for (;;) {
      woken = false;
      const run = await deps.get(runId);
      if (options.isEnded(run) || Date.now() >= options.deadline || options.signal?.aborted === true) return run;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, Math.min(pollMs, options.deadline - Date.now())));
        function done(): void {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  } finally {
    options.signal?.removeEventListener("abort", poke);
    unsubscribe();
    unwatch?.();
  }
}
