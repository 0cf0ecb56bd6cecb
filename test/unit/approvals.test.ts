import { describe, expect, it } from "vitest";
import { applyDecisions, approvalRequest, type ApprovalCandidate, type DecisionOutcome } from "../../src/graph/approvals.js";

const open: ApprovalCandidate[] = [
  { call: { id: "c1", name: "write_file", args: { path: "a.txt", content: "x" } }, description: "write a.txt", risk: "medium" },
  { call: { id: "c2", name: "run_command", args: { command: "ls" } }, description: "run ls", risk: "high" },
  { call: { id: "c3", name: "write_file", args: { path: "b.txt", content: "y" } }, description: "write b.txt", risk: "medium" },
];

describe("approval interrupt value", () => {
  it("has LangChain's camelCase shape and the snake_case copies, one review config per tool in order, in both spellings", () => {
    const value = approvalRequest(open);
    expect(value.actionRequests.map((r) => [r.tool_call_id, r.name, r.risk])).toEqual([
      ["c1", "write_file", "medium"],
      ["c2", "run_command", "high"],
      ["c3", "write_file", "medium"],
    ]);
    expect(value.action_requests).toEqual(value.actionRequests);
    // both spellings in each config: the SDK keeps the camelCase list, Agent Chat UI reads action_name
    const all = ["approve", "edit", "reject"];
    expect(value.reviewConfigs).toEqual([
      { actionName: "write_file", allowedDecisions: all, action_name: "write_file", allowed_decisions: all },
      { actionName: "run_command", allowedDecisions: all, action_name: "run_command", allowed_decisions: all },
    ]);
    expect(value.review_configs).toEqual(value.reviewConfigs);
    // copies, not shared objects: a JSON round trip keeps both
    expect(JSON.parse(JSON.stringify(value))).toEqual(value);
  });

  it("takes edits as editedAction or edited_action, by order and by tool_call_id", () => {
    const decided = new Map<string, DecisionOutcome>();
    applyDecisions(
      {
        decisions: [
          { type: "edit", edited_action: { name: "write_file", args: { path: "a.txt", content: "snake" } } },
          { type: "edit", tool_call_id: "c3", editedAction: { name: "write_file", args: { path: "b.txt", content: "camel" } } },
          { type: "edit", edited_action: { name: "write_file", args: { command: "rm" } } },
        ],
      },
      open,
      decided,
    );
    expect([...decided.entries()]).toEqual([
      ["c1", { type: "edit", args: { path: "a.txt", content: "snake" } }],
      ["c3", { type: "edit", args: { path: "b.txt", content: "camel" } }],
      ["c2", { type: "reject", message: "the edit changed the tool from run_command to write_file, which is not allowed" }],
    ]);
  });
});
