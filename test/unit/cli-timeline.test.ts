import { describe, expect, it } from "vitest";
import { foldArgs } from "../../src/cli/fold.js";
import { Timeline, type TimelineEvent } from "../../src/cli/timeline.js";

function render(events: TimelineEvent[], options: { tty?: boolean; verbose?: boolean } = {}): string {
  let out = "";
  const timeline = new Timeline({ tty: options.tty ?? false, verbose: options.verbose ?? false, write: (text) => (out += text) });
  for (const event of events) timeline.event(event);
  timeline.stop();
  return out;
}

const WORKER = "host:4242:abcd1234";

describe("foldArgs", () => {
  it("folds arguments to one line: JSON values, long strings cut first, then the line", () => {
    expect(foldArgs({ a: 1, b: 2 }, 72)).toBe("a=1, b=2");
    expect(foldArgs({}, 72)).toBe("");
    expect(foldArgs(undefined, 72)).toBe("");
    expect(foldArgs({ path: "notes.md", content: "line one\nline two and a lot more text than fits" }, 40)).toBe('path="notes.md", content="line one\\nlin…');
    expect(foldArgs({ a: "x".repeat(500) }, 30).length).toBeLessThanOrEqual(30);
    expect(foldArgs([1, 2, 3], 72)).toBe("[1,2,3]");
  });
});

describe("Timeline", () => {
  const stored: TimelineEvent[] = [
    { type: "run.created", at: "2026-01-01T10:00:00.000Z" },
    { type: "run.started", attempt: 1, worker: WORKER, at: "2026-01-01T10:00:01.000Z" },
    { type: "model.started", round: 1 },
    { type: "model.finished", round: 1, duration_ms: 5, tool_calls: 1, usage: { input_tokens: 10, output_tokens: 3 }, finish_reason: "tool_calls" },
    { type: "tool.call.started", tool_call_id: "c1", tool: "add", args: { a: 2, b: 3 } },
    { type: "tool.call.finished", tool_call_id: "c1", tool: "add", ok: true, error_code: null, duration_ms: 2, truncated: false },
    { type: "approval.requested", requests: [{ name: "write_file", args: { path: "a.txt", content: "hi" }, tool_call_id: "c2", risk: "medium" }] },
    { type: "run.interrupted" },
    { type: "approval.decided", tool_call_id: "c2", decision: "reject", by: "alice", reason: "not   now" },
    { type: "run.resumed", reason: "approval", attempt: 2, worker: "host:99:ffff0000" },
    { type: "tool.call.finished", tool_call_id: "c3", tool: "read_file", ok: false, error_code: "TOOL_FAILED", duration_ms: 1, truncated: true },
    { type: "run.succeeded", answer: "done" },
  ];

  it("prints stored events as one line each: folded tool calls, approvals, the answer, the end", () => {
    expect(render(stored)).toBe(
      [
        "▶ started in process 4242  10:00:01",
        "✓ add(a=2, b=3)  2 ms",
        '⏸ write_file(path="a.txt", content="hi") needs approval (risk medium)',
        "⏸ waiting for approval",
        "✗ rejected write_file by alice: not now",
        "↻ resumed (approval) in process 99",
        "✗ read_file()  TOOL_FAILED  1 ms  (output truncated)",
        "done",
        "✓ succeeded",
        "",
      ].join("\n"),
    );
  });

  it("--verbose adds the created line, model usage and full arguments", () => {
    const out = render(stored.slice(0, 6), { verbose: true });
    expect(out).toContain("· created  10:00:00\n");
    expect(out).toContain("▶ started in process 4242 (attempt 1, host:4242:abcd1234)");
    expect(out).toContain("· model round 1: tool_calls, 1 tool call(s), 10 in / 3 out tokens, 5 ms\n");
    expect(out).toContain('✓ add(a=2, b=3)  2 ms\n    args {"a":2,"b":3}\n');
  });

  it("live: model text is printed once per round, and the final answer is not repeated", () => {
    const live: TimelineEvent[] = [
      { type: "model.started", round: 1 },
      { type: "model.delta", round: 1, text: "The answer " },
      { type: "model.delta", round: 1, text: "is 5." },
      { type: "model.finished", round: 1, duration_ms: 1, tool_calls: 0, usage: { input_tokens: 1, output_tokens: 1 }, finish_reason: "stop" },
      { type: "run.succeeded", answer: "The answer is 5." },
    ];
    expect(render(live)).toBe("The answer is 5.\n✓ succeeded\n");
    const tty = render(live, { tty: true });
    expect(tty.replace(/\r\x1b\[2K/g, "").replace(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking \(model round 1\)/g, "")).toBe("The answer is 5.\n✓ succeeded\n");
    expect(tty).toContain("⠋ thinking (model round 1)");
  });

  it("ends: failed with stop reason and code, timeout, cancelled", () => {
    expect(render([{ type: "run.failed", stop_reason: "max_model_rounds", code: "MAX_MODEL_ROUNDS", message: "limit\nreached" }])).toBe("✗ failed: max_model_rounds [MAX_MODEL_ROUNDS] limit reached\n");
    expect(render([{ type: "run.timeout" }])).toBe("✗ timed out (the run's deadline passed)\n");
    expect(render([{ type: "run.cancel_requested" }, { type: "run.cancelled" }])).toBe("■ cancel requested\n■ cancelled\n");
  });
});
