import { describe, expect, it } from "vitest";
import { RunEventBatcher } from "../../src/runtime/events/event-batcher.js";
import type { NewRunEvent } from "../../src/runtime/events/event-store.js";
import type { Queryable } from "../../src/db/types.js";

const started: NewRunEvent = { type: "run.started", attempt: 1, worker: "w" };
const custom = (n: number): NewRunEvent => ({ type: "custom", ns: [], data: n }) as NewRunEvent;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function recording() {
  const alone: NewRunEvent[][] = [];
  const inTx: NewRunEvent[][] = [];
  const failures: unknown[] = [];
  const batcher = new RunEventBatcher({
    alone: async (events) => void alone.push(events),
    inTransaction: async (_tx, events) => void inTx.push(events),
    failed: (error) => void failures.push(error),
  });
  return { batcher, alone, inTx, failures };
}

describe("RunEventBatcher", () => {
  it("holds events appended with hold for the next checkpoint write, which takes them", async () => {
    const { batcher, alone, inTx } = recording();
    const stored = batcher.append([started], { hold: true });
    await nextTurn();
    await nextTurn();
    expect(alone).toEqual([]);
    const work = batcher.take();
    expect(work).toBeDefined();
    await work?.write({} as Queryable);
    work?.settle();
    await stored;
    expect(inTx).toEqual([[started]]);
    expect(alone).toEqual([]);
  });

  it("stores held events with the next plain append, or when settled() is asked", async () => {
    const first = recording();
    void first.batcher.append([started], { hold: true });
    void first.batcher.append([custom(1)]);
    await first.batcher.settled();
    expect(first.alone).toEqual([[started, custom(1)]]);
    const second = recording();
    void second.batcher.append([started], { hold: true });
    await second.batcher.settled();
    expect(second.alone).toEqual([[started]]);
  });

  it("hands the events still waiting to the run's ending transaction, after the batch being stored", async () => {
    const { batcher, alone } = recording();
    void batcher.append([custom(1)]);
    await nextTurn();
    // custom(1) is being stored alone; custom(2) waits
    const waiting = batcher.append([custom(2)]);
    const taken = await batcher.takeForEnd();
    expect(alone).toEqual([[custom(1)]]);
    expect(taken.events).toEqual([custom(2)]);
    taken.stored();
    await waiting;
    await nextTurn();
    expect(alone).toEqual([[custom(1)]]);
    expect((await batcher.takeForEnd()).events).toEqual([]);
  });

  it("stores alone the events of an ending transaction that failed, before it answers", async () => {
    const { batcher, alone } = recording();
    const waiting = batcher.append([custom(1)], { hold: true });
    const taken = await batcher.takeForEnd();
    expect(taken.events).toEqual([custom(1)]);
    await taken.failed();
    await waiting;
    expect(alone).toEqual([[custom(1)]]);
  });

  it("fails later appends once a batch failed for good", async () => {
    const fatal = new Error("database away");
    const batcher = new RunEventBatcher({
      alone: async () => {
        throw fatal;
      },
      inTransaction: async () => undefined,
      failed: (error) => {
        throw error;
      },
    });
    const waiting = batcher.append([custom(1)]);
    await expect(waiting).rejects.toBe(fatal);
    await expect(batcher.append([custom(2)])).rejects.toBe(fatal);
    await expect(batcher.takeForEnd()).rejects.toBe(fatal);
  });
});
