/**
 * A chat model that answers from a script (CONTRACT section 7): for tests, demos and users' own
 * tests of graphs. It is deterministic across processes: the turn that answers a call is the
 * number of AI messages in the call's input, so a run resumed in a new process continues the
 * script where the thread left off. It behaves like a streaming provider: `.stream()` yields the
 * content in a few chunks and then one chunk with `tool_call_chunks`, and concatenating those
 * chunks gives exactly what `.invoke()` returns.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage, type MessageContent } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { concat } from "@langchain/core/utils/stream";
import { MODEL_DEFAULTS } from "../constants.js";
import { ModelError } from "../errors.js";
import { loadScriptFile } from "./script-file.js";
import { defaultToolCallId, parseScript, type ScriptedTurn } from "./scripted-turns.js";

export { loadScriptFile } from "./script-file.js";
export {
  defaultToolCallId,
  parseScript,
  type ScriptProblem,
  type ScriptedContentTurn,
  type ScriptedErrorTurn,
  type ScriptedToolCall,
  type ScriptedToolCallsTurn,
  type ScriptedTurn,
  type ScriptedTurnOptions,
  type ScriptedUsage,
} from "./scripted-turns.js";
import { sleep } from "../sleep.js";

/** Options of `new ScriptedChatModel(turns, options)`. */
export interface ScriptedChatModelOptions {
  /** Reported as `response_metadata.model_name` (default "scripted"). */
  name?: string;
}

/** Call options: LangChain's, plus `tools` as an alternative to `bindTools` (its names are recorded). */
export interface ScriptedChatModelCallOptions extends BaseChatModelCallOptions {
  tools?: BindToolsInput[];
}

/** One recorded call: which turn answered it, the input messages, and the names of the tools bound. */
export interface ScriptedCall {
  turn: number;
  messages: BaseMessage[];
  tools: string[];
}

/** What a model and the models `bindTools` derives from it share. */
interface SharedScript {
  readonly turns: readonly ScriptedTurn[];
  readonly calls: ScriptedCall[];
  /** Turn indexes of each position: error turns, then the answer (see ScriptedTurn). */
  readonly positions: readonly number[][];
  /** Attempts made at each position by this model (and its bound copies). */
  readonly attempts: Map<number, number>;
}

/** Groups turn indexes into positions: any error turns followed by one answer. */
function positionsOf(turns: readonly ScriptedTurn[]): number[][] {
  const positions: number[][] = [];
  let current: number[] = [];
  turns.forEach((turn, index) => {
    current.push(index);
    if (!("error" in turn)) {
      positions.push(current);
      current = [];
    }
  });
  if (current.length > 0) positions.push(current);
  return positions;
}

/**
 * The scripted chat model. Build it from turns (validated; a bad script throws `ModelError`
 * `SCRIPT_INVALID` naming the turn and problem) or from a file with `loadScriptFile`.
 *
 * - Turns are read as positions (any error turns, then one answer); the number of AI messages in
 *   the input picks the position, each attempt at a position takes its next turn.
 * - A turn `{"error": M}` makes that attempt throw `ModelError` `MODEL_FAILED` with message M;
 *   with `"status"` (429, 503, …) the error carries that status, so callers treat it as transient
 *   and a retry gets the next turn.
 * - A call past the last answer throws `ModelError` `SCRIPT_EXHAUSTED`.
 * - `delay_ms` waits, but the call's `signal` ends the wait at once (rejecting with the signal's reason).
 * - `args_json` is parsed the way LangChain parses streamed tool-call arguments: text that cannot
 *   be completed to a JSON object lands in `invalid_tool_calls` with the raw text; note that
 *   truncated JSON such as `{"a": 1` is completed (to `{a: 1}`) like it would be on the wire.
 * - `.calls` records every call, in order, across this model and every model `bindTools` made from it.
 *
 * @example
 * const model = new ScriptedChatModel([{ tool_calls: [{ name: "add", args: { a: 1, b: 2 } }] }, { content: "3" }]);
 * const graph = buildAgentGraph({ model, tools, checkpointer });
 */
export class ScriptedChatModel extends BaseChatModel<ScriptedChatModelCallOptions, AIMessageChunk> {
  #shared: SharedScript;
  #tools: string[] = [];
  readonly #modelName: string;

  /** @internal LangChain's serialisation name. */
  static override lc_name(): string {
    return "ScriptedChatModel";
  }

  constructor(turns: readonly ScriptedTurn[], options: ScriptedChatModelOptions = {}) {
    super({});
    const parsed = parseScript(turns);
    this.#shared = { turns: parsed, calls: [], positions: positionsOf(parsed), attempts: new Map() };
    this.#modelName = options.name ?? MODEL_DEFAULTS.scriptedModelName;
  }

  /** The validated script. */
  get turns(): readonly ScriptedTurn[] {
    return this.#shared.turns;
  }

  /** Every call so far (shared with models made by `bindTools`), oldest first. */
  get calls(): readonly ScriptedCall[] {
    return this.#shared.calls;
  }

  /** Names of the tools bound with `bindTools` (empty on the original model). */
  get boundTools(): readonly string[] {
    return this.#tools;
  }

  /** @internal */
  _llmType(): string {
    return "scripted";
  }

  /**
   * A model with the same script and call log that records `tools`' names on each call. The
   * script decides the answers; the tools are not checked against it, so tests can script calls
   * to unknown tools. `kwargs` (tool_choice, …) are accepted and ignored.
   */
  override bindTools(
    tools: BindToolsInput[],
    _kwargs?: Partial<ScriptedChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedChatModelCallOptions> {
    const bound = new ScriptedChatModel([], { name: this.#modelName });
    bound.#shared = this.#shared;
    bound.#tools = tools.map(toolName);
    return bound;
  }

  /** A rough count (4 characters a token) that never downloads a tokenizer. */
  override async getNumTokens(content: MessageContent): Promise<number> {
    const text = typeof content === "string" ? content : JSON.stringify(content);
    return Math.ceil(text.length / 4);
  }

  /** @internal */
  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const chunks = await this.#answer(messages, options);
    const merged = chunks.reduce((all, chunk) => concat(all, chunk));
    const message = new AIMessage({
      content: merged.content,
      tool_calls: merged.tool_calls,
      invalid_tool_calls: merged.invalid_tool_calls,
      usage_metadata: merged.usage_metadata,
      response_metadata: merged.response_metadata,
    });
    const text = typeof merged.content === "string" ? merged.content : "";
    return { generations: [{ text, message }] };
  }

  /** @internal */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const chunks = await this.#answer(messages, options);
    for (const message of chunks) {
      options.signal?.throwIfAborted();
      const text = typeof message.content === "string" ? message.content : "";
      const chunk = new ChatGenerationChunk({ message, text });
      yield chunk;
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk });
    }
  }

  /** Records the call, waits `delay_ms`, and returns the turn's chunks (or throws its error). */
  async #answer(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<AIMessageChunk[]> {
    const { turns, calls } = this.#shared;
    const { positions, attempts } = this.#shared;
    const position = messages.filter((message) => AIMessage.isInstance(message)).length;
    const tools = options.tools === undefined ? [...this.#tools] : options.tools.map(toolName);
    const group = positions[position];
    const attempt = attempts.get(position) ?? 0;
    attempts.set(position, attempt + 1);
    const index = group === undefined ? turns.length + position - positions.length : (group[Math.min(attempt, group.length - 1)] as number);
    calls.push({ turn: index, messages: [...messages], tools });
    const turn = group === undefined ? undefined : turns[index];
    if (turn === undefined) {
      throw new ModelError("SCRIPT_EXHAUSTED", `scripted model: the script has no turn for answer ${position} (${turns.length} turns, ${positions.length} answers)`, {
        details: { position, turns: turns.length },
      });
    }
    await delay(turn.delay_ms ?? 0, options.signal);
    if ("error" in turn) {
      const failure = new ModelError("MODEL_FAILED", turn.error, { details: { turn: index, ...(turn.status === undefined ? {} : { status: turn.status }) } });
      if (turn.status !== undefined) Object.assign(failure, { status: turn.status });
      throw failure;
    }
    return turnChunks(turn, index, this.#modelName);
  }
}

/**
 * The chunks a turn streams: its content in up to `MODEL_DEFAULTS.scriptedStreamChunks` pieces,
 * then one chunk with the tool calls as `tool_call_chunks` (arguments as JSON text), the usage and
 * the finish reason.
 */
function turnChunks(turn: Exclude<ScriptedTurn, { error: string }>, index: number, modelName: string): AIMessageChunk[] {
  const calls = "tool_calls" in turn ? turn.tool_calls : [];
  const chunks = splitText(turn.content ?? "", MODEL_DEFAULTS.scriptedStreamChunks).map((piece) => new AIMessageChunk({ content: piece }));
  const usage = turn.usage;
  chunks.push(
    new AIMessageChunk({
      content: "",
      tool_call_chunks: calls.map((call, i) => ({
        type: "tool_call_chunk" as const,
        index: i,
        id: call.id ?? defaultToolCallId(index, i),
        name: call.name,
        args: "args_json" in call ? call.args_json : JSON.stringify(call.args),
      })),
      ...(usage === undefined
        ? {}
        : { usage_metadata: { ...usage, total_tokens: usage.input_tokens + usage.output_tokens } }),
      response_metadata: { finish_reason: turn.finish_reason ?? (calls.length > 0 ? "tool_calls" : "stop"), model_name: modelName },
    }),
  );
  return chunks;
}

/** Splits text into at most `parts` non-empty pieces of similar length, never inside a code point. */
function splitText(text: string, parts: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.ceil(chars.length / Math.min(parts, chars.length));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

/** Waits `ms`; rejects with the abort reason when `signal` has aborted or aborts meanwhile. */
async function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  // a function, not a property read: TypeScript would keep the narrowing across the await
  const aborted = (): boolean => signal?.aborted === true;
  if (aborted()) throw abortReason(signal as AbortSignal);
  await sleep(ms, signal);
  if (aborted()) throw abortReason(signal as AbortSignal);
}

/** The signal's reason when it is an Error (e.g. a TimeoutError from AbortSignal.timeout), so callers can tell why. */
function abortReason(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason;
  return new ModelError("MODEL_CANCELLED", "scripted model call was cancelled", { cause: signal.reason });
}

function toolName(tool: BindToolsInput): string {
  const candidate = tool as { name?: unknown; function?: { name?: unknown } };
  if (typeof candidate.function?.name === "string") return candidate.function.name;
  return typeof candidate.name === "string" ? candidate.name : "";
}

/** The scripted model of DEVMIND_MODEL=scripted:PATH: the turns of the JSON file at `path`. */
export function scriptedModelFromFile(path: string): ScriptedChatModel {
  return new ScriptedChatModel(loadScriptFile(path), { name: `scripted:${path}` });
}
