import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { openBackend, freshMigratedSchema } from "../helpers/databases.js";
import { pairing, runAgent, shape, tempWorkspace } from "../helpers/agent.js";

let owner: Database;
let db: Database;
let drop: () => Promise<void>;
let workspace: { dir: string; cleanup: () => void };

beforeAll(async () => {
  owner = await openBackend("pglite");
  ({ db, drop } = await freshMigratedSchema(owner));
});
afterAll(async () => {
  await drop();
  await owner.close();
});
beforeEach(() => {
  workspace = tempWorkspace();
});
afterEach(() => workspace.cleanup());

const run = (turns: Parameters<typeof runAgent>[2], options?: Parameters<typeof runAgent>[3]) => runAgent(db, workspace.dir, turns, options);

describe("agent graph with the scripted model", () => {
  it("answers directly", async () => {
    const { out, model, events } = await run([{ content: "hello there", usage: { input_tokens: 7, output_tokens: 3 } }]);
    expect(out.stop_reason).toBe("completed");
    expect(out.answer).toBe("hello there");
    expect(shape(out.messages)).toEqual(["human", "ai"]);
    expect(out["model_rounds"]).toBe(1);
    expect(out["tool_calls"]).toBe(0);
    expect(out["usage"]).toEqual({ input_tokens: 7, output_tokens: 3 });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]?.messages[0]?.getType()).toBe("system");
    const types = events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]);
    expect(types).toEqual(["model.started", "model.delta", "model.finished", "graph.stopped"]);
    expect(events.find((e) => e.type === "model.finished")).toMatchObject({ round: 1, tool_calls: 0, usage: { input_tokens: 7, output_tokens: 3 }, finish_reason: "stop" });
    expect(events.filter((e) => e.type === "model.delta").map((e) => (e as { text: string }).text).join("")).toBe("hello there");
  });

  it("makes one call and pairs the result with its id", async () => {
    const { out, model } = await run([{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 40 } }] }, { content: "42" }]);
    expect(out.stop_reason).toBe("completed");
    expect(shape(out.messages)).toEqual(["human", "ai", "tool", "ai"]);
    const pairs = pairing(out.messages);
    expect(pairs).toEqual([{ id: "c1", name: "add", envelope: { ok: true, tool: "add", data: { sum: 42 }, error: null, truncated: false } }]);
    expect(model.calls[1]?.tools).toContain("add");
    expect(out["tool_calls"]).toBe(1);
  });

  it("runs several rounds in order", async () => {
    const { out } = await run([
      { tool_calls: [{ name: "add", args: { a: 1, b: 1 } }] },
      { tool_calls: [{ name: "add", args: { a: 2, b: 2 } }] },
      { tool_calls: [{ name: "add", args: { a: 3, b: 3 } }] },
      { content: "2, 4, 6" },
    ]);
    expect(shape(out.messages)).toEqual(["human", "ai", "tool", "ai", "tool", "ai", "tool", "ai"]);
    expect(pairing(out.messages).map((p) => p.envelope.data)).toEqual([{ sum: 2 }, { sum: 4 }, { sum: 6 }]);
    expect(out["model_rounds"]).toBe(4);
  });

  it("runs several calls of one message, each answered once", async () => {
    const { out, events } = await run([
      { tool_calls: [{ id: "a", name: "add", args: { a: 1, b: 2 } }, { id: "b", name: "add", args: { a: 3, b: 4 } }, { id: "c", name: "get_current_time", args: { timezone: "UTC" } }] },
      { content: "done" },
    ]);
    const pairs = pairing(out.messages);
    expect(pairs.map((p) => p.id).sort()).toEqual(["a", "b", "c"]);
    expect(pairs.find((p) => p.id === "b")?.envelope.data).toEqual({ sum: 7 });
    expect(events.filter((e) => e.type === "tool.call.started")).toHaveLength(3);
    expect(events.filter((e) => e.type === "tool.call.finished")).toHaveLength(3);
    expect(out["tool_calls"]).toBe(3);
  });

  it("answers an unknown tool with TOOL_NOT_FOUND and continues", async () => {
    const { out } = await run([{ tool_calls: [{ id: "x", name: "launch_rockets", args: {} }] }, { content: "could not" }]);
    expect(out.stop_reason).toBe("completed");
    const [pair] = pairing(out.messages);
    expect(pair?.envelope).toMatchObject({ ok: false, tool: "launch_rockets", data: null, error: { code: "TOOL_NOT_FOUND" } });
  });

  it("answers schema-invalid arguments with INVALID_ARGUMENTS naming the field", async () => {
    const { out } = await run([{ tool_calls: [{ id: "x", name: "add", args: { a: "two", b: 2 } }] }, { content: "fixed" }]);
    const [pair] = pairing(out.messages);
    expect(pair?.envelope.error?.code).toBe("INVALID_ARGUMENTS");
    expect(JSON.stringify(pair?.envelope)).toContain("a");
  });

  it("answers unparsable arguments with INVALID_ARGUMENTS and keeps the pairing", async () => {
    const { out, model } = await run([{ tool_calls: [{ id: "bad", name: "add", args_json: "{not json" }] }, { content: "sorry" }]);
    expect(out.stop_reason).toBe("completed");
    const [pair] = pairing(out.messages);
    expect(pair).toMatchObject({ id: "bad", envelope: { ok: false, error: { code: "INVALID_ARGUMENTS" } } });
    const second = model.calls[1]?.messages ?? [];
    expect(second.some((m) => ToolMessage.isInstance(m) && m.tool_call_id === "bad")).toBe(true);
  });

  it("turns a throwing tool into TOOL_FAILED", async () => {
    const { out } = await run([{ tool_calls: [{ name: "boom", args: {} }] }, { content: "it failed" }]);
    const [pair] = pairing(out.messages);
    expect(pair?.envelope).toMatchObject({ ok: false, error: { code: "TOOL_FAILED", message: expect.stringContaining("kaboom") } });
    expect(out.stop_reason).toBe("completed");
  });

  it("times a tool out with TOOL_TIMEOUT and fires its signal", async () => {
    const { out, probe } = await run([{ tool_calls: [{ name: "slow", args: { ms: 5_000 } }] }, { content: "too slow" }]);
    const [pair] = pairing(out.messages);
    expect(pair?.envelope.error?.code).toBe("TOOL_TIMEOUT");
    expect(probe.slowSignalFired).toBe(true);
  });

  it("stops with model_failed on a model error", async () => {
    const { out } = await run([{ error: "upstream exploded" }]);
    expect(out.stop_reason).toBe("model_failed");
    expect(out["error"]).toMatchObject({ code: "MODEL_FAILED", message: expect.stringContaining("upstream exploded") });
    expect(shape(out.messages)).toEqual(["human"]);
  });

  it("stops with model_timeout when the model is slower than its timeout", async () => {
    const { out } = await run([{ content: "late", delay_ms: 2_000 }], { limits: { modelTimeoutMs: 100 } });
    expect(out.stop_reason).toBe("model_timeout");
    expect(out["error"]).toMatchObject({ code: "MODEL_TIMEOUT" });
  });

  it("retries a transient model error and completes", async () => {
    const { out, model, events } = await run([{ error: "rate limited", status: 429 }, { content: "after the retry" }], { limits: { modelMaxRetries: 2 } });
    expect(out.stop_reason).toBe("completed");
    expect(out.answer).toBe("after the retry");
    expect(model.calls).toHaveLength(2);
    expect(events.filter((e) => e.type === "model.failed")).toEqual([
      { type: "model.failed", round: 1, code: "MODEL_FAILED", message: "rate limited", attempt: 1, will_retry: true },
    ]);
    expect(out["model_rounds"]).toBe(1);
  });

  it("does not retry a permanent model error", async () => {
    const { out, model } = await run([{ error: "bad request" }, { content: "never" }], { limits: { modelMaxRetries: 2 } });
    expect(out.stop_reason).toBe("model_failed");
    expect(model.calls).toHaveLength(1);
  });

  it("stops at max_model_rounds", async () => {
    const loop = Array.from({ length: 5 }, () => ({ tool_calls: [{ name: "add", args: { a: 1, b: 1 } }] }));
    const { out, model } = await run(loop, { limits: { maxModelRounds: 2 } });
    expect(out.stop_reason).toBe("max_model_rounds");
    expect(model.calls).toHaveLength(2);
    expect(out["model_rounds"]).toBe(2);
    pairing(out.messages);
  });

  it("stops at max_tool_calls: runs what the budget allows in the model's order, the rest TOOL_NOT_RUN", async () => {
    const { out, probe } = await run(
      [{ tool_calls: [{ name: "count", args: {} }, { name: "count", args: {} }] }, { tool_calls: [{ id: "p", name: "count", args: {} }, { id: "q", name: "count", args: {} }] }, { content: "never" }],
      { limits: { maxToolCalls: 3 } },
    );
    expect(out.stop_reason).toBe("max_tool_calls");
    expect(probe.counter).toBe(3);
    expect(out["tool_calls"]).toBe(3);
    const pairs = pairing(out.messages);
    expect(pairs.filter((p) => p.id === "p" || p.id === "q").map((p) => p.envelope.error?.code ?? "ok")).toEqual(["ok", "TOOL_NOT_RUN"]);
  });

  it("counts executed calls only: 20 asked with a budget of 5 run 5, the other 15 are TOOL_NOT_RUN, never PERMISSION_DENIED", async () => {
    const calls = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, name: "count", args: {} }));
    const { out, probe, events } = await run([{ tool_calls: calls }, { content: "never" }], { limits: { maxToolCalls: 5 } });
    expect(out.stop_reason).toBe("max_tool_calls");
    expect(probe.counter).toBe(5);
    expect(out["tool_calls"]).toBe(5);
    const codes = pairing(out.messages).map((p) => p.envelope.error?.code ?? "ok");
    expect(codes).toEqual([...Array(5).fill("ok"), ...Array(15).fill("TOOL_NOT_RUN")]);
    expect(events.filter((e) => e.type === "tool.call.started")).toHaveLength(5);
  });

  it("does not count refusals as tool calls", async () => {
    const { out } = await run([
      { tool_calls: [{ id: "u", name: "no_such_tool", args: {} }, { id: "i", name: "add", args: { a: "x" } }, { id: "d", name: "write_file", args: { path: "/etc/passwd", content: "x" } }, { id: "a", name: "add", args: { a: 1, b: 2 } }] },
      { content: "done" },
    ]);
    expect(out.stop_reason).toBe("completed");
    expect(pairing(out.messages).map((p) => p.envelope.error?.code ?? "ok")).toEqual(["TOOL_NOT_FOUND", "INVALID_ARGUMENTS", "PERMISSION_DENIED", "ok"]);
    expect(out["tool_calls"]).toBe(1);
  });

  it("stops at token_budget before the next model call", async () => {
    const { out, model } = await run(
      [{ tool_calls: [{ name: "add", args: { a: 1, b: 1 } }], usage: { input_tokens: 900, output_tokens: 200 } }, { content: "never" }],
      { limits: { maxTokens: 1_000 } },
    );
    expect(out.stop_reason).toBe("token_budget");
    expect(model.calls).toHaveLength(1);
    expect(out["usage"]).toEqual({ input_tokens: 900, output_tokens: 200 });
  });

  it("stops at the deadline", async () => {
    // the first model call must start before the deadline and end after it: seconds either side,
    // not milliseconds, so a loaded machine cannot reach the deadline before the first call
    const { out, model } = await run([{ tool_calls: [{ name: "slow", args: { ms: 100 } }], delay_ms: 3_000 }, { content: "never" }], { limits: { runTimeoutMs: 2_000 } });
    expect(out.stop_reason).toBe("deadline");
    expect(model.calls).toHaveLength(1);
    pairing(out.messages);
  });

  it("stops with no_progress when the same call keeps failing", async () => {
    const same = { tool_calls: [{ name: "boom", args: { n: 1 } }] };
    const { out, model } = await run([same, same, same, same, { content: "never" }], { limits: { noProgressLimit: 3 } });
    expect(out.stop_reason).toBe("no_progress");
    expect(model.calls).toHaveLength(3);
  });

  it("stops with model_truncated on a length finish, keeping the partial answer and running no call", async () => {
    const { out, probe } = await run([{ content: "The answer is forty", finish_reason: "length", tool_calls: [{ name: "count", args: {} }] }]);
    expect(out.stop_reason).toBe("model_truncated");
    expect(out.answer).toBe("The answer is forty");
    expect(probe.counter).toBe(0);
    pairing(out.messages);
  });

  it("cancels mid-tool: the call is answered and the run stops as cancelled", async () => {
    const { out, model } = await run([{ tool_calls: [{ id: "c", name: "cancel_me", args: {} }] }, { content: "never" }], { cancel: true });
    expect(out.stop_reason).toBe("cancelled");
    expect(model.calls).toHaveLength(1);
    const [pair] = pairing(out.messages);
    expect(pair?.envelope.error?.code).toBe("TOOL_CANCELLED");
    expect(out["tool_calls"]).toBe(1);
  });

  it("cancels mid-tool with side effects: the outcome is unknown, not cancelled", async () => {
    const { out } = await run([{ tool_calls: [{ id: "c", name: "cancel_me_write", args: {} }] }, { content: "never" }], { cancel: true });
    expect(out.stop_reason).toBe("cancelled");
    const [pair] = pairing(out.messages);
    expect(pair?.envelope.error?.code).toBe("TOOL_OUTCOME_UNKNOWN");
  });

  it("elides old tool outputs to fit the context budget, keeping every pair", async () => {
    const { out, model } = await run(
      [{ tool_calls: [{ id: "big1", name: "big", args: { chars: 1_900 } }] }, { tool_calls: [{ id: "small", name: "add", args: { a: 1, b: 2 } }] }, { content: "done" }],
      { limits: { contextTokens: 700 } },
    );
    expect(out.stop_reason).toBe("completed");
    const stored = out.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "big1");
    expect(String(stored?.content).length).toBeGreaterThan(1_900);
    const prompt = model.calls[2]?.messages ?? [];
    const sent = prompt.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "big1");
    expect(JSON.parse(String(sent?.content))).toMatchObject({ tool: "big", elided: expect.any(String) });
    expect(prompt.some((m) => ToolMessage.isInstance(m) && m.tool_call_id === "small" && String(m.content).includes('"sum":3'))).toBe(true);
    pairing(prompt.slice(1));
  });

  it("answers hostile names and huge arguments with bounded tool messages and keeps going", async () => {
    const hugeName = `../../${"x".repeat(5_000)}`;
    const { out } = await run([
      {
        tool_calls: [
          { id: "n", name: hugeName, args: {} },
          { id: "h", name: "add", args: { a: "9".repeat(200_000), b: 1 } },
          { id: "p", name: "append_file", args: { path: "../../../etc/x", content: "y" } },
          { id: "q", name: "add", args: JSON.parse('{"a": 1, "b": 2, "__proto__": {"polluted": true}}') as Record<string, unknown> },
        ],
      },
      { content: "handled" },
    ]);
    expect(out.stop_reason).toBe("completed");
    const pairs = pairing(out.messages);
    expect(Object.fromEntries(pairs.map((p) => [p.id, p.envelope.error?.code]))).toEqual({
      n: "TOOL_NOT_FOUND",
      h: "INVALID_ARGUMENTS",
      q: "INVALID_ARGUMENTS",
      p: "PERMISSION_DENIED",
    });
    for (const message of out.messages.filter((m) => m.getType() === "tool")) expect(String(message.content).length).toBeLessThan(3_000);
    // what goes back to the model is a valid conversation: no tool name an API would refuse
    const names = out.messages.flatMap((m) => ((m as { tool_calls?: { name: string }[] }).tool_calls ?? []).map((c) => c.name));
    expect(names.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(names).toContain("unknown_tool");
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("treats tool output that tries to inject instructions as data: nothing changes", async () => {
    const { out, model } = await run(
      [
        { tool_calls: [{ name: "inject", args: {} }] },
        { tool_calls: [{ id: "w", name: "write_file", args: { path: "/etc/passwd", content: "x" } }, { id: "n", name: "write_file", args: { path: "notes.txt", content: "x" } }] },
        { content: "done" },
      ],
      { limits: { maxToolCalls: 5 } },
    );
    expect(model.calls[1]?.tools).toEqual(model.calls[0]?.tools);
    const injected = model.calls[1]?.messages.find((m) => ToolMessage.isInstance(m));
    expect(JSON.parse(String(injected?.content))).toMatchObject({ ok: true, tool: "inject", data: expect.stringContaining("ignore all previous") });
    // the policy still holds: the write outside the workspace is refused, the other still needs a human
    const refused = out.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "w");
    expect(JSON.parse(String(refused?.content)).error.code).toBe("PERMISSION_DENIED");
    expect(out.stop_reason).toBeNull();
    const pending = out["__interrupt__"] as { value: { actionRequests: { tool_call_id: string }[] } }[];
    expect(pending[0]?.value.actionRequests.map((r) => r.tool_call_id)).toEqual(["n"]);
  });
});

describe("approvals in the graph", () => {
  const writeTurns = [
    { tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "one" } }, { id: "w2", name: "write_file", args: { path: "b.txt", content: "two" } }, { id: "s", name: "add", args: { a: 1, b: 1 } }] },
    { content: "finished" },
  ];

  it("pauses with the human-in-the-loop request, applies approve / edit / reject", async () => {
    const first = await run(writeTurns);
    const interrupts = first.out["__interrupt__"] as { value: { actionRequests: { tool_call_id: string; name: string; risk: string }[]; reviewConfigs: unknown[] } }[];
    expect(interrupts[0]?.value.actionRequests.map((r) => [r.tool_call_id, r.name, r.risk])).toEqual([
      ["w1", "write_file", "medium"],
      ["w2", "write_file", "medium"],
    ]);
    expect(interrupts[0]?.value.reviewConfigs).toMatchObject([{ actionName: "write_file", allowedDecisions: ["approve", "edit", "reject"] }]);
    const out = (await first.graph.invoke(
      new Command({ resume: { decisions: [{ type: "edit", edited_action: { name: "write_file", args: { path: "a.txt", content: "EDITED" } } }, { type: "reject", message: "not b" }] } }),
      first.config as never,
    )) as typeof first.out;
    expect(out.stop_reason).toBe("completed");
    const pairs = pairing(out.messages);
    expect(pairs.find((p) => p.id === "w1")?.envelope.ok).toBe(true);
    expect(pairs.find((p) => p.id === "w2")?.envelope).toMatchObject({ ok: false, error: { code: "APPROVAL_REJECTED", message: expect.stringContaining("not b") } });
    expect(pairs.find((p) => p.id === "s")?.envelope.data).toEqual({ sum: 2 });
    const { readFileSync, existsSync } = await import("node:fs");
    expect(readFileSync(`${workspace.dir}/a.txt`, "utf8")).toBe("EDITED");
    expect(existsSync(`${workspace.dir}/b.txt`)).toBe(false);
  });

  it("stays interrupted until every call has a decision (decisions by tool_call_id)", async () => {
    const first = await run(writeTurns);
    const second = (await first.graph.invoke(new Command({ resume: { decisions: [{ type: "approve", tool_call_id: "w2" }] } }), first.config as never)) as typeof first.out;
    const pending = second["__interrupt__"] as { value: { actionRequests: { tool_call_id: string }[] } }[];
    expect(pending[0]?.value.actionRequests.map((r) => r.tool_call_id)).toEqual(["w1"]);
    const done = (await first.graph.invoke(new Command({ resume: { decisions: [{ type: "approve", tool_call_id: "w1" }] } }), first.config as never)) as typeof first.out;
    expect(done.stop_reason).toBe("completed");
    expect(pairing(done.messages).filter((p) => p.name === "write_file").every((p) => p.envelope.ok)).toBe(true);
  });

  it("refuses a write outside the workspace before asking anyone", async () => {
    const { out, events } = await run([{ tool_calls: [{ id: "esc", name: "write_file", args: { path: "../../etc/cron.d/x", content: "boom" } }] }, { content: "refused" }]);
    expect(out["__interrupt__"]).toBeUndefined();
    expect(out.stop_reason).toBe("completed");
    expect(pairing(out.messages)[0]?.envelope.error?.code).toBe("PERMISSION_DENIED");
    expect(events.some((e) => e.type === "approval.requested")).toBe(false);
  });

  it("does not count the time a human takes toward the deadline", async () => {
    const first = await run([{ tool_calls: [{ id: "w", name: "write_file", args: { path: "late.txt", content: "ok" } }] }, { content: "written" }], {
      limits: { runTimeoutMs: 2_000 },
    });
    expect(first.out["__interrupt__"]).toBeDefined();
    // the human takes longer than the whole deadline (2 s leaves a loaded machine time to reach the interrupt)
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const out = (await first.graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), first.config as never)) as typeof first.out;
    expect(out.stop_reason).toBe("completed");
    expect(pairing(out.messages)[0]?.envelope.ok).toBe(true);
  });

  it("answers TOOL_NOT_RUN for an approved call when the run is cancelled before it starts", async () => {
    const first = await run([{ tool_calls: [{ id: "w", name: "write_file", args: { path: "never.txt", content: "x" } }] }, { content: "never" }]);
    expect(first.out["__interrupt__"]).toBeDefined();
    const cancelled = new AbortController();
    cancelled.abort();
    const config = { ...first.config, context: { ...first.config.context, cancelSignal: cancelled.signal } };
    const out = (await first.graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config as never)) as typeof first.out;
    expect(out.stop_reason).toBe("cancelled");
    expect(pairing(out.messages).map((p) => p.envelope.error?.code)).toEqual(["TOOL_NOT_RUN"]);
    expect(out["tool_calls"]).toBe(0);
    const { existsSync } = await import("node:fs");
    expect(existsSync(`${workspace.dir}/never.txt`)).toBe(false);
  });

  it("starts each run on a thread with fresh counters and keeps the history", async () => {
    const threadId = `t-${Date.now()}`;
    const first = await run([{ tool_calls: [{ name: "add", args: { a: 1, b: 1 } }] }, { content: "two" }], { threadId });
    expect(first.out["model_rounds"]).toBe(2);
    const second = await run(
      [{ tool_calls: [{ name: "add", args: { a: 1, b: 1 } }] }, { content: "two" }, { content: "again" }],
      { threadId, limits: { maxModelRounds: 1 } },
    );
    expect(second.out.stop_reason).toBe("completed");
    expect(second.out.answer).toBe("again");
    expect(second.out["model_rounds"]).toBe(1);
    expect(shape(second.out.messages)).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
  });

  it("after a stopped run, the next run starts afresh and, asking only the model, writes five checkpoints", async () => {
    const threadId = `t-${Date.now()}-fresh`;
    const script = [{ tool_calls: [{ id: "n1", name: "add", args: { a: 1, b: 1 } }] }, { content: "hello" }];
    const first = await run(script, { threadId, limits: { maxModelRounds: 1, maxToolCalls: 0 } });
    expect([first.out.stop_reason, (first.out.error as { code?: string } | null)?.code]).toEqual(["max_tool_calls", "MAX_TOOL_CALLS"]);
    const countCheckpoints = async (): Promise<number> => {
      let count = 0;
      for await (const _ of first.graph.getStateHistory(first.config as never)) count += 1;
      return count;
    };
    const before = await countCheckpoints();
    const firstDeadline = (await first.graph.getState(first.config as never)).values["deadline_at"] as number;
    const second = await run(script, { threadId });
    // nothing of the first run's end carried over: its stop reason, error or deadline
    expect([second.out.stop_reason, second.out.answer, second.out.error, second.out["model_rounds"], second.out["tool_calls"]]).toEqual(["completed", "hello", null, 1, 0]);
    expect(second.out["deadline_at"] as number).toBeGreaterThanOrEqual(firstDeadline);
    expect((second.out["decision"] as { next: string }).next).toBe("finish");
    // input, start, guard, model, guard (which ends the run): a plain createAgent writes four
    expect((await countCheckpoints()) - before).toBe(5);
    expect(shape(second.out.messages)).toEqual(["human", "ai", "tool", "human", "ai"]);
  });
});

describe("library entry points", () => {
  it("builds the agent from a plain tool list through the package exports", async () => {
    const lib = await import("../../src/index.js");
    const { HumanMessage } = await import("@langchain/core/messages");
    const model = new lib.ScriptedChatModel([{ tool_calls: [{ id: "t", name: "add", args: { a: 20, b: 22 } }] }, { content: "42" }]);
    const graph = lib.buildAgentGraph({
      model,
      tools: lib.builtinTools({ workspace: workspace.dir }),
      workspace: workspace.dir,
      checkpointer: new lib.PostgresCheckpointSaver(db),
      limits: { maxToolCalls: 4 },
    });
    const out = await graph.invoke({ messages: [new HumanMessage("add")] }, { configurable: { thread_id: `lib-${Date.now()}` } });
    expect(out.stop_reason).toBe("completed");
    expect(pairing(out.messages)[0]?.envelope.data).toEqual({ sum: 42 });
    expect(model.calls[0]?.tools.sort()).toEqual(["add", "append_file", "get_current_time", "list_files", "read_demo_text", "read_file", "run_command", "write_file"]);
  });
});

describe("the guard node", () => {
  it("is drawn as the hub: the start and every step lead to it and it leads to model, tools, approval and the end", async () => {
    const { graph } = await run([{ content: "hi" }]);
    const mermaid = graph.getGraph().drawMermaid();
    const edges = mermaid
      .split("\n")
      .map((line) => line.trim().replace(/;$/, ""))
      .filter((line) => / --> | -\.-> /.test(line));
    for (const node of ["guard", "model", "tools", "approval"]) expect(mermaid).toMatch(new RegExp(`\\b${node}\\(`));
    // the run's input goes straight to the guard; the guard itself ends the run
    for (const gone of ["begin", "finish", "pause"]) expect(mermaid).not.toContain(gone);
    for (const from of ["__start__", "model", "tools", "approval"]) expect(edges).toContain(`${from} --> guard`);
    for (const to of ["model", "tools", "approval", "__end__"]) expect(edges).toContain(`guard -.-> ${to}`);
    // no step but the guard routes anywhere else, and only the guard ends the run
    expect(edges.filter((edge) => edge.includes("-.->") && !edge.startsWith("guard"))).toEqual([]);
    expect(edges.filter((edge) => edge.includes("__end__"))).toEqual(["guard -.-> __end__"]);
  });

  it("records each decision, and why, in the checkpoint history: one guard step per step, also after parallel calls", async () => {
    const { graph, config, out } = await run(
      [{ tool_calls: [{ id: "a", name: "add", args: { a: 1, b: 2 } }, { id: "b", name: "add", args: { a: 3, b: 4 } }, { id: "x", name: "no_such_tool", args: {} }] }, { content: "3 and 7" }],
      { limits: { maxToolCalls: 8 } },
    );
    expect(out.stop_reason).toBe("completed");
    const history = [];
    for await (const snapshot of graph.getStateHistory(config as never)) history.unshift(snapshot);
    // the steps in order, from each checkpoint's next tasks: one guard step after the two parallel calls
    const steps = history.map((snapshot) => snapshot.next.join("+"));
    expect(steps).toEqual(["__start__", "guard", "model", "guard", "tools+tools", "guard", "model", "guard", ""]);
    const decisions = history
      .filter((_, i) => i > 0 && steps[i - 1] === "guard")
      .map((snapshot) => (snapshot.values as { decision: { next: string; why: string; calls?: { id: string }[]; stop_reason?: string } }).decision);
    expect(decisions.map((d) => d.next)).toEqual(["model", "tools", "model", "finish"]);
    expect(decisions[1]?.calls?.map((c) => c.id)).toEqual(["a", "b"]);
    expect(decisions[1]?.why).toMatch(/2 call\(s\) sent to tools; 1 refused/);
    expect(decisions[3]).toMatchObject({ next: "finish", stop_reason: "completed", why: expect.stringContaining("answered") });
    expect(out["decision"]).toEqual(decisions[3]);
  });

  it("records a stop decision with its reason and the run ends with it", async () => {
    const { out, graph, config } = await run([{ tool_calls: [{ name: "add", args: { a: 1, b: 1 } }] }, { content: "never" }], { limits: { maxModelRounds: 1 } });
    expect(out.stop_reason).toBe("max_model_rounds");
    const state = await graph.getState(config as never);
    expect((state.values as { decision: unknown }).decision).toMatchObject({ next: "finish", stop_reason: "max_model_rounds", why: expect.stringContaining("1 model rounds") });
  });
});
