import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { EventSink } from "./events.js";
import type { ProposedToolCall, ToolResult } from "../tools/types.js";
import type { AgentLimits } from "./limits.js";

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
  /**
   * The run records LangChain's stream events (the `events` stream mode): the model node hands its
   * callbacks to the model call, so the model's start, tokens and end are among them. Off by
   * default: a model call then starts no callback run of its own.
   */
  streamEvents?: boolean;
}

/** Reads the run context and thread id from a node's config. */
export function readRunContext(config: LangGraphRunnableConfig | undefined): AgentRunContext & { threadId: string | undefined } {
  const context = ((config as { context?: AgentRunContext } | undefined)?.context ?? {}) as AgentRunContext;
  const threadId = config?.configurable?.["thread_id"];
  return { ...context, threadId: threadId === undefined ? undefined : String(threadId) };
}
