import { RUN_CANCELS_CHANNEL, RUNTIME_DEFAULTS } from "../../constants.js";
import type { Database } from "../../db/types.js";

/**
 * One LISTEN on RUN_CANCELS_CHANNEL per runtime, shared by every run this process executes: a
 * cancel request for a running run (`requestCancel`, which announces it on commit) reaches its
 * executor at once, instead of each run asking the database four times a second. Listening
 * starts with the first run (or `ready`) and lasts until `close`; when it cannot start (the
 * database is away, or cannot LISTEN) `watch` says so and the executor polls as before. An
 * announcement that comes just before its run is watched (claimed, not yet executing) is kept a
 * moment (`recentCancelsMs`). A notification lost while the listening connection was down is
 * caught by the lease heartbeat, which reads the request too.
 */
export class RunCancelWatch {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly recent = new Map<string, number>();
  private listening: Promise<(() => Promise<void>) | null> | null = null;
  private closed = false;

  constructor(private readonly db: Database) {}

  /** Starts listening if it has not (shared); true once LISTEN is in effect, false when it is not available now. */
  async ready(): Promise<boolean> {
    this.listening ??= this.closed ? Promise.resolve(null) : this.db.listen(RUN_CANCELS_CHANNEL, (payload) => this.cancelled(payload)).catch(() => null);
    const stop = await this.listening;
    if (stop === null) this.listening = null;
    return stop !== null;
  }

  /**
   * Calls `onCancel` when a cancel of `runId` is announced (at once if one was a moment ago).
   * Resolves to the unwatch, or null when LISTEN is not available now (the caller polls).
   */
  async watch(runId: string, onCancel: () => void): Promise<(() => void) | null> {
    const key = runId.toLowerCase();
    const set = this.watchers.get(key) ?? new Set<() => void>();
    this.watchers.set(key, set);
    set.add(onCancel);
    const unwatch = (): void => {
      set.delete(onCancel);
      if (set.size === 0 && this.watchers.get(key) === set) this.watchers.delete(key);
    };
    if (this.recent.has(key)) onCancel();
    if (!(await this.ready())) {
      unwatch();
      return null;
    }
    return unwatch;
  }

  /** Stops listening; later watches answer null. */
  async close(): Promise<void> {
    this.closed = true;
    const stop = await this.listening?.catch(() => null);
    this.listening = null;
    await stop?.().catch(() => undefined);
  }

  private cancelled(payload: string): void {
    const key = payload.toLowerCase();
    const now = Date.now();
    for (const [id, at] of this.recent) if (now - at > RUNTIME_DEFAULTS.recentCancelsMs) this.recent.delete(id);
    this.recent.set(key, now);
    for (const onCancel of [...(this.watchers.get(key) ?? [])]) onCancel();
  }
}
