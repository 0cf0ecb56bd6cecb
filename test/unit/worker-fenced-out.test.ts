import { describe, expect, it } from "vitest";
import { fencedOut } from "../../src/runtime/queue/worker.js";

describe("fencedOut: whether a run as stored after an attempt is still that attempt's", () => {
  it("a run ended or released by the attempt itself is its own", () => {
    expect(fencedOut(1, { attempt: 1, status: "success", stop_reason: "completed" })).toBe(false);
    expect(fencedOut(2, { attempt: 2, status: "cancelled", stop_reason: "cancelled" })).toBe(false);
    // released by this worker itself (draining, or handing the run over)
    expect(fencedOut(3, { attempt: 3, status: "pending", stop_reason: null }, true)).toBe(false);
  });

  it("a run claimed since by another worker, running or ended, is not", () => {
    expect(fencedOut(1, { attempt: 2, status: "running", stop_reason: null })).toBe(true);
    expect(fencedOut(1, { attempt: 2, status: "success", stop_reason: "completed" })).toBe(true);
  });

  it("a run a reaper ended for its lapsed leases is not, though no one claimed it since", () => {
    expect(fencedOut(2, { attempt: 2, status: "error", stop_reason: "max_attempts" })).toBe(true);
  });

  it("a run a reaper put back in the queue after its lease lapsed, not claimed since, is not (it reads pending at the same attempt)", () => {
    expect(fencedOut(1, { attempt: 1, status: "pending", stop_reason: null })).toBe(true);
    expect(fencedOut(1, { attempt: 1, status: "pending", stop_reason: null }, false)).toBe(true);
  });
});
