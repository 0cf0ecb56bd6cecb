/**
 * Chat models as users write them, for the tests that any chat model works (issue 37 item 1):
 * `GenerateOnlyModel` implements `_generate` only (no native streaming: LangChain's `stream`
 * falls back to one whole message), `EmptyStreamModel` streams nothing at all.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, type AIMessageChunk, type BaseMessage, type InvalidToolCall, type ToolCall } from "@langchain/core/messages";
import type { ChatGenerationChunk, ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";

/** What the model answers to a prompt: calls (whole), unparsable calls, text, usage. */
export interface GeneratedTurn {
  content?: string;
  tool_calls?: (Omit<ToolCall, "id"> & { id?: string })[];
  invalid_tool_calls?: InvalidToolCall[];
  usage?: { input_tokens: number; output_tokens: number };
}

/**
 * A BaseChatModel with `_generate` only, answering `turn(messages)` for each call; `bindTools`
 * returns the model itself (as many community models do: the tools go in its request). `calls`
 * counts its calls, across the models it bound.
 */
export class GenerateOnlyModel extends BaseChatModel {
  readonly calls = { count: 0 };

  constructor(private readonly turn: (messages: BaseMessage[]) => GeneratedTurn) {
    super({});
  }

  _llmType(): string {
    return "generate-only";
  }

  override bindTools(): Runnable<BaseMessage[], AIMessageChunk, BaseChatModelCallOptions> {
    return this as unknown as Runnable<BaseMessage[], AIMessageChunk, BaseChatModelCallOptions>;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.count += 1;
    const answer = this.turn(messages);
    const message = new AIMessage({
      content: answer.content ?? "",
      tool_calls: (answer.tool_calls ?? []) as ToolCall[],
      invalid_tool_calls: answer.invalid_tool_calls ?? [],
      ...(answer.usage === undefined ? {} : { usage_metadata: { ...answer.usage, total_tokens: answer.usage.input_tokens + answer.usage.output_tokens } }),
    });
    return { generations: [{ message, text: answer.content ?? "" }] };
  }
}

/** Tool messages since the last human message: how many turns of the current task came before. */
export function turnsSinceHuman(messages: BaseMessage[]): number {
  let count = 0;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const type = messages[i]?.getType();
    if (type === "human") break;
    if (type === "tool") count += 1;
  }
  return count;
}

/** A model whose stream ends before its first chunk. */
export class EmptyStreamModel extends BaseChatModel {
  _llmType(): string {
    return "empty-stream";
  }

  override bindTools(): Runnable<BaseMessage[], AIMessageChunk, BaseChatModelCallOptions> {
    return this as unknown as Runnable<BaseMessage[], AIMessageChunk, BaseChatModelCallOptions>;
  }

  async _generate(): Promise<ChatResult> {
    throw new Error("not called: the model streams");
  }

  // eslint-disable-next-line require-yield
  override async *_streamResponseChunks(_messages: BaseMessage[], _options: this["ParsedCallOptions"], _run?: CallbackManagerForLLMRun): AsyncGenerator<ChatGenerationChunk> {
    return;
  }
}
