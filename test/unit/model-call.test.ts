/**
 * callModel (src/graph/model-call.ts), the graph's one retry policy, with no network: the
 * scripted model, a RunnableLambda, and tiny fake models (objects with a `stream` method) whose
 * every attempt is scripted and counted. Proves what is retried (transient errors and our own
 * timeout, before any output), what is not (4xx, anything after a chunk), the attempt reports,
 * and timeout vs cancel.
 */
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda, type RunnableConfig } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { MODEL_RETRY_BACKOFF_MS } from "../../src/constants.js";
import { callModel, ModelCallError, type CallableModel, type ModelAttemptFailure, type ModelCallOptions } from "../../src/graph/model-call.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";

const messages = [new HumanMessage("hi")];

/** What one fake attempt does: yield these chunks (text or chunk), then throw `error` or hang. */
interface FakeAttempt {
  chunks?: (string | AIMessageChunk)[];
  error?: unknown;
  /** After the chunks: never end, ignoring the signal (a model that does not honour aborts). */
  hang?: boolean;
  /** After the chunks: wait for the signal, then end the stream quietly (as LangChain's ChatOpenAI does). */
  endQuietlyOnAbort?: boolean;
}

/** A model whose attempts follow `script` (the last entry repeating); `signals` records each attempt's signal. */
function fakeModel(script: FakeAttempt[]) {
  const signals: (AbortSignal | undefined)[] = [];
  const model = {
    async stream(_input: unknown, config?: RunnableConfig) {
      const step = script[Math.min(signals.length, script.length - 1)] ?? {};
      signals.push(config?.signal);
      return (async function* () {
        for (const chunk of step.chunks ?? []) yield typeof chunk === "string" ? new AIMessageChunk({ content: chunk }) : chunk;
        if (step.error !== undefined) throw step.error;
        if (step.hang === true) await new Promise(() => undefined);
        if (step.endQuietlyOnAbort === true) {
          const signal = config?.signal;
          if (signal !== undefined && !signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        }
      })();
    },
  };
  return { model: model as unknown as CallableModel, signals, get attempts() { return signals.length; } };
}

const httpError = (status: number, message = `HTTP ${status}`, extra: object = {}) => Object.assign(new Error(message), { status, ...extra });

/** Calls `model`, recording deltas and failed attempts; returns the message or the ModelCallError. */
async function run(model: CallableModel, options: Partial<ModelCallOptions> = {}) {
  const deltas: string[] = [];
  const failures: ModelAttemptFailure[] = [];
  const started = performance.now();
  const outcome = await callModel(model, messages, {
    timeoutMs: 2_000,
    maxRetries: 2,
    ...options,
    onDelta: (text) => {
      deltas.push(text);
      options.onDelta?.(text);
    },
    onAttemptFailed: (info) => {
      failures.push(info);
      options.onAttemptFailed?.(info);
    },
  }).catch((error: unknown) => error);
  return { outcome, deltas, failures, ms: performance.now() - started };
}

function expectCallError(outcome: unknown): ModelCallError {
  expect(outcome).toBeInstanceOf(ModelCallError);
  return outcome as ModelCallError;
}

describe("callModel: answers", () => {
  it("streams a scripted answer: deltas in pieces, tool calls and usage in the message", async () => {
    const model = new ScriptedChatModel([{ content: "hello there, world", tool_calls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }], usage: { input_tokens: 5, output_tokens: 4 } }]);
    const { outcome, deltas, failures } = await run(model as unknown as CallableModel);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("hello there, world");
    expect(outcome).toMatchObject({
      content: "hello there, world",
      tool_calls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }],
      usage_metadata: { input_tokens: 5, output_tokens: 4, total_tokens: 9 },
      response_metadata: { finish_reason: "tool_calls" },
    });
    expect(failures).toEqual([]);
    expect(model.calls).toHaveLength(1);
  });

  it("works with any Runnable, e.g. a RunnableLambda", async () => {
    let calls = 0;
    const lambda = RunnableLambda.from(async () => {
      calls += 1;
      if (calls === 1) throw httpError(503, "overloaded");
      return new AIMessageChunk({ content: "from a lambda" });
    });
    const { outcome, deltas, failures } = await run(lambda as unknown as CallableModel, { maxRetries: 1 });
    expect(outcome).toMatchObject({ content: "from a lambda" });
    expect(deltas).toEqual(["from a lambda"]);
    expect(calls).toBe(2);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: "overloaded", willRetry: true }]);
  });

  it("fails an empty stream, without retrying it", async () => {
    const fake = fakeModel([{ chunks: [] }]);
    const error = expectCallError((await run(fake.model)).outcome);
    expect(error).toMatchObject({ code: "MODEL_FAILED", attempts: 1, message: expect.stringContaining("empty stream") });
    expect(fake.attempts).toBe(1);
  });
});

describe("callModel: retries", () => {
  it("retries a transient error (status 503) and succeeds: exact attempt count and reports", async () => {
    const fake = fakeModel([{ error: httpError(503) }, { error: httpError(503) }, { chunks: ["fine ", "now"] }]);
    const { outcome, deltas, failures, ms } = await run(fake.model, { maxRetries: 2 });
    expect(outcome).toMatchObject({ content: "fine now" });
    expect(deltas).toEqual(["fine ", "now"]);
    expect(fake.attempts).toBe(3);
    expect(failures).toEqual([
      { attempt: 1, code: "MODEL_FAILED", message: "HTTP 503", willRetry: true },
      { attempt: 2, code: "MODEL_FAILED", message: "HTTP 503", willRetry: true },
    ]);
    // the backoffs were waited
    expect(ms).toBeGreaterThanOrEqual((MODEL_RETRY_BACKOFF_MS[0] + MODEL_RETRY_BACKOFF_MS[1]) * 0.95);
  });

  it("gives up after maxRetries + 1 attempts of a transient error", async () => {
    const fake = fakeModel([{ error: httpError(500, "boom") }]);
    const { outcome, failures } = await run(fake.model, { maxRetries: 1 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 2, message: "boom" });
    expect(fake.attempts).toBe(2);
    expect(failures.map((f) => [f.attempt, f.willRetry])).toEqual([
      [1, true],
      [2, false],
    ]);
  });

  it("makes one attempt only with maxRetries 0", async () => {
    const fake = fakeModel([{ error: httpError(503) }, { chunks: ["unused"] }]);
    const { outcome, failures } = await run(fake.model, { maxRetries: 0 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1 });
    expect(fake.attempts).toBe(1);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: "HTTP 503", willRetry: false }]);
  });

  it("never retries a 400 (nor 401, 404, 422, nor an unknown error)", async () => {
    for (const error of [httpError(400, "bad request"), httpError(401), httpError(404), httpError(422), new TypeError("x is not a function")]) {
      const fake = fakeModel([{ error }, { chunks: ["must not be reached"] }]);
      const { outcome, failures } = await run(fake.model, { maxRetries: 3 });
      expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1, message: error.message });
      expect(fake.attempts).toBe(1);
      expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: error.message, willRetry: false }]);
    }
  });

  it("retries network errors", async () => {
    const reset = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
    const fake = fakeModel([{ error: reset }, { chunks: ["reconnected"] }]);
    const { outcome } = await run(fake.model, { maxRetries: 1 });
    expect(outcome).toMatchObject({ content: "reconnected" });
    expect(fake.attempts).toBe(2);
  });

  it("never retries an attempt that already emitted a delta", async () => {
    const fake = fakeModel([{ chunks: ["half an "], error: httpError(503, "dropped") }, { chunks: ["whole answer"] }]);
    const { outcome, deltas, failures } = await run(fake.model, { maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1, message: "dropped" });
    expect(deltas).toEqual(["half an "]);
    expect(fake.attempts).toBe(1);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: "dropped", willRetry: false }]);
  });

  it("never retries an attempt that received a chunk, even one without text", async () => {
    const toolChunk = new AIMessageChunk({ content: "", tool_call_chunks: [{ type: "tool_call_chunk", index: 0, id: "c", name: "add", args: '{"a"' }] });
    const fake = fakeModel([{ chunks: [toolChunk], error: httpError(502) }, { chunks: ["unused"] }]);
    const { outcome, deltas } = await run(fake.model, { maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1 });
    expect(deltas).toEqual([]);
    expect(fake.attempts).toBe(1);
  });

  it("waits at least a 429's retry-after hint, when longer than the backoff", async () => {
    const limited = httpError(429, "slow down", { headers: new Headers({ "retry-after": "0.6" }) });
    const fake = fakeModel([{ error: limited }, { chunks: ["ok"] }]);
    const { outcome, ms } = await run(fake.model, { maxRetries: 1 });
    expect(outcome).toMatchObject({ content: "ok" });
    expect(fake.attempts).toBe(2);
    expect(ms).toBeGreaterThanOrEqual(570);
  });

  it("does not retry a 429 whose quota is exhausted", async () => {
    const fake = fakeModel([{ error: httpError(429, "You exceeded your current quota", { code: "insufficient_quota" }) }]);
    const { outcome } = await run(fake.model, { maxRetries: 2 });
    expect(expectCallError(outcome).attempts).toBe(1);
    expect(fake.attempts).toBe(1);
  });

  it("retries a scripted error turn with a transient status", async () => {
    const model = new ScriptedChatModel([{ error: "overloaded", status: 503 }, { content: "recovered" }]);
    const { outcome, failures } = await run(model as unknown as CallableModel, { maxRetries: 1 });
    expect(outcome).toMatchObject({ content: "recovered" });
    expect(model.calls).toHaveLength(2);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: "overloaded", willRetry: true }]);
  });

  it("does not retry a scripted error turn without a status", async () => {
    const model = new ScriptedChatModel([{ error: "upstream exploded" }, { content: "unused" }]);
    const { outcome } = await run(model as unknown as CallableModel, { maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1, message: "upstream exploded" });
    expect(model.calls).toHaveLength(1);
  });

  it("redacts the key patterns and the given secrets from every message", async () => {
    const fake = fakeModel([{ error: httpError(500, "bad key sk-abcdef1234567890 and my-own-secret-42") }]);
    const { outcome, failures } = await run(fake.model, { maxRetries: 1, secrets: ["my-own-secret-42"] });
    const error = expectCallError(outcome);
    for (const text of [error.message, ...failures.map((f) => f.message)]) {
      expect(text).toContain("bad key");
      expect(text).not.toMatch(/sk-abcdef1234567890|my-own-secret-42/);
    }
  });
});

describe("callModel: timeout and cancel", () => {
  it("times out a model that ignores its signal, within the timeout, as MODEL_TIMEOUT", async () => {
    const fake = fakeModel([{ hang: true }]);
    const { outcome, failures, ms } = await run(fake.model, { timeoutMs: 150, maxRetries: 0 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 1, message: expect.stringContaining("150 ms") });
    expect(ms).toBeGreaterThanOrEqual(140);
    expect(ms).toBeLessThan(1_000);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_TIMEOUT", message: expect.stringContaining("150 ms"), willRetry: false }]);
    expect(fake.signals[0]?.aborted).toBe(true);
  });

  it("retries a timed-out attempt that delivered nothing", async () => {
    const fake = fakeModel([{ hang: true }, { chunks: ["in time"] }]);
    const { outcome, failures } = await run(fake.model, { timeoutMs: 150, maxRetries: 1 });
    expect(outcome).toMatchObject({ content: "in time" });
    expect(fake.attempts).toBe(2);
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_TIMEOUT", message: expect.any(String), willRetry: true }]);
  });

  it("does not retry a timed-out attempt that delivered a delta", async () => {
    const fake = fakeModel([{ chunks: ["started "], hang: true }, { chunks: ["unused"] }]);
    const { outcome, deltas, failures } = await run(fake.model, { timeoutMs: 150, maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 1 });
    expect(deltas).toEqual(["started "]);
    expect(fake.attempts).toBe(1);
    expect(failures.map((f) => f.willRetry)).toEqual([false]);
  });

  it("treats a stream that ends quietly after the timeout as a timeout, not as the answer", async () => {
    const fake = fakeModel([{ chunks: ["partial"], endQuietlyOnAbort: true }]);
    const { outcome } = await run(fake.model, { timeoutMs: 150, maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 1 });
    expect(fake.attempts).toBe(1);
  });

  it("times out a slow scripted turn on every attempt, then fails as MODEL_TIMEOUT", async () => {
    const model = new ScriptedChatModel([{ content: "late", delay_ms: 5_000 }]);
    const { outcome, failures } = await run(model as unknown as CallableModel, { timeoutMs: 100, maxRetries: 1 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 2 });
    expect(model.calls).toHaveLength(2);
    expect(failures.map((f) => [f.attempt, f.code, f.willRetry])).toEqual([
      [1, "MODEL_TIMEOUT", true],
      [2, "MODEL_TIMEOUT", false],
    ]);
  });

  it("stops at once on cancel during an attempt, as MODEL_CANCELLED, with no attempt report", async () => {
    const model = new ScriptedChatModel([{ content: "late", delay_ms: 5_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { outcome, failures, ms } = await run(model as unknown as CallableModel, { signal: controller.signal, timeoutMs: 2_000, maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    expect(ms).toBeLessThan(1_000);
    expect(failures).toEqual([]);
    expect(model.calls).toHaveLength(1);
  });

  it("stops at once on cancel even when the model ignores its signal", async () => {
    const fake = fakeModel([{ chunks: ["some "], hang: true }]);
    const controller = new AbortController();
    const { outcome, ms } = await run(fake.model, { signal: controller.signal, onDelta: () => setTimeout(() => controller.abort(), 20) });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    expect(ms).toBeLessThan(1_000);
  });

  it("treats a stream that ends quietly after a cancel as cancelled, not as the answer", async () => {
    const fake = fakeModel([{ chunks: ["partial"], endQuietlyOnAbort: true }]);
    const controller = new AbortController();
    const { outcome } = await run(fake.model, { signal: controller.signal, onDelta: () => controller.abort() });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
  });

  it("stops during the retry wait, and makes no further attempt", async () => {
    const fake = fakeModel([{ error: httpError(503) }, { chunks: ["must not be reached"] }]);
    const controller = new AbortController();
    const { outcome, failures, ms } = await run(fake.model, {
      signal: controller.signal,
      maxRetries: 2,
      onAttemptFailed: () => controller.abort(),
    });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: "HTTP 503", willRetry: true }]);
    expect(ms).toBeLessThan(MODEL_RETRY_BACKOFF_MS[0]);
    expect(fake.attempts).toBe(1);
  });

  it("makes no attempt when the run is already cancelled", async () => {
    const fake = fakeModel([{ chunks: ["unused"] }]);
    const { outcome } = await run(fake.model, { signal: AbortSignal.abort() });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_CANCELLED", attempts: 0 });
    expect(fake.attempts).toBe(0);
  });

  it("reports an abort nobody asked for as MODEL_FAILED, not as a cancel, and does not retry it", async () => {
    const fake = fakeModel([{ error: Object.assign(new Error("Request was aborted."), { name: "AbortError" }) }, { chunks: ["unused"] }]);
    const { outcome } = await run(fake.model, { maxRetries: 2 });
    expect(expectCallError(outcome)).toMatchObject({ code: "MODEL_FAILED", attempts: 1 });
    expect(fake.attempts).toBe(1);
  });

  it("passes each attempt a signal that fires on the run's cancel", async () => {
    const fake = fakeModel([{ chunks: ["ok"] }]);
    const controller = new AbortController();
    await run(fake.model, { signal: controller.signal });
    const signal = fake.signals[0];
    expect(signal?.aborted).toBe(false);
    controller.abort();
    expect(signal?.aborted).toBe(true);
  });
});
