import { Command, type StateSnapshot } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { agentEntry } from "../../src/graph/agent-start.js";
import { needsRunReset } from "../../src/graph/state.js";
import { reachedBreakpoint, stoppedAtBreakpoint } from "../../src/runtime/execution/breakpoints.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";

/** The fields of a run record these functions read. */
function run(fields: Partial<RunRecord>): RunRecord {
  return { run_id: "r-new", input: null, limits: {}, interrupt_before: null, interrupt_after: null, checkpoint_id: null, ...fields } as RunRecord;
}

/** A state as LangGraph's getState gives it, reduced to what these functions read. */
function snapshot(next: string[], source: string, messages: unknown[] = []): StateSnapshot {
  return { values: { messages, run_id: "r-old" }, next, tasks: next.map((name) => ({ id: name, name, interrupts: [] })), metadata: { source, step: 3, parents: {} }, config: {}, createdAt: "2026-12-01T00:00:00Z" } as unknown as StateSnapshot;
}

describe("how an agent run enters its graph", () => {
  it("with messages: they enter from the start with the run's id and fresh run-scoped fields; without: a Command of the run's own run-scoped fields, or nothing to do", () => {
    const entered = Date.now();
    const withInput = agentEntry(run({ input: { messages: ["hi"] }, limits: { runTimeoutMs: 7_000 } }), snapshot([], "loop"), 1_000);
    expect(withInput.kind).toBe("input");
    const input = (withInput as { input: Record<string, unknown> & { messages: unknown[] } }).input;
    expect(input.messages).toHaveLength(1);
    // what a run resets, in its own input: the graph goes from its start straight to the guard
    expect([input["run_id"], input["stop_reason"], input["answer"], input["error"], input["approvals"], input["decision"]]).toEqual(["r-new", null, null, null, {}, null]);
    expect(input["deadline_at"] as number).toBeGreaterThanOrEqual(entered + 7_000);
    expect(input["deadline_at"] as number).toBeLessThan(entered + 7_000 + 60_000);

    const before = Date.now();
    const resumed = agentEntry(run({ limits: { runTimeoutMs: 5_000 } }), snapshot(["model"], "loop"), 1_000);
    expect(resumed.kind).toBe("continue");
    const command = (resumed as { input: Command }).input;
    expect(command).toBeInstanceOf(Command);
    const update = command.update as Record<string, unknown>;
    expect([update["run_id"], update["stop_reason"], update["answer"], update["error"], update["approvals"]]).toEqual(["r-new", null, null, null, {}]);
    // the decision made at the checkpoint stays: the guard's next decision continues that run
    expect("decision" in update).toBe(false);
    // the run's own limit, not the default
    expect(update["deadline_at"] as number).toBeGreaterThanOrEqual(before + 5_000);
    expect(update["deadline_at"] as number).toBeLessThan(before + 5_000 + 60_000);

    expect(agentEntry(run({}), snapshot([], "loop"), 1_000)).toEqual({ kind: "nothing" });
  });

  it("the guard resets a run's fields only where its input did not: a plain invoke's new thread or a thread whose last run ended", () => {
    const stop = { next: "finish", stop_reason: "completed", error: null, why: "answered" } as const;
    // a plain invoke: a new thread, or new messages after a run that ended
    expect(needsRunReset({ decision: null, deadline_at: null })).toBe(true);
    expect(needsRunReset({ decision: stop, deadline_at: 1 })).toBe(true);
    // a devmind run's input cleared the decision and set its deadline
    expect(needsRunReset({ decision: null, deadline_at: 1 })).toBe(false);
    // a run that paused (at a breakpoint or an approval) continues with its own fields
    expect(needsRunReset({ decision: { next: "model", why: "round 2" }, deadline_at: 1 })).toBe(false);
    expect(needsRunReset({ decision: { next: "approval", requests: [], at: 1, why: "1 call" }, deadline_at: 1 })).toBe(false);
  });

  it("breakpoints: a step's checkpoint before an interrupt_before node is where the run stopped; its entry checkpoint is not", () => {
    const breakpoint = run({ interrupt_before: ["tools"] });
    expect(reachedBreakpoint(breakpoint, snapshot(["tools"], "loop"))).toBe(true);
    expect(reachedBreakpoint(breakpoint, snapshot(["model"], "loop"))).toBe(false);
    // LangGraph passes a breakpoint where a run enters (continuing from it)
    expect(reachedBreakpoint(breakpoint, snapshot(["tools"], "input"))).toBe(false);
    expect(reachedBreakpoint(breakpoint, snapshot(["tools"], "fork"))).toBe(false);
    expect(reachedBreakpoint(run({ interrupt_before: ["*"] }), snapshot(["guard"], "loop"))).toBe(true);
    expect(reachedBreakpoint(run({}), snapshot(["tools"], "loop"))).toBe(false);

    // returned with tasks left and none failed: a breakpoint (the run's, or one compiled into the graph)
    expect(stoppedAtBreakpoint(snapshot(["guard"], "loop"))).toBe(true);
    expect(stoppedAtBreakpoint(snapshot([], "loop"))).toBe(false);
    const failed = snapshot(["guard"], "loop");
    (failed.tasks[0] as { error?: unknown }).error = "boom";
    expect(stoppedAtBreakpoint(failed)).toBe(false);
  });
});
