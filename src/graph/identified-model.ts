import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelCallOptions, type LangSmithParams } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { concat } from "@langchain/core/utils/stream";
import type { CallableModel } from "./model-call.js";
import { callIdPrefix, ToolCallChunker } from "../model/tool-call-chunks.js";

/** What LangSmith parameters a wrapped model reports, if it is (or binds) a chat model. */
interface LsParamsSource {
  getLsParams(options: Record<string, unknown>): LangSmithParams;
}

/** The chat model inside `model` (itself, or what a `bindTools` binding wraps), with the options it was bound with. */
function chatModelOf(model: unknown): { source: LsParamsSource; options: Record<string, unknown> } | undefined {
  let current = model as { getLsParams?: unknown; bound?: unknown; kwargs?: unknown } | undefined;
  let options: Record<string, unknown> = {};
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth += 1) {
    if (typeof current.getLsParams === "function") return { source: current as LsParamsSource, options };
    if (current.kwargs !== null && typeof current.kwargs === "object") options = { ...(current.kwargs as Record<string, unknown>), ...options };
    current = current.bound as typeof current;
  }
  return undefined;
}

/** The text of a streamed chunk (its text parts, when its content is a list of parts). */
export function chunkText(chunk: AIMessageChunk): string {
  if (typeof chunk.content === "string") return chunk.content;
  return chunk.content.map((part) => (typeof part === "object" && part.type === "text" && typeof part["text"] === "string" ? part["text"] : "")).join("");
}

/**
 * A chunk of `model.stream()` as an AIMessageChunk whose tool calls are all in
 * `tool_call_chunks` (see ToolCallChunker), under id `id` (default: its own). `chunk` may be a
 * whole AIMessage: LangChain's stream of a model without native streaming is its one `_generate`
 * message, with whole `tool_calls` and no chunks.
 */
export function uniformChunk(chunk: AIMessageChunk | AIMessage, chunker: ToolCallChunker, id?: string): AIMessageChunk {
  const source = chunk as AIMessageChunk;
  const messageId = id ?? chunk.id;
  return new AIMessageChunk({
    ...(messageId === undefined ? {} : { id: messageId }),
    content: chunk.content,
    tool_call_chunks: chunker.chunksOf({ tool_call_chunks: source.tool_call_chunks, tool_calls: chunk.tool_calls, invalid_tool_calls: chunk.invalid_tool_calls }),
    additional_kwargs: chunk.additional_kwargs,
    response_metadata: chunk.response_metadata,
    ...(chunk.usage_metadata === undefined ? {} : { usage_metadata: chunk.usage_metadata }),
  });
}

/**
 * A chat model that streams another model's answer under a message id chosen before it answers:
 * the id the answer is stored under. It is the chat model LangChain's callbacks see (LangGraph's
 * `messages` stream mode, recorded stream events), so every token they stream carries the stored
 * message's id rather than the provider's (which some OpenAI-compatible servers repeat across
 * answers); the model inside is called without callbacks, so nothing is reported twice. It
 * reports the inner model's name and LangSmith parameters (`ls_provider`, `ls_model_name`, …),
 * and keeps the provider's id of the last answer (`providerMessageId`). Its chunks carry every
 * tool call in `tool_call_chunks`, ids given where the model gave none (`uniformChunk`): a model
 * without native streaming, whose one chunk has whole `tool_calls`, loses none. Streaming only:
 * `invoke` aggregates the same stream.
 */
export class IdentifiedChatModel extends BaseChatModel<BaseChatModelCallOptions, AIMessageChunk> {
  /** @internal LangChain's serialisation name. */
  static override lc_name(): string {
    return "IdentifiedChatModel";
  }

  /** The id the inner model gave the answer last streamed (its first chunk's that has one), if any. */
  providerMessageId: string | undefined;

  constructor(
    private readonly inner: CallableModel,
    private readonly messageId: string,
  ) {
    super({});
  }

  /** The inner model's name (its class's, e.g. ChatOpenAI), as tracers and stream events show it. */
  override getName(suffix?: string): string {
    return this.inner.getName(suffix);
  }

  /** @internal */
  _llmType(): string {
    return "identified";
  }

  /** The inner chat model's LangSmith parameters (provider, model name, temperature, …). */
  override getLsParams(options: this["ParsedCallOptions"]): LangSmithParams {
    const found = chatModelOf(this.inner);
    return found === undefined ? super.getLsParams(options) : found.source.getLsParams({ ...found.options, ...options });
  }

  /** @internal */
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let aggregate: ChatGenerationChunk | undefined;
    for await (const chunk of this._streamResponseChunks(messages, options, runManager)) aggregate = aggregate === undefined ? chunk : concat(aggregate, chunk);
    if (aggregate === undefined) throw new Error("the model returned an empty stream (no message and no chunk)");
    return { generations: [aggregate] };
  }

  /** @internal */
  override async *_streamResponseChunks(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    // no callbacks: this model reports the tokens (an omitted key would inherit the caller's)
    const stream = await this.inner.stream(messages, { ...(options.signal === undefined ? {} : { signal: options.signal }), callbacks: [] });
    this.providerMessageId = undefined;
    const chunker = new ToolCallChunker(callIdPrefix(this.messageId));
    for await (const chunk of stream) {
      this.providerMessageId ??= chunk.id;
      const message = uniformChunk(chunk, chunker, this.messageId);
      const generation = new ChatGenerationChunk({ message, text: chunkText(chunk) });
      // reported before it is handed on, so a listener has it without waiting for the next one
      await runManager?.handleLLMNewToken(generation.text, { prompt: 0, completion: 0 }, undefined, undefined, undefined, { chunk: generation });
      yield generation;
    }
  }
}
