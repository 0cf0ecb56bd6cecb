import { describe, expect, it } from "vitest";

// a browser module without type declarations: imported by path so the typecheck does not need them
const modulePath = "../../src/server/web/assets/run-label.js";
const { runLabel } = (await import(modulePath)) as { runLabel: (run: Record<string, unknown>, startedTask?: string, order?: string[]) => string };

const RUN_ID = "0f8e7d6c-5b4a-4321-8765-0123456789ab";

describe("the web page's run label", () => {
  it("reads the task from every stored input shape, not only {role, content}", () => {
    const shapes: unknown[] = [
      "write a haiku",
      { role: "user", content: "write a haiku" },
      // how runs started with a LangGraph client or the page are stored
      { type: "human", data: { content: "write a haiku" } },
      { lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "write a haiku" } },
      { role: "user", content: [{ type: "text", text: "write a " }, { type: "text", text: "haiku" }] },
    ];
    for (const first of shapes) expect(runLabel({ run_id: RUN_ID, input: { messages: [first] } }), JSON.stringify(first)).toBe("write a haiku");
  });

  it("falls back to the task this tab started, then to a short id; long tasks are cut to one line", () => {
    expect(runLabel({ run_id: RUN_ID, input: { messages: [{ type: "human", data: {} }] } }, "from this tab")).toBe("from this tab");
    expect(runLabel({ run_id: RUN_ID })).toBe("run 0f8e7d6c");
    expect(runLabel({ run_id: RUN_ID, graph_id: "review", input: { topic: "tests" } })).toBe("tests");
    const long = runLabel({ run_id: RUN_ID, input: { messages: [`line one\n${"x".repeat(200)}`] } });
    expect(long).toHaveLength(80);
    expect(long.startsWith("line one x")).toBe(true);
    expect(long.endsWith("…")).toBe(true);
  });
});

const statusPath = "../../src/server/web/assets/run-status.js";
const { runListStatus } = (await import(statusPath)) as { runListStatus: (run: Record<string, unknown>, thread?: { threadWaiting?: boolean }) => { key: string; text: string } };
const labelExtras = (await import(modulePath)) as { inputSummary: (input: unknown, order?: string[]) => string | null; runGraph: (run: Record<string, unknown>) => string | null };

describe("the web page's run list", () => {
  it("tells waiting, running, pending, finished, answered, failed and cancelled runs apart", () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ status: "success", stop_reason: "interrupt", waiting: true }, "waiting", "waiting"],
      [{ status: "success", stop_reason: "interrupt", waiting: false }, "answered", "answered"],
      [{ status: "running", stop_reason: null, waiting: false }, "running", "running"],
      [{ status: "pending", stop_reason: null, waiting: false }, "pending", "pending"],
      [{ status: "success", stop_reason: "completed", waiting: false }, "finished", "finished"],
      [{ status: "error", stop_reason: "model_failed", waiting: false, error: { code: "MODEL_FAILED" } }, "failed", "failed"],
      [{ status: "timeout", stop_reason: "deadline", waiting: false }, "failed", "timed out"],
      [{ status: "interrupted", stop_reason: "cancelled", waiting: false }, "cancelled", "cancelled"],
    ];
    for (const [run, key, text] of cases) expect(runListStatus(run), JSON.stringify(run)).toMatchObject({ key, text });
    // a LangGraph server's record (no `waiting`): the thread says
    expect(runListStatus({ status: "success" }, { threadWaiting: true }).key).toBe("waiting");
    expect(runListStatus({ status: "success" }, { threadWaiting: false }).key).toBe("finished");
  });

  it("labels a run by its graph and the start of its input, most telling part first", () => {
    expect(labelExtras.runGraph({ graph_id: "review", assistant_id: "a-uuid" })).toBe("review");
    expect(labelExtras.runGraph({ assistant_id: "research" })).toBe("research");
    expect(labelExtras.inputSummary({ topic: "durable runs", depth: 2, tags: ["a", "b"], draft: false, extra: { a: 1 } })).toBe("durable runs · depth 2 · tags a, b · draft false · extra {…}");
    expect(labelExtras.inputSummary({ messages: [{ role: "user", content: "hi" }] })).toBeNull();
    expect(labelExtras.inputSummary({})).toBeNull();
    const [one, two] = [runLabel({ run_id: RUN_ID, graph_id: "review", input: { topic: "first topic" } }), runLabel({ run_id: RUN_ID, graph_id: "review", input: { topic: "second topic" } })];
    expect([one, two]).toEqual(["first topic", "second topic"]);
  });
});

describe("the run list's label order", () => {
  it("follows the graph's schema order, not the stored key order", () => {
    const stored = { mode: "deep", tags: ["a"], depth: 3, topic: "durable runs" };
    expect(labelExtras.inputSummary(stored, ["topic", "depth", "tags", "mode"])).toBe("durable runs · depth 3 · tags a · deep");
    expect(runLabel({ run_id: RUN_ID, input: stored }, undefined, ["topic", "depth"])).toBe("durable runs · depth 3 · deep · tags a");
  });
});
