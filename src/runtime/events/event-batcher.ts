import { randomUUID } from "node:crypto";
import type { CheckpointRider, RiderWork } from "../../checkpoint/fence-config.js";
import type { Queryable } from "../../db/types.js";
import type { NewRunEvent } from "./event-store.js";

/**
 * How a batcher stores a batch: on its own (`alone`, retried as the caller sees fit) or inside a
 * checkpoint write's transaction. `key` is the batch's idempotency key, the same on every try of
 * the batch (see `EventStore.append`): a try whose commit happened but whose answer was lost is
 * not stored twice by the next.
 */
export interface EventBatchStores {
  alone: (events: NewRunEvent[], key: string) => Promise<void>;
  inTransaction: (tx: Queryable, events: NewRunEvent[], key: string) => Promise<void>;
  /** Told of a batch that failed to store (a lost lease, a fault): rethrow to fail every later append, return to go on. */
  failed: (error: unknown) => void;
}

/** The events a run's ending transaction takes (see `RunEventBatcher.takeForEnd`) and how it tells what became of them. */
export interface EndBatch {
  events: NewRunEvent[];
  stored(): void;
  dropped(): void;
  failed(): Promise<void>;
}

interface Batch {
  key: string;
  events: NewRunEvent[];
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
  promise.catch(() => undefined);
  return { key: randomUUID(), events: [], promise, resolve, reject };
}

/**
 * A run's events on their way to the store, in order, one batch at a time: events that come
 * while a batch is being stored wait and go together in the next (a step's events cost one
 * commit). A batch waiting is taken by the run's next checkpoint write that begins before the
 * next turn of the event loop (a `CheckpointRider`: the events commit with the checkpoint, no
 * commit of their own), else stored alone on that turn. Either way the events reach the store no
 * later than they would alone: a batch is only ever taken while nothing is being stored. Two
 * exceptions wait for a commit they know comes: events appended with `hold` (the run's start,
 * before its first checkpoint) wait for the next checkpoint write, the next plain append or
 * `settled()`; and the run's end takes what is waiting into its own transaction (`takeForEnd`).
 */
export class RunEventBatcher implements CheckpointRider {
  private waiting: Batch | null = null;
  private sending: Promise<void> | null = null;
  private pumping = false;
  private failure: { error: unknown } | null = null;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly stores: EventBatchStores) {}

  /**
   * Queues `events`; resolves once they are stored, rejects when storing them failed. `hold`: they
   * wait for the run's next checkpoint write to take them (a commit that comes anyway), for the
   * next append without `hold`, or for `settled()`, rather than being stored alone on the next turn.
   */
  append(events: readonly NewRunEvent[], options: { hold?: boolean } = {}): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure.error);
    this.waiting ??= newBatch();
    this.waiting.events.push(...events);
    const batch = this.waiting;
    this.last = batch.promise;
    if (options.hold !== true) this.schedule();
    return batch.promise;
  }

  /** Resolves once every event appended so far is stored (or rejects as the last batch did); held events go now. */
  settled(): Promise<void> {
    if (this.waiting !== null) this.schedule();
    return this.last;
  }

  /**
   * For the run's ending transaction: waits for the batch being stored, then takes the events
   * waiting (none: an empty list) for that transaction to store ahead of its own. Then one of:
   * `stored()` once it committed; `dropped()` when it found the lease lost (the events go with
   * the attempt); `failed()` when it failed: the events are stored alone as any batch (retried
   * through a database fault), resolving once they are, so none is lost when the finish is
   * retried. Rejects when an earlier batch failed for good.
   */
  async takeForEnd(): Promise<EndBatch> {
    while (this.sending !== null) await this.sending;
    if (this.failure !== null) throw this.failure.error;
    const batch = this.waiting;
    if (batch === null) return { events: [], stored: () => undefined, dropped: () => undefined, failed: async () => undefined };
    this.waiting = null;
    return {
      events: batch.events,
      stored: () => batch.resolve(),
      dropped: () => batch.resolve(),
      failed: async () => {
        while (this.sending !== null) await this.sending;
        let done!: () => void;
        this.sending = new Promise<void>((resolve) => (done = resolve));
        await this.store(batch);
        this.sent(done);
      },
    };
  }

  /** The waiting batch for a checkpoint write's transaction, if nothing is being stored. */
  take(): RiderWork | undefined {
    const batch = this.waiting;
    if (batch === null || this.sending !== null || this.failure !== null) return undefined;
    this.waiting = null;
    let done!: () => void;
    this.sending = new Promise<void>((resolve) => (done = resolve));
    return {
      write: (tx) => this.stores.inTransaction(tx, batch.events, batch.key),
      settle: (error?: unknown) => {
        if (error === undefined) {
          batch.resolve();
          this.sent(done);
          return;
        }
        // not committed: stored alone, still ahead of anything appended since
        void this.store(batch).then(() => this.sent(done));
      },
    };
  }

  private schedule(): void {
    if (this.pumping || this.sending !== null) return;
    this.pumping = true;
    setImmediate(() => {
      this.pumping = false;
      const batch = this.waiting;
      if (batch === null || this.sending !== null) return;
      this.waiting = null;
      let done!: () => void;
      this.sending = new Promise<void>((resolve) => (done = resolve));
      void this.store(batch).then(() => this.sent(done));
    });
  }

  private async store(batch: Batch): Promise<void> {
    try {
      await this.stores.alone(batch.events, batch.key);
      batch.resolve();
    } catch (error) {
      try {
        this.stores.failed(error);
        batch.resolve();
      } catch (fatal) {
        this.failure = { error: fatal };
        batch.reject(fatal);
        this.waiting?.reject(fatal);
        this.waiting = null;
      }
    }
  }

  private sent(done: () => void): void {
    this.sending = null;
    done();
    if (this.waiting !== null) this.schedule();
  }
}
