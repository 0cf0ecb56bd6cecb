import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { EventSink } from "./events.js";
import type { AgentLimits } from "./limits.js";

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
}

/** Reads the run context and thread id from a node's config. */
export function readRunContext(config: LangGraphRunnableConfig | undefined): AgentRunContext & { threadId: string | undefined } {
  const context = ((config as { context?: AgentRunContext } | undefined)?.context ?? {}) as AgentRunContext;
  const threadId = config?.configurable?.["thread_id"];
  return { ...context, threadId: threadId === undefined ? undefined : String(threadId) };
}
