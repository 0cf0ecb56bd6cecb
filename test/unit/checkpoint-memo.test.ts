import { describe, expect, it } from "vitest";
import { CheckpointMemo } from "../../src/checkpoint/checkpoint-memo.js";

const thread = "t-1";
const at = (checkpointId: string) => ({ threadId: thread, namespace: "", checkpointId });

describe("CheckpointMemo", () => {
  it("knows nothing until seeded, and an empty seed is a thread without checkpoints", () => {
    const memo = new CheckpointMemo(thread);
    expect(memo.answers({ threadId: thread, namespace: "" })).toBe(false);
    memo.seed([]);
    expect(memo.answers({ threadId: thread, namespace: "" })).toBe(true);
    expect(memo.rows()).toEqual([]);
    expect(memo.answers({ threadId: "other", namespace: "" })).toBe(false);
    expect(memo.answers({ threadId: thread, namespace: "sub:1" })).toBe(false);
  });

  it("keeps values of unchanged channels, writes stored before their checkpoint's put, and drops older writes", () => {
    const memo = new CheckpointMemo(thread);
    memo.seed([]);
    memo.notePut({ threadId: thread, namespace: "", checkpointId: undefined }, "c1", "{}", "{}", { a: "1", b: "1" }, [["a", "1", "json", '"x"', null], ["b", "1", "json", '"y"', null]], () => true);
    // the step's tasks ran on c2 before c2's put was stored
    memo.noteWrites(at("c2"), "task", "p", [[0, "a", "json", '"z"', null]], false);
    memo.noteWrites(at("c0"), "old", "p", [[0, "a", "json", '"old"', null]], false);
    memo.notePut({ threadId: thread, namespace: "", checkpointId: "c1" }, "c2", "{}", "{}", { a: "2", b: "1" }, [["a", "2", "json", '"a2"', null]], () => true);
    const rows = memo.rows();
    expect(rows.find((row) => row.kind === "c")).toMatchObject({ c: "c2", type: "c1" });
    expect(rows.filter((row) => row.kind === "b").map((row) => [row.a, row.b, row.json])).toEqual([["a", "2", '"a2"'], ["b", "1", '"y"']]);
    expect(rows.filter((row) => row.kind === "w").map((row) => [row.a, row.json])).toEqual([["task", '"z"']]);
  });

  it("keeps the first of a plain write stored twice and the last of a special one", () => {
    const memo = new CheckpointMemo(thread);
    memo.seed([]);
    memo.notePut({ threadId: thread, namespace: "", checkpointId: undefined }, "c1", "{}", "{}", {}, [], () => false);
    memo.noteWrites(at("c1"), "t", "", [[0, "a", "json", '"first"', null]], false);
    memo.noteWrites(at("c1"), "t", "", [[0, "a", "json", '"second"', null]], false);
    memo.noteWrites(at("c1"), "t", "", [[-3, "__interrupt__", "json", '"one"', null]], true);
    memo.noteWrites(at("c1"), "t", "", [[-3, "__interrupt__", "json", '"two"', null]], true);
    expect(memo.rows().filter((row) => row.kind === "w").map((row) => row.json)).toEqual(['"first"', '"two"']);
  });

  it("forgets when a value is present at a version it never saw stored", () => {
    const memo = new CheckpointMemo(thread);
    memo.seed([]);
    memo.notePut({ threadId: thread, namespace: "", checkpointId: undefined }, "c1", "{}", "{}", { a: "5" }, [], () => true);
    expect(memo.answers({ threadId: thread, namespace: "" })).toBe(false);
  });
});
