import { describe, expect, it } from "vitest";
import { foldArgs, foldValues } from "../../src/cli/fold.js";
import { Timeline, type TimelineEvent } from "../../src/cli/timeline.js";
import { TimelineFeed } from "../../src/cli/timeline-feed.js";
import type { CallDetail } from "../../src/cli/call-details.js";

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

describe("foldValues", () => {
  it("folds a graph's values to one line per key: long JSON cut, long lists counted, messages by their count and last one", () => {
    expect(foldValues({}, 100)).toEqual([]);
    expect(foldValues(null, 100)).toEqual([]);
    expect(foldValues("plain", 100)).toEqual(['"plain"']);
    expect(foldValues({ topic: "durable runs", approved: true, draft: null }, 100)).toEqual(['topic: "durable runs"', "approved: true", "draft: null"]);
    const [long] = foldValues({ text: "y".repeat(500) }, 40);
    expect(long?.length).toBeLessThanOrEqual(40);
    expect(long).toMatch(/^text: "y+…$/);
    const [list] = foldValues({ items: Array.from({ length: 50 }, (_, i) => i) }, 60);
    expect(list).toMatch(/^items: \[0,1,2,.*… \(50 items\)$/);
    expect(foldValues({ items: [1, 2] }, 60)).toEqual(["items: [1,2]"]);
    const messages = [
      { type: "human", content: "note it", id: "m1" },
      { type: "ai", content: "", tool_calls: [{ name: "append_line", args: { line: "x" }, id: "c1" }] },
      { type: "tool", content: "ok", tool_call_id: "c1" },
      { type: "ai", content: "noted" },
    ];
    expect(foldValues({ messages }, 100)).toEqual(['messages: 4 messages, last ai: "noted"']);
    expect(foldValues({ messages: messages.slice(0, 2) }, 100)).toEqual(["messages: 2 messages, last ai: calls append_line"]);
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
        '⏸ write_file(path="a.txt", content="hi") needs approval (risk medium)  [call c2]',
        "✗ rejected write_file by alice: not now",
        "↻ resumed (approval) in process 99",
        "✗ read_file()  TOOL_FAILED  1 ms  (output truncated)",
        "done",
        "✓ succeeded",
        "",
      ].join("\n"),
    );
  });

  it("folds a graph's LangChain tool calls (LangGraph's tools stream) into one line each, timed by the end's duration_ms or the stored events' times", () => {
    const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1, 10, 0, 0, ms)).toISOString();
    const events: TimelineEvent[] = [
      { type: "node.started", node: "tools", task_id: "t1", ns: [], at: at(0) },
      { type: "tools", ns: ["tools:t1"], data: { event: "on_tool_start", toolCallId: "s1", name: "search", input: '{"query":"x"}' }, at: at(10) },
      { type: "tools", ns: ["tools:t1"], data: { event: "on_tool_start", toolCallId: "s2", name: "fetch", input: "not json" }, at: at(11) },
      { type: "tools", ns: ["tools:t1"], data: { event: "on_tool_event", toolCallId: "s1", name: "search", data: { progress: 1 } }, at: at(15) },
      { type: "tools", ns: ["tools:t1"], data: { event: "on_tool_end", toolCallId: "s1", name: "search", output: { type: "tool", content: "found 3", tool_call_id: "s1" } }, duration_ms: 7, at: at(22) },
      { type: "tools", ns: ["tools:t1"], data: { event: "on_tool_error", toolCallId: "s2", name: "fetch", error: "Error: the host   is down" }, at: at(30) },
      { type: "node.finished", node: "tools", task_id: "t1", ns: [], duration_ms: 31, error: null, interrupted: false, at: at(31) },
      { type: "run.succeeded", answer: null },
    ];
    expect(render(events)).toBe(['✓ search(query="x")  7 ms', '✗ fetch("not json")  Error: the host is down  19 ms', "● tools  31 ms", "✓ succeeded", ""].join("\n"));
    const verbose = render(events, { verbose: true });
    expect(verbose).toContain('✓ search(query="x")  7 ms\n    args {"query":"x"}\n    search result found 3\n');
    // a graph that reports its calls as steps is shown by those: its tools events add no second line
    const both = render([
      { type: "tool.call.started", tool_call_id: "c1", tool: "add", args: { a: 2, b: 3 } },
      { type: "tools", ns: [], data: { event: "on_tool_start", toolCallId: "c1", name: "add", input: '{"a":2,"b":3}' } },
      { type: "tools", ns: [], data: { event: "on_tool_end", toolCallId: "c1", name: "add", output: "5" } },
      { type: "tool.call.finished", tool_call_id: "c1", tool: "add", ok: true, error_code: null, duration_ms: 2, truncated: false },
    ]);
    expect(both).toBe("✓ add(a=2, b=3)  2 ms\n");
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
      { type: "model.delta", round: 1, text: "The answer ", message_id: "m1", offset: 0 },
      { type: "model.delta", round: 1, text: "is 5.", message_id: "m1", offset: 11 },
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

  it("says the run waits once: the requests, or one line when none were shown", () => {
    expect(render([{ type: "run.interrupted" }])).toBe("⏸ waiting for approval\n");
    const out = render(stored.slice(6, 8));
    expect(out.match(/⏸/g)).toHaveLength(1);
  });

  it("prints a model error once, whole: never cut inside a URL, not repeated by run.failed", () => {
    const message = `401 Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys. ${"More text here. ".repeat(10)}See https://platform.openai.com/docs/guides/error-codes/api-errors for details.`;
    const out = render([
      { type: "model.failed", round: 1, code: "MODEL_FAILED", message, attempt: 1, will_retry: false },
      { type: "run.failed", stop_reason: "model_failed", code: "MODEL_FAILED", message },
    ]);
    expect(out).toBe(`✗ model failed [MODEL_FAILED] ${message}\n✗ failed: model_failed [MODEL_FAILED]\n`);
    const long = `see https://example.com/${"a".repeat(300)} and more words after it`;
    const cut = render([{ type: "run.failed", stop_reason: "model_failed", code: "MODEL_FAILED", message: `${"word ".repeat(500)}${long}` }]);
    expect(cut).not.toContain("https://");
    expect(cut.trim().endsWith("word…")).toBe(true);
  });
});

describe("TimelineFeed", () => {
  function feed(details: Map<string, CallDetail>, verbose: boolean): { timeline: TimelineFeed; out: () => string; source: { refreshes: number } } {
    let out = "";
    const source = { refreshes: 0 };
    const seen = new Map<string, CallDetail>();
    const timeline = new Timeline({ tty: false, verbose, write: (text) => (out += text) });
    const fed = new TimelineFeed(timeline, {
      get: (id) => seen.get(id),
      // the checkpoint is a step behind the events: each read reveals what was stored by then
      refresh: async () => {
        source.refreshes += 1;
        for (const [id, detail] of details) seen.set(id, detail);
      },
    }, verbose);
    return { timeline: fed, out: () => out, source };
  }

  it("shows the arguments of a refused call (no tool.call.started) and, with --verbose, each call's result", async () => {
    const details = new Map<string, CallDetail>([
      ["c1", { name: "run_command", args: { command: "rm -rf /" }, result: '{"ok":false,"error":{"code":"PERMISSION_DENIED"}}' }],
      ["c2", { name: "add", args: { a: 1, b: 2 }, result: '{"ok":true,"data":3}' }],
    ]);
    const events: TimelineEvent[] = [
      { type: "tool.call.finished", tool_call_id: "c1", tool: "run_command", ok: false, error_code: "PERMISSION_DENIED", duration_ms: 0, truncated: false },
      { type: "tool.call.started", tool_call_id: "c2", tool: "add", args: { a: 1, b: 2 } },
      { type: "tool.call.finished", tool_call_id: "c2", tool: "add", ok: true, error_code: null, duration_ms: 1, truncated: false },
      { type: "run.succeeded", answer: "3" },
    ];
    const plain = feed(details, false);
    for (const event of events) plain.timeline.push(event);
    await plain.timeline.flush();
    expect(plain.out()).toBe('✗ run_command(command="rm -rf /")  PERMISSION_DENIED  0 ms\n✓ add(a=1, b=2)  1 ms\n3\n✓ succeeded\n');

    const verbose = feed(details, true);
    for (const event of events) verbose.timeline.push(event);
    await verbose.timeline.flush();
    const lines = verbose.out().split("\n");
    expect(lines[0]).toBe('✗ run_command(command="rm -rf /")  PERMISSION_DENIED  0 ms');
    expect(lines[1]).toBe('    args {"command":"rm -rf /"}');
    expect(lines[2]).toBe('    run_command result {"ok":false,"error":{"code":"PERMISSION_DENIED"}}');
    expect(verbose.out()).toContain('✓ add(a=1, b=2)  1 ms\n    args {"a":1,"b":2}\n    add result {"ok":true,"data":3}\n');
  });

  it("without the thread's messages, still shows every line in order at flush", async () => {
    const empty = feed(new Map(), false);
    empty.timeline.push({ type: "tool.call.finished", tool_call_id: "x", tool: "write_file", ok: false, error_code: "PERMISSION_DENIED", duration_ms: 0, truncated: false });
    empty.timeline.push({ type: "run.succeeded", answer: "ok" });
    await empty.timeline.flush();
    expect(empty.out()).toBe("✗ write_file()  PERMISSION_DENIED  0 ms\nok\n✓ succeeded\n");
  });
});
