import { createServer } from "node:http";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OPERATIONS_DEFAULTS } from "../src/operations/constants.js";
import { metricsObserver } from "../src/operations/metrics/metrics-observer.js";
import { createMetricsRegistry } from "../src/operations/metrics/run-metrics.js";
import { spanObserver } from "../src/operations/tracing/span-observer.js";
import type { RunEventData } from "../src/runtime/events/run-events.js";
import type { RunRecord } from "../src/runtime/queue/run-record.js";
import { parseBenchArgs } from "./bench-env.js";

const USAGE = `usage: npm run bench -- observers [--runs N]
  --runs N   synthetic agent runs fed to the observers (default 5000)

CPU the metrics and span observers spend per run, in this process alone (no server, no database):
each run is the events of an agent run with one tool call (run.started, 5 nodes, 2 model calls,
1 tool call, its end), its spans batched and exported over OTLP/HTTP to a sink in this process,
and a /metrics render every 15 runs (a 1 s scrape at 15 runs/s). Compare with the server's CPU
per run (npm run bench -- server): the observers' share of it is their cost.`;

function agentRunEvents(): RunEventData[] {
  const node = (name: string, id: string): RunEventData[] => [
    { type: "node.started", node: name, task_id: id, ns: [] },
    { type: "node.finished", node: name, task_id: id, ns: [], duration_ms: 3, error: null, interrupted: false },
  ];
  const [guardStart, guardEnd] = node("guard", "t1") as [RunEventData, RunEventData];
  const [modelStart, modelEnd] = node("model", "t2") as [RunEventData, RunEventData];
  const [toolsStart, toolsEnd] = node("tools", "t3") as [RunEventData, RunEventData];
  const [model2Start, model2End] = node("model", "t4") as [RunEventData, RunEventData];
  const [guard2Start, guard2End] = node("guard", "t5") as [RunEventData, RunEventData];
  return [
    { type: "run.started", attempt: 1, worker: "bench" },
    guardStart, guardEnd,
    modelStart,
    { type: "model.started", round: 1 },
    { type: "model.finished", round: 1, duration_ms: 120, tool_calls: 1, usage: { input_tokens: 100, output_tokens: 20 }, finish_reason: "tool_calls" },
    modelEnd,
    toolsStart,
    { type: "tool.call.started", tool_call_id: "c1", tool: "add", args: { a: 1, b: 2 } },
    { type: "tool.call.finished", tool_call_id: "c1", tool: "add", ok: true, error_code: null, duration_ms: 2, truncated: false },
    toolsEnd,
    model2Start,
    { type: "model.started", round: 2 },
    { type: "model.finished", round: 2, duration_ms: 80, tool_calls: 0, usage: { input_tokens: 140, output_tokens: 5 }, finish_reason: "stop" },
    model2End,
    guard2Start, guard2End,
  ];
}

export async function runObserversBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, { runs: { type: "string" } }, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const runs = parsed.values["runs"] === undefined ? 5_000 : Number(parsed.values["runs"]);
  if (!(Number.isInteger(runs) && runs > 0)) {
    console.error(USAGE);
    return 2;
  }
  let exported = 0;
  const sink = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      exported += 1;
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()));
  const d = OPERATIONS_DEFAULTS;
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://127.0.0.1:${(sink.address() as { port: number }).port}/v1/traces` }), { maxQueueSize: d.spanQueueSize, maxExportBatchSize: d.spanBatchSize, scheduledDelayMillis: d.spanExportDelayMs })],
  });
  const metrics = createMetricsRegistry();
  const observers = [metricsObserver(metrics, "bench-model"), spanObserver(provider.getTracer("bench"), "bench-model")];
  const events = agentRunEvents();
  const record = (i: number, fields: Partial<RunRecord> = {}): RunRecord =>
    ({ run_id: `r${i}`, thread_id: `t${i}`, graph_id: "agent", assistant_id: "a", attempt: 1, created_at: new Date().toISOString(), status: "running", stop_reason: null, usage: { input_tokens: 240, output_tokens: 25 }, error: null, trace_parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ...fields }) as RunRecord;
  const measure = async (observe: boolean): Promise<number> => {
    const before = process.cpuUsage();
    for (let i = 0; i < runs; i += 1) {
      if (observe) {
        const attempts = observers.map((observer) => observer.attempt(record(i)));
        for (const event of events) for (const attempt of attempts) attempt?.event(event);
        for (const attempt of attempts) attempt?.end({ run: record(i, { status: "success", stop_reason: "completed" }), error: undefined });
        if (i % 15 === 14) await metrics.registry.metrics();
      }
      // let the batch processor's timer and the exports run, as a server's event loop would
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    if (observe) await provider.forceFlush();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / runs;
  };
  await measure(true); // warm-up (JIT)
  const idle = await measure(false);
  const observed = await measure(true);
  await provider.shutdown();
  sink.close();
  sink.closeAllConnections();
  console.log(`observers (metrics + spans over OTLP/HTTP, a scrape every 15 runs): ${(observed - idle).toFixed(1)} µs CPU per run (${runs} runs; ${exported} OTLP requests)`);
  return 0;
}
