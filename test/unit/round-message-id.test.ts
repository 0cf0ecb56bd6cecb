import { describe, expect, it } from "vitest";
import { roundMessageId } from "../../src/graph/model-node.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("the id of a model round's AI message", () => {
  it("is the same for the same run, run start and round (a round executed again streams under it)", () => {
    expect(roundMessageId("RUN-1", 4, 2)).toBe(roundMessageId("run-1", 4, 2));
    expect(roundMessageId("run-1", 4, 2)).toMatch(UUID);
  });

  it("differs between rounds, run starts and runs", () => {
    const ids = [roundMessageId("run-1", 0, 1), roundMessageId("run-1", 0, 2), roundMessageId("run-1", 3, 1), roundMessageId("run-2", 0, 1)];
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect(id).toMatch(UUID);
  });

  it("is random without a run id", () => {
    const first = roundMessageId(undefined, 0, 1);
    expect(first).not.toBe(roundMessageId(undefined, 0, 1));
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
  });
});
