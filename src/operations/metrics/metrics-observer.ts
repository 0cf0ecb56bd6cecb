import type { RunEventData } from "../../runtime/events/run-events.js";
import type { AttemptObserver, ObservedCall, RunObserver } from "../../runtime/runtime.js";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import { LeaseLostError } from "../../errors.js";
import { OPERATIONS_DEFAULTS } from "../constants.js";
import { BoundedLabels, type RunMetrics } from "./run-metrics.js";

/** The outcome label of a finished tool call: success, unknown (TOOL_OUTCOME_UNKNOWN) or error. */
export function toolOutcome(ok: boolean, errorCode: string | null): "success" | "error" | "unknown" {
  if (ok) return "success";
  return errorCode === "TOOL_OUTCOME_UNKNOWN" ? "unknown" : "error";
}

/**
 * A run observer that counts what attempts executed here do into `metrics`, from their events
 * (run.started / run.resumed, node.finished, model.*, tool.call.finished, a `tools` end of a
 * plain ToolNode), the calls a user graph's own chat models and tools made (`call`, labelled
 * with the model's own name) and their end (the stored record: status, stop reason,
 * created_at). `model`: the model label of the agent's model calls (the configured model's name).
 */
export function metricsObserver(metrics: RunMetrics, model: string): RunObserver {
  const labels = new BoundedLabels();
  return {
    leases: (reason, count) => metrics.leaseTakeovers.inc({ reason }, count),
    attempt(run: RunRecord): AttemptObserver {
      const graph = labels.value("graph", run.graph_id);
      const modelLabel = labels.value("model", model);
      const modelStarted = new Map<number, number>();
      // calls the graph reports itself (tool.call.*): LangGraph's tools stream of the same call is not counted again
      const reported = new Set<string>();
      let counted = false;
      /** A tool call that is not one the graph reported itself (tool.call.*), counted once. */
      const toolEnded = (name: string | null, ok: boolean, durationMs: number | undefined | null, toolCallId: unknown): void => {
        if (typeof toolCallId === "string" && reported.has(toolCallId)) return;
        const outcome = ok ? "success" : "error";
        const tool = labels.value("tool", name);
        metrics.toolCalls.inc({ graph, tool, outcome });
        if (durationMs !== undefined && durationMs !== null) metrics.toolDuration.observe({ graph, tool, outcome }, durationMs / 1000);
      };
      const started = (): void => {
        if (counted) return;
        counted = true;
        metrics.runsStarted.inc({ graph });
        if (run.attempt <= 1) metrics.queueWait.observe({ graph }, secondsSince(run.created_at));
      };
      return {
        event(event: RunEventData) {
          switch (event.type) {
            case "run.started":
              started();
              return;
            case "run.resumed":
              metrics.runResumes.inc({ graph, reason: event.reason });
              // a run created by a decision or a resume value starts by resuming its thread
              if (event.reason === "approval" || event.reason === "resume") started();
              return;
            case "node.finished":
              if (event.duration_ms !== null) metrics.nodeDuration.observe({ graph, node: labels.value("node", event.node), outcome: event.error === null ? (event.interrupted ? "interrupt" : "success") : "error" }, event.duration_ms / 1000);
              return;
            case "model.started":
              modelStarted.set(event.round, Date.now());
              return;
            case "model.finished":
              modelStarted.delete(event.round);
              metrics.modelDuration.observe({ graph, model: modelLabel, outcome: "success" }, event.duration_ms / 1000);
              metrics.modelTokens.inc({ graph, model: modelLabel, direction: "input" }, event.usage.input_tokens);
              metrics.modelTokens.inc({ graph, model: modelLabel, direction: "output" }, event.usage.output_tokens);
              return;
            case "model.failed": {
              const at = modelStarted.get(event.round);
              if (at !== undefined && !event.will_retry) modelStarted.delete(event.round);
              if (at !== undefined) metrics.modelDuration.observe({ graph, model: modelLabel, outcome: "error" }, (Date.now() - at) / 1000);
              return;
            }
            case "tool.call.started":
              if (reported.size < OPERATIONS_DEFAULTS.maxOpenSpansPerAttempt) reported.add(event.tool_call_id);
              return;
            case "tool.call.finished": {
              const outcome = toolOutcome(event.ok, event.error_code);
              const tool = labels.value("tool", event.tool);
              metrics.toolCalls.inc({ graph, tool, outcome });
              if (event.duration_ms > 0) metrics.toolDuration.observe({ graph, tool, outcome }, event.duration_ms / 1000);
              return;
            }
            case "tools": {
              // a plain ToolNode / createAgent tool node of a user's graph: LangGraph's tools stream
              const data = event.data as { event?: unknown; name?: unknown; toolCallId?: unknown } | null;
              const kind = data?.event;
              if (kind !== "on_tool_end" && kind !== "on_tool_error") return;
              toolEnded(typeof data?.name === "string" ? data.name : null, kind === "on_tool_end", event.duration_ms, data?.toolCallId);
              return;
            }
            default:
              return;
          }
        },
        call(call: ObservedCall) {
          if (call.kind === "tool") return toolEnded(call.name, call.ok, call.durationMs, call.toolCallId);
          // a user graph's own chat model, by its own name (not the configured model's)
          const model = labels.value("model", call.name);
          if (call.durationMs !== null) metrics.modelDuration.observe({ graph, model, outcome: call.ok ? "success" : "error" }, call.durationMs / 1000);
          if (!call.ok) return;
          metrics.modelTokens.inc({ graph, model, direction: "input" }, call.usage.input_tokens);
          metrics.modelTokens.inc({ graph, model, direction: "output" }, call.usage.output_tokens);
        },
        end({ run: after, error }) {
          if (after === null) {
            if (error instanceof LeaseLostError) metrics.leaseTakeovers.inc({ reason: "lost" });
            return;
          }
          // another attempt holds the run now (the reaper re-queued it, another worker claimed it)
          if (after.attempt !== run.attempt) return void metrics.leaseTakeovers.inc({ reason: "lost" });
          if (after.status === "pending" || after.status === "running") return;
          metrics.runsEnded.inc({ graph, status: after.status, stop_reason: after.stop_reason ?? "none" });
          metrics.runDuration.observe({ graph, status: after.status }, secondsSince(after.created_at));
        },
      };
    },
  };
}

function secondsSince(iso: string): number {
  const at = Date.parse(iso);
  return Number.isFinite(at) ? Math.max(0, (Date.now() - at) / 1000) : 0;
}
