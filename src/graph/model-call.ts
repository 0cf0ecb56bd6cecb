/**
 * The one place a model call is made, bounded and retried (CONTRACT section 2: "retries only
 * transient errors (429, 5xx, network)"). Every model goes through it the same way: ChatOpenAI
 * (built by createChatModel with no client-side retries), the scripted model, users' own models.
 */
import { randomUUID } from "node:crypto";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { concat } from "@langchain/core/utils/stream";
import { MODEL_RETRY_BACKOFF_MS } from "../constants.js";
import { classifyModelError } from "../model/model-errors.js";
import { redactSecrets } from "../secret-redaction.js";
import { isTransientModelError, retryAfterHintMs } from "../model/retry-policy.js";
import { sleep } from "../sleep.js";
import { chunkText, IdentifiedChatModel, uniformChunk } from "./identified-model.js";
import { callIdPrefix, ToolCallChunker } from "../model/tool-call-chunks.js";

/** A chat model as the graph uses it (after `bindTools`). */
export type CallableModel = Runnable<BaseLanguageModelInput, AIMessageChunk>;

/** Why a model call failed for good. */
export class ModelCallError extends Error {
  constructor(
    readonly code: "MODEL_TIMEOUT" | "MODEL_FAILED" | "MODEL_CANCELLED",
    message: string,
    readonly attempts: number,
  ) {
    super(message);
    this.name = "ModelCallError";
  }
}

/** What `onAttemptFailed` is told about one failed attempt. */
export interface ModelAttemptFailure {
  /** 1 for the first attempt. */
  attempt: number;
  code: "MODEL_TIMEOUT" | "MODEL_FAILED";
  /** Redacted. */
  message: string;
  /** Whether another attempt follows (after a backoff). */
  willRetry: boolean;
}

/** Options of one logical model call (its attempts included). */
export interface ModelCallOptions {
  /** Bound on each attempt, from its start to the stream's end. */
  timeoutMs: number;
  /** Retries of transient failures after the first attempt (0: one attempt only). */
  maxRetries: number;
  /** The run's cancel signal. */
  signal?: AbortSignal | undefined;
  onDelta?: (text: string) => void;
  onAttemptFailed?: (info: ModelAttemptFailure) => void;
  /** Exact secrets (e.g. the configured API key) to remove from error messages, besides the usual key patterns. */
  secrets?: readonly string[] | undefined;
  /**
   * LangChain callbacks of the calling node: LangGraph's `messages` stream mode hears the tokens
   * through them (and a run recording stream events records the model's).
   */
  callbacks?: RunnableConfig["callbacks"];
  /**
   * The id the answer will be stored under: every chunk the callbacks hear, and the answer, carry
   * it (the model is called through an IdentifiedChatModel). Default: the model's own ids.
   */
  messageId?: string | undefined;
}

/** Thrown inside an attempt when our timeout or the run's cancel signal fired; never escapes `callModel`. */
class AttemptAborted extends Error {
  constructor() {
    super("the model call was aborted");
    this.name = "AttemptAborted";
  }
}

/** A promise that rejects with AttemptAborted once `signal` fires (already handled, so it never goes unhandled). */
function abortedBy(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort: () => void = () => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AttemptAborted());
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

function closeQuietly(iterator: AsyncIterator<unknown> | undefined): void {
  try {
    iterator?.return?.()?.catch(() => undefined);
  } catch {
    // a model whose stream cannot be closed is left to its signal
  }
}

/**
 * One attempt: `.stream()` with a signal that fires on our timeout or the run's cancel, chunks
 * concatenated, text deltas forwarded. Each wait is raced against that signal, so a model that
 * ignores its signal still cannot hold the call past the timeout or a cancel. A stream that
 * ends while the signal has fired (LangChain's ChatOpenAI just stops) is an abort, not an answer.
 * `progress.chunks` counts the chunks received, for the caller's no-retry-after-output rule.
 */
async function attempt(model: CallableModel, messages: BaseMessage[], options: ModelCallOptions, timeout: AbortSignal, progress: { chunks: number }): Promise<AIMessageChunk> {
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  const aborted = abortedBy(signal);
  let iterator: AsyncIterator<AIMessageChunk> | undefined;
  const config: RunnableConfig = options.callbacks === undefined ? { signal } : { signal, callbacks: options.callbacks };
  // the callbacks see the model under its own name, its tokens under the stored message's id
  const streaming = options.messageId === undefined ? model : new IdentifiedChatModel(model, options.messageId);
  if (options.messageId !== undefined) config.runName = model.getName();
  try {
    const started = Promise.resolve().then(() => streaming.stream(messages, config));
    // if we stop waiting, close the stream whenever it does arrive
    started.then((stream) => iterator === undefined && signal.aborted && closeQuietly(stream[Symbol.asyncIterator]()), () => undefined);
    const stream = await Promise.race([started, aborted.promise]);
    iterator = stream[Symbol.asyncIterator]();
    let aggregate: AIMessageChunk | undefined;
    // every call in tool_call_chunks, so that concatenating loses none (a no-op on an IdentifiedChatModel's chunks)
    const chunker = new ToolCallChunker(callIdPrefix(options.messageId ?? randomUUID()));
    for (;;) {
      const pending = iterator.next();
      pending.catch(() => undefined);
      const next = await Promise.race([pending, aborted.promise]);
      if (next.done === true) break;
      const chunk = uniformChunk(next.value, chunker);
      progress.chunks += 1;
      aggregate = aggregate === undefined ? chunk : concat(aggregate, chunk);
      const text = chunkText(chunk);
      if (text !== "") options.onDelta?.(text);
    }
    iterator = undefined;
    if (signal.aborted) throw new AttemptAborted();
    if (aggregate === undefined) throw new Error("the model returned an empty stream (no message and no chunk)");
    // the answer carries the provider's id, as without the stored id (the caller knows that one)
    if (streaming instanceof IdentifiedChatModel) aggregate.id = streaming.providerMessageId;
    return aggregate;
  } finally {
    aborted.dispose();
    closeQuietly(iterator);
  }
}

/** Why an attempt failed, once neither the run's cancel is involved. */
function describeFailure(error: unknown, timedOut: boolean, delivered: boolean, options: ModelCallOptions): { code: "MODEL_TIMEOUT" | "MODEL_FAILED"; message: string; transient: boolean } {
  if (timedOut) {
    const what = delivered ? "did not finish answering" : "did not answer";
    return { code: "MODEL_TIMEOUT", message: `the model ${what} within ${options.timeoutMs} ms`, transient: true };
  }
  const secrets = options.secrets ?? [];
  const classified = classifyModelError(error, { secrets });
  if (classified.code === "MODEL_CANCELLED") {
    // an abort that neither the run nor our timeout asked for: the model's own doing
    const detail = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
    return { code: "MODEL_FAILED", message: `the model call was aborted, though the run was not cancelled (${detail})`, transient: false };
  }
  return { code: classified.code, message: classified.message, transient: isTransientModelError(error) };
}

function toMessage(chunk: AIMessageChunk): AIMessage {
  return new AIMessage({
    id: chunk.id,
    content: chunk.content,
    tool_calls: chunk.tool_calls,
    invalid_tool_calls: chunk.invalid_tool_calls,
    usage_metadata: chunk.usage_metadata,
    response_metadata: chunk.response_metadata,
    additional_kwargs: chunk.additional_kwargs,
  });
}

/**
 * One model call as the graph makes it: streamed (token deltas go to `onDelta`; no token
 * estimation or download is ever needed), aggregated, bounded by `timeoutMs` per attempt, and
 * stopped at once by the run's cancel signal. Returns a plain AIMessage; throws ModelCallError.
 *
 * Retries (this is the only retry layer; models must not retry on their own): up to
 * `maxRetries` after the first attempt, of transient failures only (`isTransientModelError`:
 * 429, 5xx, network errors, connection timeouts) and of our own per-attempt timeout, after
 * `MODEL_RETRY_BACKOFF_MS` (or a 429's retry-after hint, if longer). An attempt that already
 * delivered output (any chunk) is never retried: its deltas are out, a second answer would
 * repeat them. `onAttemptFailed` hears of every failed attempt but a cancelled one.
 *
 * @example
 * const message = await callModel(model, [new HumanMessage("hi")], { timeoutMs: 60_000, maxRetries: 2, signal, secrets: [apiKey] });
 */
export async function callModel(model: CallableModel, messages: BaseMessage[], options: ModelCallOptions): Promise<AIMessage> {
  const cancelled = (attempts: number) => new ModelCallError("MODEL_CANCELLED", "the run was cancelled", attempts);
  // a function, not a property read: TypeScript would keep the narrowing across the awaits
  const isCancelled = () => options.signal?.aborted === true;
  for (let attemptNo = 1; ; attemptNo += 1) {
    if (isCancelled()) throw cancelled(attemptNo - 1);
    const timeout = AbortSignal.timeout(Math.max(1, options.timeoutMs));
    const progress = { chunks: 0 };
    try {
      return toMessage(await attempt(model, messages, options, timeout, progress));
    } catch (error) {
      if (isCancelled()) throw cancelled(attemptNo);
      const delivered = progress.chunks > 0;
      const failure = describeFailure(error, timeout.aborted, delivered, options);
      const willRetry = failure.transient && !delivered && attemptNo <= options.maxRetries;
      options.onAttemptFailed?.({ attempt: attemptNo, code: failure.code, message: failure.message, willRetry });
      if (!willRetry) throw new ModelCallError(failure.code, failure.message, attemptNo);
      const backoff = MODEL_RETRY_BACKOFF_MS[Math.min(attemptNo - 1, MODEL_RETRY_BACKOFF_MS.length - 1)] ?? 0;
      await sleep(Math.max(backoff, retryAfterHintMs(error) ?? 0), options.signal);
    }
  }
}
