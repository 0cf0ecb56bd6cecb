import { describe, expect, it } from "vitest";

// a browser module without type declarations: imported by path so the typecheck does not need them
const modulePath = "../../src/server/web/assets/run-label.js";
const { runLabel } = (await import(modulePath)) as { runLabel: (run: Record<string, unknown>, startedTask?: string) => string };

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
    expect(runLabel({ run_id: RUN_ID, graph_id: "review", input: { topic: "tests" } })).toBe('review: {"topic":"tests"}');
    const long = runLabel({ run_id: RUN_ID, input: { messages: [`line one\n${"x".repeat(200)}`] } });
    expect(long).toHaveLength(80);
    expect(long.startsWith("line one x")).toBe(true);
    expect(long.endsWith("…")).toBe(true);
  });
});
