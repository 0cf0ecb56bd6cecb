import { describe, expect, it } from "vitest";
import { laneKey, WriteQueue, type QueuedWrites } from "../../src/checkpoint/write-queue.js";

function item(checkpointId: string, taskId: string, stored: string[], value = "1", threadId = "t"): QueuedWrites {
  return {
    address: { threadId, namespace: "", checkpointId },
    fence: { runId: "r", epoch: 1 },
    rider: undefined,
    rows: [[0, "ch", "json", value, null]],
    taskId,
    taskPath: "",
    special: false,
    settle: () => stored.push(`${checkpointId}/${taskId}/${value}`),
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("WriteQueue", () => {
  it("a flush for one thread stores only that thread's held writes: another run's wait for their next checkpoint", async () => {
    const stored: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle();
    });
    await queue.take(laneKey("t", ""), undefined, undefined);
    await queue.take(laneKey("u", ""), undefined, undefined);
    queue.add(item("c1", "a", stored, "1", "t"));
    queue.add(item("d1", "a", stored, "1", "u"));
    expect(queue.idleFor("u")).toBe(false);
    await queue.flushAll("u");
    expect(stored).toEqual(["d1/a/1"]);
    expect(queue.idleFor("u")).toBe(true);
    expect(queue.idleFor("t")).toBe(false);
    const taken = await queue.take(laneKey("t", ""), "c1", { runId: "r", epoch: 1 });
    expect(taken.map((queued) => queued.taskId)).toEqual(["a"]);
  });

  it("holds a checkpoint's writes while a put of the lane is under way and hands them to the next put", async () => {
    const stored: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle();
    });
    const lane = laneKey("t", "");
    await queue.take(lane, undefined, undefined); // put of c1 under way
    queue.add(item("c1", "a", stored));
    queue.add(item("c1", "b", stored));
    await nextTurn();
    await nextTurn();
    expect(stored).toEqual([]);
    queue.putDone(lane);
    // the chain's next put (child of c1) comes before the next turn: it takes both
    const taken = await queue.take(lane, "c1", { runId: "r", epoch: 1 });
    expect(taken.map((queued) => queued.taskId)).toEqual(["a", "b"]);
    queue.putDone(lane);
    await nextTurn();
    expect(queue.lanesHeld).toBe(0);
    expect(queue.idle).toBe(true);
  });

  it("flushes writes on the next turn when nothing of the lane is under way, a task's writes in order, and drops the lane", async () => {
    const stored: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle();
    });
    queue.add(item("c1", "a", stored));
    queue.add(item("c2", "a", stored));
    queue.add(item("c1", "a", stored, "2")); // the same task again: after its earlier writes
    for (let turn = 0; turn < 10 && stored.length < 3; turn += 1) await nextTurn();
    expect([...stored].sort()).toEqual(["c1/a/1", "c1/a/2", "c2/a/1"]);
    expect(stored.filter((entry) => entry.startsWith("c1/"))).toEqual(["c1/a/1", "c1/a/2"]);
    await queue.flushAll();
    await nextTurn();
    expect(queue.lanesHeld).toBe(0);
  });

  it("never holds writes to a delta channel: LangGraph waits for them before its next put", async () => {
    const stored: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle();
    });
    const lane = laneKey("t", "");
    queue.noteDeltaChannels(lane, ["ch"]);
    await queue.take(lane, undefined, undefined); // a put under way
    queue.add(item("c1", "a", stored));
    await nextTurn();
    await nextTurn();
    expect(stored).toEqual(["c1/a/1"]);
    queue.putDone(lane);
  });
});
