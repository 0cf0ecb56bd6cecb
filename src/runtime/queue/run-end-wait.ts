import { RUNTIME_DEFAULTS } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { RUN_ENDS_CHANNEL } from "../events/event-sql.js";
import type { StateSnapshot } from "@langchain/langgraph";
import type { RunRecord } from "./run-record.js";
import { FINAL_EVENT_TYPES } from "./status.js";
import { wakeableSleep } from "../../sleep.js";

/**
 * A run that ended in this process, as the statement that ended it returned it, with the graph's
 * state at its end when the executor had read it: what a waiter answers with, without a read.
 */
export interface EndedRun {
  run: RunRecord;
  state?: StateSnapshot | undefined;
}

/**
 * One LISTEN on RUN_ENDS_CHANNEL per runtime, shared by every wait in the process: a wait adds a
 * callback for its run instead of a LISTEN and UNLISTEN of its own (each a statement, and a
 * transaction, on the listening connection). Listening starts with the first wait (or `ready`)
 * and lasts until `close`; if it cannot start (the database is away), the next wait tries again.
 * Runs ended by this process's executor are handed over in-process too (`publish`), with their
 * record and final state; the last ends (RUNTIME_DEFAULTS.recentEndsMax, their records) are kept a
 * moment, so a wait that starts just after its run ended learns of it without reading the run.
 */
export class RunEndWatcher {
  private readonly waiters = new Map<string, Set<(ended?: EndedRun) => void>>();
  private readonly recent = new Map<string, { at: number; ended?: EndedRun | undefined }>();
  /** Runs this process's executor holds now: their end comes with its record (`publish`), not from their NOTIFY. */
  private readonly executing = new Set<string>();
  private listening: Promise<(() => Promise<void>) | null> | null = null;
  private closed = false;

  constructor(private readonly db: Database) {}

  /** Starts listening if it has not (shared); true once LISTEN is in effect, false when it is not available now. */
  async ready(): Promise<boolean> {
    this.listening ??= this.closed ? Promise.resolve(null) : this.db.listen(RUN_ENDS_CHANNEL, (payload) => this.ended(payload)).catch(() => null);
    const stop = await this.listening;
    if (stop === null) this.listening = null;
    return stop !== null;
  }

  /**
   * Calls `onEnd` whenever the run's final event is committed in any process (with the run as
   * it ended when this process ended it); at once when it ended a moment ago. Resolves to the
   * unwatch, or null when LISTEN is not available now.
   */
  async watch(runId: string, onEnd: (ended?: EndedRun) => void): Promise<(() => void) | null> {
    const key = runId.toLowerCase();
    const set = this.waiters.get(key) ?? new Set<(ended?: EndedRun) => void>();
    this.waiters.set(key, set);
    const entry = (ended?: EndedRun): void => onEnd(ended);
    set.add(entry);
    const unwatch = (): void => {
      set.delete(entry);
      if (set.size === 0 && this.waiters.get(key) === set) this.waiters.delete(key);
    };
    const known = this.recent.get(key);
    if (known !== undefined) onEnd(known.ended);
    if (!(await this.ready())) {
      unwatch();
      return null;
    }
    return unwatch;
  }

  /** The executor of this process ended `ended.run` (committed): its waiters here get it without a read. */
  publish(ended: EndedRun): void {
    this.ended(ended.run.run_id.toLowerCase(), ended);
  }

  /**
   * A slot of this process starts executing `runId`: until `left`, its NOTIFY (which may arrive
   * before the ending statement's answer does) does not wake its waiters; `publish` does, with the record.
   */
  executingHere(runId: string): void {
    this.executing.add(runId.toLowerCase());
  }

  /** The slot is done with `runId` (ended, lease lost, failed): waiters the executor did not answer look for themselves. */
  left(runId: string): void {
    const key = runId.toLowerCase();
    if (!this.executing.delete(key)) return;
    const known = this.recent.get(key);
    if (known?.ended !== undefined) return;
    for (const onEnd of [...(this.waiters.get(key) ?? [])]) onEnd(undefined);
  }

  /** Stops listening (the runtime closes). */
  async close(): Promise<void> {
    this.closed = true;
    const stop = await this.listening;
    this.listening = null;
    await stop?.().catch(() => undefined);
  }

  private ended(runId: string, ended?: EndedRun): void {
    const now = Date.now();
    // an in-process end is not overwritten by its own NOTIFY, which comes after it
    if (ended !== undefined || this.recent.get(runId)?.ended === undefined) {
      this.recent.delete(runId);
      // the record only: a state can be large, and only waiters already watching take it
      this.recent.set(runId, { at: now, ended: ended === undefined ? undefined : { run: ended.run } });
    }
    for (const [key, entry] of this.recent) {
      if (this.recent.size <= RUNTIME_DEFAULTS.recentEndsMax && now - entry.at <= RUNTIME_DEFAULTS.recentEndsMs) break;
      this.recent.delete(key);
    }
    // a NOTIFY of a run executing here: its executor's `publish` (or `left`) wakes the waiters
    if (ended === undefined && this.executing.has(runId)) return;
    for (const onEnd of [...(this.waiters.get(runId) ?? [])]) onEnd(ended);
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
  /**
   * The run as the caller read or created it after the watcher was `ready`: every end after
   * that reaches the wait, so it starts from this record instead of reading the run.
   */
  known?: RunRecord | undefined;
  signal?: AbortSignal | undefined;
  /** True once the run counts as ended for this caller. */
  isEnded: (run: RunRecord) => boolean;
}

/**
 * Waits until `isEnded(run)`, the deadline or the signal, and returns the run as last read (and
 * its final state, when this process's executor ended it). The run is read once at the start
 * (unless the caller `known` it) and then only when it may have ended and this process did not
 * end it: its final event in this process (a live event) or in any process (a NOTIFY on
 * RUN_ENDS_CHANNEL). A bounded poll (RUNTIME_DEFAULTS.waitPollMs; waitPollNoListenMs when LISTEN
 * is not available) covers a notification lost while the listening connection was down.
 */
export async function waitForRunEnd(deps: RunEndWaitDeps, runId: string, options: RunEndWaitOptions): Promise<EndedRun> {
  let woken = false;
  let wake: (() => void) | null = null;
  let ended: EndedRun | undefined;
  const poke = (given?: EndedRun): void => {
    woken = true;
    if (given !== undefined) ended = given;
    wake?.();
  };
  // subscribed before the first read: an end committed after that read wakes the loop
  const unsubscribe = deps.subscribe(runId, (event) => {
    if (FINAL_EVENT_TYPES.includes(event.type)) poke();
  });
  const unwatch = await deps.watcher.watch(runId, poke);
  const pollMs = unwatch === null ? RUNTIME_DEFAULTS.waitPollNoListenMs : RUNTIME_DEFAULTS.waitPollMs;
  const aborted = (): void => poke();
  options.signal?.addEventListener("abort", aborted, { once: true });
  let known = unwatch === null ? undefined : options.known;
  try {
    for (;;) {
      woken = false;
      const run = ended?.run ?? known ?? (await deps.get(runId));
      known = undefined;
      if (options.isEnded(run) || Date.now() >= options.deadline || options.signal?.aborted === true) return run === ended?.run ? ended : { run };
      if (woken) continue;
      await wakeableSleep(Math.max(1, Math.min(pollMs, options.deadline - Date.now())), (done) => {
        wake = done;
        return () => (wake = null);
      });
    }
  } finally {
    options.signal?.removeEventListener("abort", aborted);
    unsubscribe();
    unwatch?.();
  }
}
