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

  it("answers a fenced delta write at once (LangGraph waits for it before its next put) and hands it to that put", async () => {
    const answered: string[] = [];
    const stored: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) stored.push(queued.taskId), queued.settle();
    });
    const lane = laneKey("t", "");
    queue.noteDeltaChannels(["ch"]);
    queue.add(item("c1", "a", answered));
    // answered before anything is stored
    expect(answered).toEqual(["c1/a/1"]);
    expect(stored).toEqual([]);
    // the chain's put of c1's child, before the next turn, takes it into its statement
    const taken = await queue.take(lane, "c1", { runId: "r", epoch: 1 });
    expect(taken.map((queued) => queued.taskId)).toEqual(["a"]);
    expect(() => queue.assertStored("c1", { runId: "r", epoch: 1 })).not.toThrow();
    queue.putDone(lane);
    await nextTurn();
    expect(stored).toEqual([]);
    expect(queue.idle).toBe(true);
  });

  it("fails the next put of a fenced delta write's checkpoint once when the write, answered early, failed to store", async () => {
    const answered: string[] = [];
    const refused = new Error("disk full");
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle(refused);
    });
    const lane = laneKey("t", "");
    queue.noteDeltaChannels(["ch"]);
    queue.add(item("c1", "a", answered));
    expect(answered).toEqual(["c1/a/1"]);
    // no put came on this turn: stored alone, and that failed
    for (let turn = 0; turn < 5; turn += 1) await nextTurn();
    await queue.take(lane, "c1", { runId: "r", epoch: 1 });
    // another lease's put of the same parent (a later attempt) is not failed by it
    expect(() => queue.assertStored("c1", { runId: "r", epoch: 2 })).not.toThrow();
    expect(() => queue.assertStored("c1", { runId: "r", epoch: 1 })).toThrow(refused);
    // once: the loop that put it has failed
    expect(() => queue.assertStored("c1", { runId: "r", epoch: 1 })).not.toThrow();
    queue.putDone(lane);
  });

  it("forgets such a failure once the task is written again (a loop that re-runs it under the same lease), and never keeps one for a write a put took", async () => {
    let fail = true;
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle(fail ? new Error("connection lost") : undefined);
    });
    const lane = laneKey("t", "");
    const fence = { runId: "r", epoch: 1 };
    queue.noteDeltaChannels(["ch"]);
    queue.add(item("c1", "a", []));
    for (let turn = 0; turn < 5; turn += 1) await nextTurn();
    // re-run after the fault: written again, stored with the put
    fail = false;
    queue.add(item("c1", "a", []));
    const taken = await queue.take(lane, "c1", fence);
    expect(taken).toHaveLength(1);
    expect(() => queue.assertStored("c1", fence)).not.toThrow();
    // the put's statement failed: LangGraph sees the put fail; nothing is kept for the next one
    for (const queued of taken) queued.settle(new Error("connection lost"));
    queue.putDone(lane);
    expect(() => queue.assertStored("c1", fence)).not.toThrow();
  });

  it("answers an unfenced delta write early too (a graph invoked with the saver directly); its failure is kept for the next put without a lease", async () => {
    const answered: string[] = [];
    const queue = new WriteQueue(async (items) => {
      for (const queued of items) queued.settle(new Error("connection lost"));
    });
    const lane = laneKey("t", "");
    queue.noteDeltaChannels(["ch"]);
    queue.add({ ...item("c1", "a", answered), fence: undefined });
    expect(answered).toEqual(["c1/a/1"]);
    for (let turn = 0; turn < 5; turn += 1) await nextTurn();
    await queue.take(lane, "c1", undefined);
    expect(() => queue.assertStored("c1", { runId: "r", epoch: 1 })).not.toThrow();
    expect(() => queue.assertStored("c1", undefined)).toThrow("connection lost");
    queue.putDone(lane);
  });
});
