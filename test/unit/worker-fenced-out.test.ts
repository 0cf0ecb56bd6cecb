import { describe, expect, it } from "vitest";
import { fencedOut } from "../../src/runtime/queue/worker.js";

describe("fencedOut: whether a run as stored after an attempt is still that attempt's", () => {
  it("a run ended or released by the attempt itself is its own", () => {
    expect(fencedOut(1, { attempt: 1, stop_reason: "completed" })).toBe(false);
    expect(fencedOut(3, { attempt: 3, stop_reason: null })).toBe(false);
    expect(fencedOut(2, { attempt: 2, stop_reason: "cancelled" })).toBe(false);
  });

  it("a run claimed since by another worker, running or ended, is not", () => {
    expect(fencedOut(1, { attempt: 2, stop_reason: null })).toBe(true);
    expect(fencedOut(1, { attempt: 2, stop_reason: "completed" })).toBe(true);
  });

  it("a run a reaper ended for its lapsed leases is not, though no one claimed it since", () => {
    expect(fencedOut(2, { attempt: 2, stop_reason: "max_attempts" })).toBe(true);
  });
});
