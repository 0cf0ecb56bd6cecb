import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { spanObserver } from "../../src/operations/tracing/span-observer.js";
import { parseTraceParent } from "../../src/operations/tracing/traceparent.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const run = (fields: Partial<RunRecord> = {}): RunRecord =>
  ({ run_id: "r1", thread_id: "t1", graph_id: "g", assistant_id: "a", attempt: 1, created_at: new Date().toISOString(), status: "running", stop_reason: null, usage: { input_tokens: 0, output_tokens: 0 }, error: null, ...fields }) as RunRecord;

function setup() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, observer: spanObserver(provider.getTracer("test"), "m") };
}

describe("span observer", () => {
  it("a user graph's ToolNode call (LangGraph's tools stream) is one span under its node; a call the graph reports itself is not doubled", () => {
    const { exporter, observer } = setup();
    const attempt = observer.attempt(run({ trace_parent: `00-${TRACE}-${PARENT}-01` }));
    attempt?.event({ type: "node.started", node: "tools", task_id: "k1", ns: [] });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_start", toolCallId: "c1", name: "search" } });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_end", toolCallId: "c1", name: "search" } });
    attempt?.event({ type: "tool.call.started", tool_call_id: "c2", tool: "add", args: {} });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_start", toolCallId: "c2", name: "add" } });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_end", toolCallId: "c2", name: "add" } });
    attempt?.event({ type: "tool.call.finished", tool_call_id: "c2", tool: "add", ok: true, error_code: null, duration_ms: 1, truncated: false });
    attempt?.event({ type: "node.finished", node: "tools", task_id: "k1", ns: [], duration_ms: 3, error: null, interrupted: false });
    attempt?.end({ run: run({ status: "success", stop_reason: "completed" }), error: undefined });
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.filter((span) => span.name === name);
    expect(spans.map((span) => span.name).sort()).toEqual(["execute_tool add", "execute_tool search", "invoke_agent g", "node tools"]);
    const [root] = byName("invoke_agent g");
    const [node] = byName("node tools");
    expect(root?.spanContext().traceId).toBe(TRACE);
    expect(root?.parentSpanContext?.spanId).toBe(PARENT);
    expect(node?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    for (const tool of [...byName("execute_tool search"), ...byName("execute_tool add")]) expect(tool.parentSpanContext?.spanId).toBe(node?.spanContext().spanId);
    expect(byName("execute_tool add")[0]?.attributes["gen_ai.tool.call.id"]).toBe("c2");
  });

  it("a user graph's own chat model and tool calls (the call tally) are spans under the node that made them, named by the model's own name", () => {
    const { exporter, observer } = setup();
    const attempt = observer.attempt(run());
    attempt?.event({ type: "node.started", node: "ask", task_id: "k1", ns: [] });
    attempt?.call?.({ kind: "model", name: "gpt-own", ok: true, durationMs: 40, usage: { input_tokens: 7, output_tokens: 2 } });
    attempt?.call?.({ kind: "model", name: "gpt-own", ok: false, durationMs: 5, usage: { input_tokens: 0, output_tokens: 0 } });
    attempt?.call?.({ kind: "tool", name: "add", ok: true, durationMs: 1, toolCallId: "c9" });
    attempt?.event({ type: "node.finished", node: "ask", task_id: "k1", ns: [], duration_ms: 50, error: null, interrupted: false });
    attempt?.end({ run: run({ status: "success", stop_reason: "completed" }), error: undefined });
    const spans = exporter.getFinishedSpans();
    const node = spans.find((span) => span.name === "node ask");
    const chats = spans.filter((span) => span.name === "chat gpt-own");
    expect(chats.map((span) => [span.attributes["gen_ai.request.model"], span.attributes["gen_ai.usage.input_tokens"], span.attributes["gen_ai.usage.output_tokens"], span.status.code])).toEqual([
      ["gpt-own", 7, 2, 0],
      ["gpt-own", undefined, undefined, 2],
    ]);
    const tool = spans.find((span) => span.name === "execute_tool add");
    expect(tool?.attributes["gen_ai.tool.call.id"]).toBe("c9");
    for (const span of [...chats, tool]) expect(span?.parentSpanContext?.spanId).toBe(node?.spanContext().spanId);
  });

  it("a malformed traceparent is ignored: the run's span starts a trace of its own", () => {
    const { exporter, observer } = setup();
    observer.attempt(run({ trace_parent: "00-xyz-00f067aa0ba902b7-01" }))?.end({ run: null, error: new Error("stopped") });
    const [root] = exporter.getFinishedSpans();
    expect(root?.parentSpanContext).toBeUndefined();
    expect(root?.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect([parseTraceParent("garbage"), parseTraceParent(`00-${"0".repeat(32)}-${PARENT}-01`), parseTraceParent(`ff-${TRACE}-${PARENT}-01`)]).toEqual([null, null, null]);
    expect(parseTraceParent(` 00-${TRACE.toUpperCase()}-${PARENT}-01 `)).toEqual({ traceId: TRACE, spanId: PARENT, sampled: true });
  });
});
