import { describe, expect, it } from "vitest";
import { DECISION_LIMITS } from "../../src/constants.js";
import { DevmindError } from "../../src/errors.js";
import { applyDecisions, type ApprovalCandidate, type DecisionOutcome } from "../../src/graph/approvals.js";
import { parseDecision, parseDecisions } from "../../src/vocabulary/decisions.js";

function failure(run: () => unknown): DevmindError {
  try {
    run();
  } catch (error) {
    if (error instanceof DevmindError) return error;
    throw error;
  }
  throw new Error("expected a DevmindError");
}

describe("parseDecisions: the one parser of decision bodies (CONTRACT section 5)", () => {
  it("reads approve, edit (camelCase or snake_case) and reject, with ids, messages and the body's reason", () => {
    expect(
      parseDecisions({
        decisions: [
          { type: "approve", tool_call_id: "a" },
          { type: "edit", editedAction: { name: "write_file", args: { path: "x" } } },
          { type: "edit", tool_call_id: "c", edited_action: { args: { path: "y" } }, reason: "shorter" },
          { type: "reject", message: "no", extra: true },
        ],
        reason: "audit",
      }),
    ).toEqual({
      decisions: [
        { type: "approve", tool_call_id: "a" },
        { type: "edit", editedAction: { name: "write_file", args: { path: "x" } } },
        { type: "edit", tool_call_id: "c", editedAction: { args: { path: "y" } }, message: "shorter" },
        { type: "reject", message: "no" },
      ],
      reason: "audit",
    });
  });

  it("refuses what is not a decision body with RUN_INPUT_INVALID naming the entry", () => {
    const cases: [unknown, RegExp][] = [
      [null, /at least one decision/],
      [{}, /at least one decision/],
      [{ decisions: [] }, /at least one decision/],
      [{ decisions: "approve" }, /at least one decision/],
      [{ decisions: [{ type: "approve" }], reason: 5 }, /reason must be a string/],
      [{ decisions: [{ type: "approve" }], reason: "r".repeat(DECISION_LIMITS.reasonMaxChars + 1) }, /reason is longer/],
      [{ decisions: Array.from({ length: DECISION_LIMITS.maxDecisions + 1 }, () => ({ type: "approve" })) }, /at most/],
      [{ decisions: [{ type: "approve" }, "approve"] }, /^decision 1: must be an object/],
      [{ decisions: [{ type: "maybe" }] }, /^decision 0: type must be/],
      [{ decisions: [{ type: "approve", tool_call_id: 7 }] }, /^decision 0: tool_call_id must be a string/],
      [{ decisions: [{ type: "reject", message: 42 }] }, /^decision 0: message must be a string/],
      [{ decisions: [{ type: "edit" }] }, /^decision 0: an edit needs editedAction/],
      [{ decisions: [{ type: "edit", editedAction: { args: [] } }] }, /^decision 0: an edit needs editedAction/],
      [{ decisions: [{ type: "edit", editedAction: { name: 3, args: {} } }] }, /^decision 0: editedAction.name must be a string/],
    ];
    for (const [body, message] of cases) {
      const error = failure(() => parseDecisions(body));
      expect(error.code).toBe("RUN_INPUT_INVALID");
      expect(error.message).toMatch(message);
    }
    expect(failure(() => parseDecision("x", 3)).details).toEqual({ index: 3 });
  });

  it("is what the agent's approval node reads resume values with: malformed entries are skipped, an edit of another tool is a rejection", () => {
    const candidate = (id: string): ApprovalCandidate => ({ call: { id, name: "write_file", args: { path: id } }, description: "", risk: "medium" });
    const decided = new Map<string, DecisionOutcome>();
    applyDecisions(
      { decisions: [{ type: "maybe" }, { type: "approve" }, { type: "edit", tool_call_id: "c", editedAction: { name: "run_command", args: {} } }, { type: "reject", tool_call_id: "unknown" }] },
      [candidate("a"), candidate("b"), candidate("c")],
      decided,
    );
    expect([...decided.entries()]).toEqual([
      ["a", { type: "approve" }],
      ["c", { type: "reject", message: "the edit changed the tool from write_file to run_command, which is not allowed" }],
    ]);
  });
});
