import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LeaseLostError } from "../../src/errors.js";
import { metricsAccess, presentedScrapeKey } from "../../src/operations/metrics/metrics-access.js";
import { metricsObserver, toolOutcome } from "../../src/operations/metrics/metrics-observer.js";
import { BoundedLabels, createRunMetrics } from "../../src/operations/metrics/run-metrics.js";
import { OPERATIONS_DEFAULTS } from "../../src/operations/constants.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";

const run = (fields: Partial<RunRecord> = {}): RunRecord => ({ run_id: "r", thread_id: "t", graph_id: "agent", attempt: 1, created_at: new Date(Date.now() - 2_000).toISOString(), status: "running", stop_reason: null, ...fields }) as RunRecord;

async function value(metrics: ReturnType<typeof createRunMetrics>, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => String((v.labels as Record<string, unknown>)[k]) === l));
  return found?.value ?? 0;
}

describe("metrics observer", () => {
  it("counts a run's events: start, tokens by model, tool outcomes, node durations, its end", async () => {
    const metrics = createRunMetrics(new Registry());
    const attempt = metricsObserver(metrics, "gpt-x").attempt(run());
    attempt?.event({ type: "run.started", attempt: 1, worker: "w" });
    attempt?.event({ type: "model.started", round: 1 });
    attempt?.event({ type: "model.finished", round: 1, duration_ms: 250, tool_calls: 2, usage: { input_tokens: 11, output_tokens: 4 }, finish_reason: "tool_calls" });
    attempt?.event({ type: "tool.call.finished", tool_call_id: "a", tool: "add", ok: true, error_code: null, duration_ms: 3, truncated: false });
    attempt?.event({ type: "tool.call.finished", tool_call_id: "b", tool: "write_file", ok: false, error_code: "TOOL_OUTCOME_UNKNOWN", duration_ms: 0, truncated: false });
    attempt?.event({ type: "node.finished", node: "tools", task_id: "x", ns: [], duration_ms: 5, error: null, interrupted: false });
    attempt?.end({ run: run({ status: "success", stop_reason: "completed" }), error: undefined });
    expect(await value(metrics, "devmind_runs_started_total", { graph: "agent" })).toBe(1);
    expect(await value(metrics, "devmind_model_tokens_total", { model: "gpt-x", direction: "input" })).toBe(11);
    expect(await value(metrics, "devmind_model_tokens_total", { model: "gpt-x", direction: "output" })).toBe(4);
    expect(await value(metrics, "devmind_tool_calls_total", { tool: "add", outcome: "success" })).toBe(1);
    expect(await value(metrics, "devmind_tool_calls_total", { tool: "write_file", outcome: "unknown" })).toBe(1);
    expect(await value(metrics, "devmind_runs_ended_total", { graph: "agent", status: "success", stop_reason: "completed" })).toBe(1);
  });

  it("a run that resumes a thread after a decision starts like any run; a recovery is a resume, not a start", async () => {
    const metrics = createRunMetrics(new Registry());
    const observer = metricsObserver(metrics, "m");
    observer.attempt(run())?.event({ type: "run.resumed", reason: "approval", attempt: 1, worker: "w" });
    observer.attempt(run({ attempt: 2 }))?.event({ type: "run.resumed", reason: "recovery", attempt: 2, worker: "w" });
    expect(await value(metrics, "devmind_runs_started_total", { graph: "agent" })).toBe(1);
    expect(await value(metrics, "devmind_run_resumes_total", { graph: "agent", reason: "approval" })).toBe(1);
    expect(await value(metrics, "devmind_run_resumes_total", { graph: "agent", reason: "recovery" })).toBe(1);
  });

  it("a user graph's ToolNode calls count from LangGraph's tools stream, a call the graph reports itself only once", async () => {
    const metrics = createRunMetrics(new Registry());
    const attempt = metricsObserver(metrics, "m").attempt(run({ graph_id: "mine" }));
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_end", toolCallId: "c1", name: "search" }, duration_ms: 4 });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_error", toolCallId: "c3", name: "search" }, duration_ms: 4 });
    attempt?.event({ type: "tool.call.started", tool_call_id: "c2", tool: "add", args: {} });
    attempt?.event({ type: "tools", ns: [], data: { event: "on_tool_end", toolCallId: "c2", name: "add" }, duration_ms: 1 });
    attempt?.event({ type: "tool.call.finished", tool_call_id: "c2", tool: "add", ok: true, error_code: null, duration_ms: 1, truncated: false });
    expect(await value(metrics, "devmind_tool_calls_total", { graph: "mine", tool: "search", outcome: "success" })).toBe(1);
    expect(await value(metrics, "devmind_tool_calls_total", { graph: "mine", tool: "search", outcome: "error" })).toBe(1);
    expect(await value(metrics, "devmind_tool_calls_total", { graph: "mine", tool: "add", outcome: "success" })).toBe(1);
  });

  it("a user graph's own calls count by the model's own name; a tool call the graph reported itself only once", async () => {
    const metrics = createRunMetrics(new Registry());
    const attempt = metricsObserver(metrics, "configured").attempt(run({ graph_id: "mine" }));
    attempt?.call?.({ kind: "model", name: "gpt-own", ok: true, durationMs: 120, usage: { input_tokens: 7, output_tokens: 2 } });
    attempt?.call?.({ kind: "model", name: "gpt-own", ok: true, durationMs: null, usage: { input_tokens: 1, output_tokens: 1 } });
    attempt?.call?.({ kind: "model", name: "gpt-own", ok: false, durationMs: 30, usage: { input_tokens: 0, output_tokens: 0 } });
    attempt?.event({ type: "tool.call.started", tool_call_id: "c2", tool: "add", args: {} });
    attempt?.call?.({ kind: "tool", name: "add", ok: true, durationMs: 1, toolCallId: "c2" });
    attempt?.call?.({ kind: "tool", name: "add", ok: false, durationMs: 2 });
    expect(await value(metrics, "devmind_model_tokens_total", { graph: "mine", model: "gpt-own", direction: "input" })).toBe(8);
    expect(await value(metrics, "devmind_model_tokens_total", { graph: "mine", model: "gpt-own", direction: "output" })).toBe(3);
    expect(await value(metrics, "devmind_model_tokens_total", { model: "configured" })).toBe(0);
    const durations = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === "devmind_model_call_duration_seconds")?.values.filter((v) => (v as { metricName?: string }).metricName === "devmind_model_call_duration_seconds_count") ?? [];
    expect(durations.map((v) => [v.labels["outcome"], v.value]).sort()).toEqual([["error", 1], ["success", 1]]);
    expect(await value(metrics, "devmind_tool_calls_total", { graph: "mine", tool: "add", outcome: "success" })).toBe(0);
    expect(await value(metrics, "devmind_tool_calls_total", { graph: "mine", tool: "add", outcome: "error" })).toBe(1);
  });

  it("an attempt that lost its lease counts a takeover, not an end; the reaper's takeovers count by reason", async () => {
    const metrics = createRunMetrics(new Registry());
    const observer = metricsObserver(metrics, "m");
    observer.attempt(run())?.end({ run: null, error: new LeaseLostError("r", 1) });
    observer.attempt(run())?.end({ run: run({ attempt: 2, status: "running" }), error: undefined });
    observer.leases("expired", 3);
    expect(await value(metrics, "devmind_lease_takeovers_total", { reason: "lost" })).toBe(2);
    expect(await value(metrics, "devmind_lease_takeovers_total", { reason: "expired" })).toBe(3);
    expect((await metrics.registry.getMetricsAsJSON()).find((m) => m.name === "devmind_runs_ended_total")?.values).toEqual([]);
  });

  it("tool outcomes and bounded label values", () => {
    expect([toolOutcome(true, null), toolOutcome(false, "TOOL_FAILED"), toolOutcome(false, "TOOL_OUTCOME_UNKNOWN")]).toEqual(["success", "error", "unknown"]);
    const labels = new BoundedLabels();
    for (let i = 0; i < OPERATIONS_DEFAULTS.maxLabelValues; i += 1) expect(labels.value("node", `n${i}`)).toBe(`n${i}`);
    expect(labels.value("node", "one-too-many")).toBe("other");
    expect(labels.value("node", "n0")).toBe("n0");
    expect(labels.value("tool", "x".repeat(500))).toHaveLength(OPERATIONS_DEFAULTS.maxLabelChars);
  });

  it("who may scrape: keys, the metrics key, public, a project's auth handler", () => {
    const keys = [{ name: "ops", key: "k1" }];
    expect(metricsAccess({ enabled: true, public: false }, [], undefined)).toBe("ok");
    expect(metricsAccess({ enabled: true, public: false }, keys, undefined)).toBe("missing");
    expect(metricsAccess({ enabled: true, public: false }, keys, "nope")).toBe("invalid");
    expect(metricsAccess({ enabled: true, public: false }, keys, "k1")).toBe("ok");
    expect(metricsAccess({ enabled: true, key: "s1", public: false }, keys, "s1")).toBe("ok");
    expect(metricsAccess({ enabled: true, public: true }, keys, undefined)).toBe("ok");
    expect(metricsAccess({ enabled: true, public: false }, [], undefined, true)).toBe("missing");
    expect(presentedScrapeKey((name) => (name === "authorization" ? "Bearer s1" : undefined))).toBe("s1");
  });
});
