import { WRITE_QUEUE_DELTA_CHANNELS_KEPT, WRITE_QUEUE_FAILURES_KEPT } from "../constants.js";
import type { CheckpointAddress } from "./config.js";
import type { CheckpointFence, CheckpointRider } from "./fence-config.js";

/** One write row: idx, channel, type, json, bytes. */
export type WriteRow = [number, string, string, string | null, Uint8Array | null];

/** One task's writes waiting to be stored; `settle` resolves or rejects its `putWrites` once they are durable (or not). */
export interface QueuedWrites {
  address: CheckpointAddress & { checkpointId: string };
  fence: CheckpointFence | undefined;
  /** Work under the same lease that may share the writes' commit (see `CheckpointRider`). */
  rider: CheckpointRider | undefined;
  rows: WriteRow[];
  taskId: string;
  taskPath: string;
  /** LangGraph's special writes (errors, interrupts, resumes): they replace a stored row. */
  special: boolean;
  settle: (error?: unknown) => void;
  /** Its `putWrites` was answered before it was stored (a delta write under a lease; see `WriteQueue`). */
  answered?: boolean;
  /** Taken by a put, to be stored in its statement. */
  taken?: boolean;
}

/** Key of a checkpoint's writes under one lease. */
function earlyKey(checkpointId: string, fence: CheckpointFence | undefined): string {
  return fence === undefined ? checkpointId : `${checkpointId}\u0000${fence.runId}\u0000${fence.epoch}`;
}

/** The lane of a thread's namespace: one LangGraph loop stores its checkpoints there one after another. */
export function laneKey(threadId: string, namespace: string): string {
  return `${threadId}\u0000${namespace}`;
}

/** Whether two writes are under the same lease (or both under none). */
export function sameFence(a: CheckpointFence | undefined, b: CheckpointFence | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.runId === b.runId && a.epoch === b.epoch;
}

/** A lane's queued writes by checkpoint id (oldest first), its puts under way and its writes in flight. */
interface Lane {
  queued: Map<string, QueuedWrites[]>;
  puts: number;
  inFlight: Map<string, Set<Promise<unknown>>>;
  checking: boolean;
}

/** A put of the lane is under way, or writes the chain's next put may be waiting for (LangGraph waits for delta channel writes). */
function busy(lane: Lane): boolean {
  return lane.puts > 0 || lane.inFlight.size > 0;
}

/**
 * Task writes by checkpoint, first queued, then in flight (group commit). LangGraph stores a
 * step's task writes and then the step's next checkpoint, whose parent they belong to, chained
 * after the checkpoint before it: writes still queued when that `put` comes are stored in its
 * statement, one commit instead of two. Writes are held only while a put or other writes of their
 * lane (thread and namespace) are under way, since the chain's next put follows them at once;
 * when none are (the chain waits for writes, or has ended: an interrupt, an error, the last step), the oldest
 * checkpoint's writes are flushed on the next turn of the event loop (`setImmediate`), then the
 * next. Writes to a delta channel are answered at once and held the same way (LangGraph waits
 * for them before the next put); a failed store fails the put after them (`assertStored`).
 * Writes of one checkpoint are stored in the order they came.
 */
export class WriteQueue {
  private readonly lanes = new Map<string, Lane>();
  /** Failed stores of delta writes answered early, by checkpoint and fence, then task (see `assertStored`). */
  private readonly failedEarly = new Map<string, Map<string, unknown>>();
  /** Channel names LangGraph has reported as delta channels (see `noteDeltaChannels`). */
  private readonly deltaChannels = new Set<string>();

  /** `store` writes a group of queued writes of one checkpoint, all under one fence, and settles them. */
  constructor(private readonly store: (items: QueuedWrites[]) => Promise<void>) {}

  /** Queues a task's writes; they are stored with the next put of a child, or flushed once the lane is idle. */
  add(item: QueuedWrites): void {
    const { threadId, namespace, checkpointId } = item.address;
    const key = laneKey(threadId, namespace);
    const lane = this.lane(key);
    const list = lane.queued.get(checkpointId);
    if (list === undefined) lane.queued.set(checkpointId, [item]);
    else if (list.some((queued) => queued.taskId === item.taskId)) {
      // the same task writing again: its earlier writes go first, so they cannot share a statement
      this.flush(key, lane, checkpointId);
      lane.queued.set(checkpointId, [item]);
    } else list.push(item);
    if (item.rows.some((row) => this.deltaChannels.has(row[1]))) {
      // LangGraph calls the next put only once writes to a delta channel are answered: they are
      // answered now and held like any other, so they commit with that put (the checkpoint and the
      // writes it is rebuilt from are stored together or not at all), and a failed store fails
      // the put that follows them (see `assertStored`)
      this.answerEarly(item);
    }
    this.check(key);
  }

  /**
   * Throws the error of a delta write of checkpoint `checkpointId` under `fence` that was answered
   * before it was stored and then failed to store alone (once: the put that follows it fails, and
   * with it the LangGraph loop; the task's writes written again, by a loop that re-runs it, clear it).
   */
  assertStored(checkpointId: string | undefined, fence: CheckpointFence | undefined): void {
    if (checkpointId === undefined || this.failedEarly.size === 0) return;
    const key = earlyKey(checkpointId, fence);
    const failed = this.failedEarly.get(key);
    if (failed === undefined) return;
    this.failedEarly.delete(key);
    throw failed.values().next().value;
  }

  /**
   * Notes delta channels, the keys of a checkpoint's `counters_since_delta_snapshot` metadata
   * (LangGraph counts every delta channel there). Kept for the queue's life, not per lane (a lane
   * goes once idle, between a checkpoint and its step's writes): a channel of that name in another
   * graph is then answered early too, which is as safe under a lease (see `assertStored`).
   */
  noteDeltaChannels(channels: readonly string[]): void {
    for (const channel of channels) if (this.deltaChannels.size < WRITE_QUEUE_DELTA_CHANNELS_KEPT) this.deltaChannels.add(channel);
  }

  /**
   * A put of checkpoint `checkpointId`'s child begins in the lane: takes the parent's queued
   * writes under `fence` for the caller to store with the checkpoint (any others are flushed
   * now) and resolves once the parent's writes already in flight are stored. Call `putDone` after.
   */
  async take(lanekey: string, checkpointId: string | undefined, fence: CheckpointFence | undefined): Promise<QueuedWrites[]> {
    const lane = this.lane(lanekey);
    lane.puts += 1;
    if (checkpointId === undefined) return [];
    const list = lane.queued.get(checkpointId) ?? [];
    const taken = list.filter((item) => sameFence(item.fence, fence));
    if (taken.length < list.length) {
      lane.queued.set(checkpointId, list.filter((item) => !sameFence(item.fence, fence)));
      this.flush(lanekey, lane, checkpointId);
    } else lane.queued.delete(checkpointId);
    // an early-answered write stored with the put: the put's own failure is LangGraph's to see
    for (const item of taken) item.taken = true;
    const running = lane.inFlight.get(checkpointId);
    if (running !== undefined) await Promise.allSettled([...running]);
    return taken;
  }

  /** The put begun with `take` ended (stored or not). */
  putDone(lanekey: string): void {
    const lane = this.lane(lanekey);
    lane.puts -= 1;
    this.check(lanekey);
    this.forget(lanekey, lane);
  }

  /**
   * Stores every queued write now (of `threadId`'s lanes only, when given) and resolves once
   * every write of those lanes in flight is stored (or failed). A reader of one thread needs only
   * its lanes flushed: flushing every lane would store the writes other runs hold for their next
   * checkpoint alone (under concurrency, most of them).
   */
  async flushAll(threadId?: string): Promise<void> {
    const prefix = threadId === undefined ? undefined : laneKey(threadId, "");
    const lanes = [...this.lanes].filter(([key]) => prefix === undefined || key.startsWith(prefix));
    for (const [key, lane] of lanes) for (const checkpointId of [...lane.queued.keys()]) this.flush(key, lane, checkpointId);
    await Promise.allSettled(lanes.flatMap(([, lane]) => [...lane.inFlight.values()].flatMap((set) => [...set])));
  }

  /** Whether no write of `threadId`'s lanes (of any lane, when not given) is queued or in flight. */
  idleFor(threadId?: string): boolean {
    const prefix = threadId === undefined ? undefined : laneKey(threadId, "");
    return [...this.lanes].every(([key, lane]) => (prefix !== undefined && !key.startsWith(prefix)) || (lane.queued.size === 0 && lane.inFlight.size === 0));
  }

  /** Lanes held (a lane is dropped once it has nothing queued, in flight or under way). */
  get lanesHeld(): number {
    return this.lanes.size;
  }

  /** Whether any write is queued or in flight. */
  get idle(): boolean {
    return [...this.lanes.values()].every((lane) => lane.queued.size === 0 && lane.inFlight.size === 0);
  }

  /** Answers a delta write's `putWrites` now; a later failure to store it alone is kept for `assertStored`. */
  private answerEarly(item: QueuedWrites): void {
    const answer = item.settle;
    const key = earlyKey(item.address.checkpointId, item.fence);
    // the task written again (re-run after a fault): its earlier failure no longer stands
    const before = this.failedEarly.get(key);
    if (before?.delete(item.taskId) === true && before.size === 0) this.failedEarly.delete(key);
    item.answered = true;
    item.settle = (error?: unknown) => {
      if (error === undefined) return;
      // its `putWrites` stays answered; its settle is told (e.g. a checkpoint memo forgets what it noted)
      answer(error);
      // a put that took it failed itself, in LangGraph's sight
      if (item.taken === true) return;
      const failed = this.failedEarly.get(key) ?? new Map<string, unknown>();
      failed.set(item.taskId, error);
      this.failedEarly.delete(key);
      this.failedEarly.set(key, failed);
      // bounded: the oldest failures go (their loops ended long ago)
      for (const stale of this.failedEarly.keys()) {
        if (this.failedEarly.size <= WRITE_QUEUE_FAILURES_KEPT) break;
        this.failedEarly.delete(stale);
      }
    };
    answer();
  }

  private lane(key: string): Lane {
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = { queued: new Map(), puts: 0, inFlight: new Map(), checking: false };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** On the next turn, if no put of the lane is under way, flushes its oldest checkpoint's writes. */
  private check(key: string): void {
    const lane = this.lanes.get(key);
    if (lane === undefined || lane.checking || lane.queued.size === 0 || busy(lane)) return;
    lane.checking = true;
    setImmediate(() => {
      lane.checking = false;
      if (busy(lane)) return;
      const oldest = lane.queued.keys().next();
      if (oldest.done !== true) void this.flush(key, lane, oldest.value).then(() => this.check(key));
      else this.forget(key, lane);
    });
  }

  private flush(key: string, lane: Lane, checkpointId: string): Promise<unknown> {
    const list = lane.queued.get(checkpointId);
    if (list === undefined || list.length === 0) return Promise.resolve();
    lane.queued.delete(checkpointId);
    const before = lane.inFlight.get(checkpointId);
    const earlier = before === undefined ? [] : [...before];
    const groups: QueuedWrites[][] = [];
    for (const item of list) {
      const group = groups.find((candidate) => sameFence(candidate[0]?.fence, item.fence));
      if (group === undefined) groups.push([item]);
      else group.push(item);
    }
    const stored = Promise.allSettled(earlier).then(() => Promise.allSettled(groups.map((group) => this.store(group))));
    const set = before ?? new Set<Promise<unknown>>();
    lane.inFlight.set(checkpointId, set);
    set.add(stored);
    void stored.then(() => {
      set.delete(stored);
      if (set.size === 0 && lane.inFlight.get(checkpointId) === set) lane.inFlight.delete(checkpointId);
      this.check(key);
      this.forget(key, lane);
    });
    return stored;
  }

  /** Drops an empty lane (threads come and go). */
  private forget(key: string, lane: Lane): void {
    if (lane.queued.size > 0 || lane.inFlight.size > 0 || lane.puts > 0 || lane.checking) return;
    if (this.lanes.get(key) === lane) this.lanes.delete(key);
  }
}
