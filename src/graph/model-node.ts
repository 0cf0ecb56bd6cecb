import { createHash, randomUUID } from "node:crypto";
import { AIMessage, SystemMessage, ToolMessage, type BaseMessage, type InvalidToolCall } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { failureResult, toolMessageContent, type ToolRegistry } from "../tools/registry.js";
import { TOOL_NAME_PATTERN } from "../constants.js";
import { DrainError } from "../errors.js";
import { fitToContext, estimateTokens } from "./context-budget.js";
import { emit, type EventSink } from "../vocabulary/events.js";
import type { AgentLimits } from "../vocabulary/limits.js";
import { callModel, ModelCallError, type CallableModel } from "./model-call.js";
import { readRunContext } from "./run-context.js";
import { viewRun } from "./run-view.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";
import { runError } from "../vocabulary/stop-reasons.js";

interface ModelDeps {
  model: CallableModel;
  registry: ToolRegistry;
  systemPrompt: string;
  /** Tokens taken by the tool schemas, counted against the context budget. */
  toolSchemaTokens: number;
  limits: AgentLimits;
  events?: EventSink | undefined;
}

/** Longest part of malformed arguments quoted back to the model. */
const RAW_ARGUMENTS_QUOTE = 300;

/**
 * The AI message as stored in the thread: a fresh id (providers' ids may repeat — some
 * OpenAI-compatible servers reuse one — and messages with equal ids replace each other), and
 * calls with unparsable arguments kept as ordinary tool calls with empty arguments, so the
 * conversation sent back stays valid (OpenAI requires every tool message to answer a call of the
 * preceding assistant message, and LangChain sends only `tool_calls`).
 */
function storedMessage(response: AIMessage, round: number, id: string): { message: AIMessage; invalid: (InvalidToolCall & { id: string })[]; renamed: Map<string, string> } {
  const invalid = (response.invalid_tool_calls ?? []).map((call, index) => ({ ...call, id: call.id ?? `invalid_${round}_${index}` }));
  const { tool_calls: _raw, ...kwargs } = response.additional_kwargs ?? {};
  const renamed = new Map<string, string>();
  const calls = [
    ...(response.tool_calls ?? []).map((call, index) => ({ ...call, id: call.id ?? `call_${round}_${index}` })),
    ...invalid.map((call) => ({ id: call.id, name: call.name ?? UNUSABLE_TOOL_NAME, args: {}, type: "tool_call" as const })),
  ].map((call) => {
    // a name OpenAI would refuse in the next request (made up by the model) is replaced; the
    // answer still quotes the original, bounded
    if (TOOL_NAME_PATTERN.test(call.name)) return call;
    renamed.set(call.id, call.name);
    return { ...call, name: UNUSABLE_TOOL_NAME };
  });
  const message = new AIMessage({
    id,
    content: response.content,
    tool_calls: calls,
    usage_metadata: response.usage_metadata,
    response_metadata: { ...response.response_metadata, ...(response.id === undefined ? {} : { provider_message_id: response.id }) },
    additional_kwargs: kwargs,
  });
  return { message, invalid, renamed };
}

/**
 * The id of a model round's AI message, known before the model answers so its streamed tokens
 * carry the id the message is stored under. Derived from the run, its start in the thread and the
 * round, so a round executed again (a process resuming the run) streams under the same id; a
 * graph invoked without a run id gets a random one.
 */
export function roundMessageId(runId: string | undefined, runStart: number, round: number): string {
  if (runId === undefined) return randomUUID();
  const hex = createHash("sha256").update(`devmind-ai-message:${runId.toLowerCase()}:${runStart}:${round}`).digest("hex");
  // RFC 4122 layout, version 8 (custom), variant 10
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Stands in for a tool name the model sent that no API would accept back. */
const UNUSABLE_TOOL_NAME = "unknown_tool";

/** INVALID_ARGUMENTS answers for calls whose arguments were not valid JSON, quoting what was sent. */
function invalidCallMessages(invalid: readonly (InvalidToolCall & { id: string })[]): ToolMessage[] {
  return invalid.map((call) => {
    const name = call.name !== undefined && TOOL_NAME_PATTERN.test(call.name) ? call.name : UNUSABLE_TOOL_NAME;
    const raw = typeof call.args === "string" ? call.args : "";
    const quoted = raw.length > RAW_ARGUMENTS_QUOTE ? `${raw.slice(0, RAW_ARGUMENTS_QUOTE)}…` : raw;
    return new ToolMessage({
      content: toolMessageContent(
        failureResult(name, "INVALID_ARGUMENTS", `the arguments are not valid JSON (${JSON.stringify(quoted)}); send a JSON object matching the tool's schema`),
      ),
      tool_call_id: call.id,
      name,
      status: "error",
    });
  });
}

/**
 * TOOL_NOT_FOUND answers for calls whose tool name no API would accept back (replaced in the
 * stored message), quoting the name the model sent. Every other refusal is the guard's.
 */
function unusableNameMessages(renamed: ReadonlyMap<string, string>, skip: ReadonlySet<string>, registry: ToolRegistry, sinks: EventSink[]): ToolMessage[] {
  const answers: ToolMessage[] = [];
  for (const [id, original] of renamed) {
    if (skip.has(id)) continue;
    const checked = registry.check({ id, name: original, args: {} });
    const text = checked.kind === "not_found" ? checked.message : `unknown tool ${JSON.stringify(original.slice(0, 100))}`;
    answers.push(new ToolMessage({ content: toolMessageContent(failureResult(UNUSABLE_TOOL_NAME, "TOOL_NOT_FOUND", text)), tool_call_id: id, name: UNUSABLE_TOOL_NAME, status: "error" }));
    for (const sink of sinks) emit(sink, { type: "tool.call.finished", tool_call_id: id, tool: UNUSABLE_TOOL_NAME, ok: false, error_code: "TOOL_NOT_FOUND", duration_ms: 0, truncated: false });
  }
  return answers;
}

/**
 * One model round: the system prompt and the thread (older tool outputs elided to fit the context
 * budget), one streamed call bounded by the model timeout and the run deadline, retried on
 * transient errors. Calls the reply cannot carry as they are (unparsable argument JSON, a tool
 * name no API accepts) are answered at once; every other judgement of the calls is the guard's,
 * which runs next. A failure, or a `length` finish (the partial answer is kept), is reported as
 * the stop reason for the guard to act on.
 */
export function createModelNode(deps: ModelDeps) {
  return async function model(state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const context = readRunContext(config);
    if (context.drainSignal?.aborted === true) throw new DrainError();
    const limits = { ...deps.limits, ...(context.limits ?? {}) };
    const sinks = [deps.events, context.events].filter((s): s is EventSink => s !== undefined);
    const round = viewRun(state.messages, state.run_start).modelRounds + 1;
    const messageId = roundMessageId(context.runId, state.run_start, round);
    let streamed = 0;
    const system = new SystemMessage(deps.systemPrompt);
    const fixed = estimateTokens(system) + deps.toolSchemaTokens;
    const prompt: BaseMessage[] = [system, ...fitToContext(state.messages, limits.contextTokens, fixed).messages];
    const untilDeadline = state.deadline_at === null ? Number.POSITIVE_INFINITY : state.deadline_at - Date.now();
    const timeoutMs = Math.max(1, Math.min(limits.modelTimeoutMs, untilDeadline));
    const deadlineBound = untilDeadline < limits.modelTimeoutMs;
    for (const sink of sinks) emit(sink, { type: "model.started", round });
    const started = Date.now();
    let response: AIMessage;
    try {
      response = await callModel(deps.model, prompt, {
        timeoutMs,
        maxRetries: limits.modelMaxRetries,
        signal: context.cancelSignal,
        // LangGraph's messages stream mode hears the tokens through the node's callbacks, under the stored id
        ...(config.callbacks === undefined ? {} : { callbacks: config.callbacks }),
        messageId,
        onDelta: (text) => {
          const offset = streamed;
          streamed += text.length;
          sinks.forEach((sink) => emit(sink, { type: "model.delta", round, text, message_id: messageId, offset }));
        },
        onAttemptFailed: (info) =>
          sinks.forEach((sink) => emit(sink, { type: "model.failed", round, code: info.code, message: info.message, attempt: info.attempt, will_retry: info.willRetry })),
      });
    } catch (error) {
      if (!(error instanceof ModelCallError)) throw error;
      if (error.code === "MODEL_CANCELLED") return { stop_reason: "cancelled" };
      if (error.code === "MODEL_TIMEOUT" && deadlineBound) return { stop_reason: "deadline", error: runError("DEADLINE", `the run deadline passed while the model was answering`) };
      return { stop_reason: error.code === "MODEL_TIMEOUT" ? "model_timeout" : "model_failed", error: runError(error.code, error.message) };
    }
    const finishReason = (response.response_metadata?.["finish_reason"] as string | undefined) ?? null;
    for (const sink of sinks) {
      emit(sink, {
        type: "model.finished",
        round,
        duration_ms: Date.now() - started,
        tool_calls: (response.tool_calls?.length ?? 0) + (response.invalid_tool_calls?.length ?? 0),
        usage: { input_tokens: response.usage_metadata?.input_tokens ?? 0, output_tokens: response.usage_metadata?.output_tokens ?? 0 },
        finish_reason: finishReason,
      });
    }
    if (finishReason === "length") {
      // a cut-off reply's tool calls are unreliable: keep only its text, never run them
      const partial = new AIMessage({ id: messageId, content: response.content, usage_metadata: response.usage_metadata, response_metadata: response.response_metadata });
      return {
        messages: [partial],
        stop_reason: "model_truncated",
        error: runError("MODEL_TRUNCATED", "the model's reply was cut off at its output token limit"),
      };
    }
    const { message, invalid, renamed } = storedMessage(response, round, messageId);
    const invalidAnswers = invalidCallMessages(invalid);
    for (const answer of invalidAnswers) {
      for (const sink of sinks) emit(sink, { type: "tool.call.finished", tool_call_id: answer.tool_call_id, tool: answer.name ?? "", ok: false, error_code: "INVALID_ARGUMENTS", duration_ms: 0, truncated: false });
    }
    const skip = new Set(invalid.map((call) => call.id));
    return { messages: [message, ...invalidAnswers, ...unusableNameMessages(renamed, skip, deps.registry, sinks)] };
  };
}
