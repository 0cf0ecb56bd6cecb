import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import type { RunCounters } from "../../graphs/run-hooks.js";
import { RUNTIME_DEFAULTS } from "../../constants.js";
import type { ObservedCall } from "./run-observer.js";

/**
 * Counts what a graph that keeps no counters of its own (no `counters` hook: any user graph)
 * did in a run: each chat model (or LLM) call that finished is a model round, with the tokens it
 * reported; each LangChain tool call that ran, finished or failed, is a tool call. It listens as
 * a LangChain callback handler on the run's config, so calls in any node and subgraph count; a
 * call the tool ledger answers from its record (a node re-run after a crash) never reaches the
 * tool, so it is not counted again. Chain and retriever callbacks are ignored (tool callbacks
 * are the "agent" ones LangChain gates with `ignoreAgent`, so those stay), so the
 * handler costs nothing around the graph's own steps.
 *
 * `observe` (the attempt's observer, for metrics) is told each model call as it ends (its model,
 * duration, tokens, success or error), and each tool call while `observeTools` is on (the
 * executor turns it off when LangGraph's tools stream reports them instead).
 */
export class CallTally extends BaseCallbackHandler {
  name = "devmind_call_tally";
  override ignoreChain = true;
  override ignoreRetriever = true;
  override ignoreCustomEvent = true;
  // counted inline, not in the background: the counts are read as soon as the graph ends
  override awaitHandlers = true;
  /** Finished model calls. */
  modelRounds = 0;
  /** Tool calls that ran (succeeded or failed). */
  toolCalls = 0;
  inputTokens = 0;
  outputTokens = 0;
  /** Tool calls go to `observe` too (off: another source reports them). */
  observeTools = true;
  /** Calls under way that `observe` is told of at their end, by LangChain run id (bounded). */
  private readonly open = new Map<string, { name: string | null; at: number; toolCallId?: string }>();

  constructor(private readonly observe?: (call: ObservedCall) => void) {
    super();
  }

  override handleLLMStart(llm: Serialized, _prompts: string[], runId: string, _parent?: string, extra?: Record<string, unknown>, _tags?: string[], metadata?: Record<string, unknown>): void {
    this.opened(runId, modelName(llm, extra, metadata));
  }

  override handleChatModelStart(llm: Serialized, _messages: unknown[][], runId: string, _parent?: string, extra?: Record<string, unknown>, _tags?: string[], metadata?: Record<string, unknown>): void {
    this.opened(runId, modelName(llm, extra, metadata));
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.modelRounds += 1;
    const usage = usageOf(output);
    this.inputTokens += usage.input;
    this.outputTokens += usage.output;
    const call = this.closed(runId);
    this.observe?.({ kind: "model", name: call?.name ?? null, ok: true, durationMs: call === undefined ? null : Date.now() - call.at, usage: { input_tokens: usage.input, output_tokens: usage.output } });
  }

  override handleLLMError(_error: unknown, runId: string): void {
    // a failed call is no round: the graph decides whether to retry it, and a retry that finishes counts
    const call = this.closed(runId);
    this.observe?.({ kind: "model", name: call?.name ?? null, ok: false, durationMs: call === undefined ? null : Date.now() - call.at, usage: { input_tokens: 0, output_tokens: 0 } });
  }

  override handleToolStart(tool: Serialized, _input: string, runId: string, _parent?: string, _tags?: string[], _metadata?: Record<string, unknown>, runName?: string, toolCallId?: string): void {
    if (this.observe === undefined || !this.observeTools) return;
    this.opened(runId, runName ?? serializedName(tool), toolCallId);
  }

  override handleToolEnd(_output: unknown, runId: string): void {
    this.toolCalls += 1;
    this.toolEnded(runId, true);
  }

  override handleToolError(_error: unknown, runId: string): void {
    this.toolCalls += 1;
    this.toolEnded(runId, false);
  }

  /** `base` (the counters the run started with) plus what was counted here. */
  added(base: RunCounters): RunCounters {
    return {
      modelRounds: base.modelRounds + this.modelRounds,
      toolCalls: base.toolCalls + this.toolCalls,
      usage: { input_tokens: base.usage.input_tokens + this.inputTokens, output_tokens: base.usage.output_tokens + this.outputTokens },
    };
  }

  private toolEnded(runId: string, ok: boolean): void {
    if (this.observe === undefined || !this.observeTools) return;
    const call = this.closed(runId);
    this.observe({ kind: "tool", name: call?.name ?? null, ok, durationMs: call === undefined ? null : Date.now() - call.at, ...(call?.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }) });
  }

  private opened(runId: string, name: string | null, toolCallId?: string): void {
    if (this.observe === undefined || this.open.size >= RUNTIME_DEFAULTS.callTallyMaxOpenCalls) return;
    this.open.set(runId, { name, at: Date.now(), ...(toolCallId === undefined ? {} : { toolCallId }) });
  }

  private closed(runId: string): { name: string | null; at: number; toolCallId?: string } | undefined {
    const call = this.open.get(runId);
    this.open.delete(runId);
    return call;
  }
}

/**
 * The model a call names: LangChain's `ls_model_name` (what a provider's model reports, e.g. the
 * OpenAI model), else the invocation's `model` / `model_name`, else the model's class (a fake or
 * custom model without a name).
 */
function modelName(llm: Serialized, extra?: Record<string, unknown>, metadata?: Record<string, unknown>): string | null {
  const params = (extra?.["invocation_params"] ?? {}) as Record<string, unknown>;
  for (const value of [metadata?.["ls_model_name"], params["model"], params["model_name"]]) if (typeof value === "string" && value !== "") return value;
  return serializedName(llm);
}

/** The class name a serialized LangChain object carries (the last part of its id). */
function serializedName(serialized: Serialized): string | null {
  const last = (serialized as { id?: unknown }).id;
  return Array.isArray(last) && typeof last.at(-1) === "string" ? (last.at(-1) as string) : null;
}

/** The tokens a model call reported: the message's `usage_metadata`, else the provider's `tokenUsage`. */
function usageOf(output: LLMResult): { input: number; output: number } {
  let input = 0;
  let out = 0;
  let found = false;
  for (const generations of output.generations ?? []) {
    for (const generation of generations) {
      const usage = (generation as { message?: { usage_metadata?: { input_tokens?: unknown; output_tokens?: unknown } } }).message?.usage_metadata;
      if (usage === undefined) continue;
      found = true;
      input += typeof usage.input_tokens === "number" ? usage.input_tokens : 0;
      out += typeof usage.output_tokens === "number" ? usage.output_tokens : 0;
    }
  }
  if (found) return { input, output: out };
  const tokenUsage = (output.llmOutput as { tokenUsage?: { promptTokens?: unknown; completionTokens?: unknown } } | undefined)?.tokenUsage;
  return {
    input: typeof tokenUsage?.promptTokens === "number" ? tokenUsage.promptTokens : 0,
    output: typeof tokenUsage?.completionTokens === "number" ? tokenUsage.completionTokens : 0,
  };
}
