import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { EventSink } from "../vocabulary/events.js";
import type { ProposedToolCall, ToolResult } from "../tools/types.js";
import type { AgentLimits } from "../vocabulary/limits.js";
import { runHandleOf, STEP_EVENT_KEY, type RunToolLedger } from "../graphs/run-handle.js";
import { failureResult } from "../tools/registry.js";

/** What the tools node learns from a ledger before running a call. */
export type LedgerEntry = { state: "run" } | { state: "done"; result: ToolResult };

/**
 * A durable record of tool calls (the runtime's tool ledger): `begin` before a call runs — a call
 * that already finished returns its stored result instead of running again; `complete` after.
 */
export interface ToolCallLedger {
  begin(call: ProposedToolCall, meta: { tool: string; idempotent: boolean; needsApproval: boolean }): Promise<LedgerEntry>;
  complete(call: ProposedToolCall, result: ToolResult): Promise<void>;
}

/**
 * Per-invocation context, passed as `graph.invoke(input, { configurable: { thread_id }, context })`.
 * It is never persisted: signals, sinks and overrides live only in the process running the step.
 */
export interface AgentRunContext {
  /** Aborting it cancels the run: in-flight model and tool calls see it, the guard stops with `cancelled`. */
  cancelSignal?: AbortSignal;
  /** Receives model.* and tool.call.* events (in addition to the graph's own sink). */
  events?: EventSink;
  runId?: string;
  /** Per-run overrides of the graph's limits. */
  limits?: Partial<AgentLimits>;
  /** Records every tool call durably so a finished call is never run twice (see the runtime). */
  ledger?: ToolCallLedger;
  /** Aborting it stops the run at the next step boundary (DrainError), resumable from there. */
  drainSignal?: AbortSignal;
}

function isToolResult(value: unknown): value is ToolResult {
  const record = value as { ok?: unknown; tool?: unknown } | null;
  return record !== null && typeof record === "object" && typeof record.ok === "boolean" && typeof record.tool === "string";
}

/** The run's tool ledger (the runtime's, as every graph's tool nodes see it) as the agent's tools node uses it. */
function agentLedger(ledger: RunToolLedger): ToolCallLedger {
  return {
    async begin(call, meta) {
      const entry = await ledger.begin({ toolCallId: call.id, tool: meta.tool, args: call.args, idempotent: meta.idempotent, needsApproval: meta.needsApproval });
      if (entry.state === "run") return { state: "run" };
      return { state: "done", result: isToolResult(entry.result) ? entry.result : failureResult(meta.tool, "TOOL_OUTCOME_UNKNOWN", "the stored result of this call is unreadable") };
    },
    complete: (call, result) => ledger.complete({ toolCallId: call.id }, { ok: result.ok, result }),
  };
}

/**
 * Reads the run context and thread id from a node's config: inside a devmind run, from the run's
 * handle (the same for every graph: its cancel signal, limits, ledger, event sink, drain signal);
 * outside one (a plain `graph.invoke`), from `config.context` as the caller gave it.
 */
export function readRunContext(config: LangGraphRunnableConfig | undefined): AgentRunContext & { threadId: string | undefined } {
  const threadId = config?.configurable?.["thread_id"];
  const thread = threadId === undefined ? undefined : String(threadId);
  const handle = runHandleOf(config);
  if (handle !== undefined) {
    // step events go through LangGraph's own stream, so they are ordered within their node's task
    const writer = config?.writer;
    return {
      cancelSignal: handle.signal,
      // (tokens go straight to the live stream: they are never stored, and waiting on the graph's stream would delay them)
      events: writer === undefined ? handle.emit : (event) => (event.type === "model.delta" ? handle.emit(event) : writer({ [STEP_EVENT_KEY]: event })),
      runId: handle.runId,
      limits: handle.limits,
      ledger: agentLedger(handle.ledger),
      ...(handle.drainSignal === undefined ? {} : { drainSignal: handle.drainSignal }),
      threadId: thread,
    };
  }
  const context = ((config as { context?: AgentRunContext } | undefined)?.context ?? {}) as AgentRunContext;
  return { ...context, threadId: thread };
}
