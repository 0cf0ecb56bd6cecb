import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import type { RunEventData } from "../../runtime/events/run-events.js";
import type { AttemptObserver, ObservedCall, RunObserver } from "../../runtime/runtime.js";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import { OPERATIONS_DEFAULTS } from "../constants.js";
import { parseTraceParent } from "./traceparent.js";

/** The context a run's spans start from: its stored traceparent as a remote parent, or none (a new trace). A malformed one is ignored. */
export function runParentContext(run: RunRecord): Context {
  const parent = parseTraceParent(run.trace_parent);
  if (parent === null) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });
}

/**
 * Spans of every attempt executed here, from its events (OpenTelemetry GenAI semantic
 * conventions): `invoke_agent GRAPH` per run attempt, child of the run's stored traceparent (the
 * request that created it, or the run it resumes: one trace across processes, restarts and a
 * human's resume a day later); `node NAME` per graph task under it; `chat MODEL` per model call
 * and `execute_tool TOOL` per tool call under the node in flight (a user graph's own chat models
 * and tools too, from `call`, named by the model's own name). `model`: the agent's model name.
 */
export function spanObserver(tracer: Tracer, model: string): RunObserver {
  return {
    leases: () => undefined,
    attempt(run: RunRecord): AttemptObserver {
      const runSpan = tracer.startSpan(
        `invoke_agent ${run.graph_id}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": run.graph_id,
            "gen_ai.agent.id": run.assistant_id,
            "gen_ai.conversation.id": run.thread_id,
            "devmind.run_id": run.run_id,
            "devmind.thread_id": run.thread_id,
            "devmind.attempt": run.attempt,
          },
        },
        runParentContext(run),
      );
      const runContext = trace.setSpan(ROOT_CONTEXT, runSpan);
      // open spans, newest last (a Map keeps insertion order), bounded
      const nodes = new Map<string, Span>();
      const nodeNames = new Map<string, string>();
      // calls the graph reports itself (tool.call.*): LangGraph's tools stream of the same call makes no second span
      const reported = new Set<string>();
      const models = new Map<number, Span>();
      const tools = new Map<string, Span>();
      const bounded = <K>(map: Map<K, Span>, key: K, span: Span): void => {
        if (nodes.size + models.size + tools.size >= OPERATIONS_DEFAULTS.maxOpenSpansPerAttempt) {
          span.end();
          return;
        }
        map.set(key, span);
      };
      /** The node in flight a call belongs to (the newest one of `names`, else the newest), else the run. */
      const parentOf = (names: readonly string[]): Context => {
        let chosen: Span | undefined;
        let any: Span | undefined;
        for (const [taskId, span] of nodes) {
          any = span;
          if (names.includes(nodeNames.get(taskId) ?? "")) chosen = span;
        }
        const parent = chosen ?? any;
        return parent === undefined ? runContext : trace.setSpan(ROOT_CONTEXT, parent);
      };
      const startTool = (id: string, tool: string, startTime?: number): Span => {
        const span = tracer.startSpan(`execute_tool ${tool}`, { kind: SpanKind.INTERNAL, ...(startTime === undefined ? {} : { startTime }), attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.call.id": id } }, parentOf(["tools"]));
        return span;
      };
      return {
        event(event: RunEventData) {
          switch (event.type) {
            case "run.resumed":
              runSpan.setAttribute("devmind.resumed", event.reason);
              return;
            case "node.started":
              nodeNames.set(event.task_id, event.node);
              bounded(nodes, event.task_id, tracer.startSpan(`node ${event.node}`, { attributes: { "langgraph.node": event.node, "langgraph.task_id": event.task_id, ...(event.ns.length > 0 ? { "langgraph.ns": event.ns.join("|") } : {}) } }, runContext));
              return;
            case "node.finished": {
              const span = nodes.get(event.task_id);
              nodeNames.delete(event.task_id);
              if (span === undefined) return;
              nodes.delete(event.task_id);
              if (event.error !== null) span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.slice(0, 500) });
              if (event.interrupted) span.setAttribute("langgraph.interrupted", true);
              span.end();
              return;
            }
            case "model.started":
              models.get(event.round)?.end();
              bounded(models, event.round, tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "devmind.round": event.round } }, parentOf(["model"])));
              return;
            case "model.finished": {
              const span = models.get(event.round) ?? tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, startTime: Date.now() - event.duration_ms, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "devmind.round": event.round } }, parentOf(["model"]));
              models.delete(event.round);
              span.setAttributes({ "gen_ai.usage.input_tokens": event.usage.input_tokens, "gen_ai.usage.output_tokens": event.usage.output_tokens, ...(event.finish_reason === null ? {} : { "gen_ai.response.finish_reasons": [event.finish_reason] }) });
              span.end();
              return;
            }
            case "model.failed": {
              const span = models.get(event.round);
              if (span === undefined) return;
              models.delete(event.round);
              span.setAttributes({ "error.type": event.code, "devmind.will_retry": event.will_retry });
              span.setStatus({ code: SpanStatusCode.ERROR, message: event.message.slice(0, 500) });
              span.end();
              return;
            }
            case "tool.call.started":
              if (reported.size < OPERATIONS_DEFAULTS.maxOpenSpansPerAttempt) reported.add(event.tool_call_id);
              bounded(tools, event.tool_call_id, startTool(event.tool_call_id, event.tool));
              return;
            case "tool.call.finished": {
              const span = tools.get(event.tool_call_id) ?? startTool(event.tool_call_id, event.tool, Date.now() - event.duration_ms);
              tools.delete(event.tool_call_id);
              const attributes: Attributes = { "devmind.tool.ok": event.ok };
              if (!event.ok) {
                attributes["error.type"] = event.error_code ?? "TOOL_FAILED";
                span.setStatus({ code: SpanStatusCode.ERROR, message: event.error_code ?? "TOOL_FAILED" });
              }
              span.setAttributes(attributes);
              span.end();
              return;
            }
            case "tools": {
              // a plain ToolNode of a user's graph: LangGraph's tools stream
              const data = event.data as { event?: unknown; name?: unknown; toolCallId?: unknown } | null;
              const id = typeof data?.toolCallId === "string" ? data.toolCallId : null;
              const name = typeof data?.name === "string" ? data.name : "tool";
              // a call the graph reports itself (tool.call.*) has its span already
              if (id === null || reported.has(id)) return;
              if (data?.event === "on_tool_start") bounded(tools, id, startTool(id, name));
              else if (data?.event === "on_tool_end" || data?.event === "on_tool_error") {
                const span = tools.get(id);
                tools.delete(id);
                if (data.event === "on_tool_error") span?.setStatus({ code: SpanStatusCode.ERROR });
                span?.end();
              }
              return;
            }
            default:
              return;
          }
        },
        call(call: ObservedCall) {
          // told as the call ends, inside the node that made it: a span of its duration under that node
          const startTime = Date.now() - (call.durationMs ?? 0);
          if (call.kind === "tool") {
            if (call.toolCallId !== undefined && reported.has(call.toolCallId)) return;
            const span = startTool(call.toolCallId ?? "", call.name ?? "tool", startTime);
            if (!call.ok) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
            return;
          }
          const name = call.name ?? "unknown";
          const span = tracer.startSpan(`chat ${name}`, { kind: SpanKind.CLIENT, startTime, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": name } }, parentOf([]));
          if (call.ok) span.setAttributes({ "gen_ai.usage.input_tokens": call.usage.input_tokens, "gen_ai.usage.output_tokens": call.usage.output_tokens });
          else span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
        end({ run: after, error }) {
          for (const map of [tools, models, nodes] as Map<unknown, Span>[]) {
            for (const span of map.values()) span.end();
            map.clear();
          }
          nodeNames.clear();
          if (after !== null) {
            runSpan.setAttributes({
              "devmind.status": after.status,
              ...(after.stop_reason === null ? {} : { "devmind.stop_reason": after.stop_reason }),
              "gen_ai.usage.input_tokens": after.usage.input_tokens,
              "gen_ai.usage.output_tokens": after.usage.output_tokens,
            });
            if (after.status === "error" || after.status === "timeout") runSpan.setStatus({ code: SpanStatusCode.ERROR, message: after.error?.message.slice(0, 500) ?? after.status });
          } else if (error !== undefined) {
            runSpan.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 500) : "attempt stopped" });
          }
          runSpan.end();
        },
      };
    },
  };
}
