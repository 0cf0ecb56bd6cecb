import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { LLMResult } from "@langchain/core/outputs";
import type { RunCounters } from "../../graphs/run-hooks.js";

/**
 * Counts what a graph that keeps no counters of its own (no `counters` hook: any user graph)
 * did in a run: each chat model (or LLM) call that finished is a model round, with the tokens it
 * reported; each LangChain tool call that ran, finished or failed, is a tool call. It listens as
 * a LangChain callback handler on the run's config, so calls in any node and subgraph count; a
 * call the tool ledger answers from its record (a node re-run after a crash) never reaches the
 * tool, so it is not counted again. Chain and retriever callbacks are ignored (tool callbacks
 * are the "agent" ones LangChain gates with `ignoreAgent`, so those stay), so the
 * handler costs nothing around the graph's own steps.
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

  override handleLLMEnd(output: LLMResult): void {
    this.modelRounds += 1;
    const usage = usageOf(output);
    this.inputTokens += usage.input;
    this.outputTokens += usage.output;
  }

  override handleLLMError(): void {
    // a failed call is no round: the graph decides whether to retry it, and a retry that finishes counts
  }

  override handleToolEnd(): void {
    this.toolCalls += 1;
  }

  override handleToolError(): void {
    this.toolCalls += 1;
  }

  /** `base` (the counters the run started with) plus what was counted here. */
  added(base: RunCounters): RunCounters {
    return {
      modelRounds: base.modelRounds + this.modelRounds,
      toolCalls: base.toolCalls + this.toolCalls,
      usage: { input_tokens: base.usage.input_tokens + this.inputTokens, output_tokens: base.usage.output_tokens + this.outputTokens },
    };
  }
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
