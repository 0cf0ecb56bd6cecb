/**
 * The real ChatOpenAI, built by createChatModel, against a local OpenAI-compatible server, called
 * the way the graph calls every model: through `callModel` (src/graph/model-call.ts), which
 * streams, aggregates, bounds each attempt and owns the only retry loop. Proven at the server:
 * streamed content and tool-call deltas, parallel calls, malformed arguments, usage, finish
 * reasons, retries counted request by request (the model itself never retries), timeouts,
 * cancels, and no API key in any error. A guard on the global fetch fails any request that is
 * not for the local server (so a tokenizer download would be caught, not waited for).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI, OpenAIClient } from "@langchain/openai";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { describeModelRequirement, loadConfig, type DevmindConfig } from "../../src/config.js";
import { ConfigError, ModelError } from "../../src/errors.js";
import { callModel, ModelCallError, type CallableModel, type ModelAttemptFailure } from "../../src/graph/model-call.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { classifyModelError } from "../../src/model/model-errors.js";
import { redactSecrets } from "../../src/secret-redaction.js";
import { isTransientModelError, retryAfterHintMs } from "../../src/model/retry-policy.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { errorReply, OpenAiTestServer, slowReply, stalledReply, textReply, toolCallReply } from "../helpers/openai-server.js";

// the openai SDK's own error classes, as @langchain/openai re-exports them
const { APIConnectionTimeoutError, APIUserAbortError } = OpenAIClient;
const API_KEY = "sk-test-Q7xL2vN9pR4tW8yZ1aB3cD5e";
const server = new OpenAiTestServer();
const realFetch = globalThis.fetch;
const foreignRequests: string[] = [];

beforeAll(async () => {
  await server.start();
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(server.baseUrl)) {
      foreignRequests.push(url);
      throw new TypeError(`test guard: no network beyond the local server (${url})`);
    }
    return realFetch(input, init);
  };
});

afterAll(async () => {
  globalThis.fetch = realFetch;
  await server.close();
});

beforeEach(() => server.reset());
afterEach(() => expect(foreignRequests).toEqual([]));

function config(env: Record<string, string> = {}): DevmindConfig {
  return loadConfig({
    OPENAI_BASE_URL: server.baseUrl,
    OPENAI_API_KEY: API_KEY,
    OPENAI_MODEL: "test-model",
    DEVMIND_MODEL_TIMEOUT_MS: "5000",
    DEVMIND_MODEL_MAX_RETRIES: "2",
    ...env,
  });
}

interface CallExtras {
  signal?: AbortSignal;
  /** Called with each failed attempt (after it is recorded), e.g. to cancel during the retry wait. */
  onAttemptFailed?: (info: ModelAttemptFailure) => void;
  /** Called with each delta (after it is recorded), e.g. to cancel mid-stream. */
  onDelta?: (text: string) => void;
}

/**
 * One call the way the graph makes it: `callModel` with the config's timeout and retries, the
 * key as a known secret. Records the deltas and failed attempts it saw, and how long it took.
 */
async function call(model: unknown, cfg: DevmindConfig = config(), extras: CallExtras = {}) {
  const deltas: string[] = [];
  const failures: ModelAttemptFailure[] = [];
  const started = performance.now();
  let message;
  let error: unknown;
  try {
    message = await callModel(model as CallableModel, [new HumanMessage("hi")], {
      timeoutMs: cfg.modelTimeoutMs,
      maxRetries: cfg.modelMaxRetries,
      signal: extras.signal,
      secrets: [API_KEY],
      onDelta: (text) => {
        deltas.push(text);
        extras.onDelta?.(text);
      },
      onAttemptFailed: (info) => {
        failures.push(info);
        extras.onAttemptFailed?.(info);
      },
    });
  } catch (caught) {
    error = caught;
  }
  return { message, error, deltas, failures, ms: performance.now() - started };
}

/** A call expected to succeed: its message (and what `call` records). */
async function success(model: unknown, cfg?: DevmindConfig, extras?: CallExtras) {
  const result = await call(model, cfg, extras);
  if (result.message === undefined) throw result.error;
  return { ...result, message: result.message };
}

/** A call expected to fail with a ModelCallError: the error (and what `call` records). */
async function failure(model: unknown, cfg?: DevmindConfig, extras?: CallExtras) {
  const result = await call(model, cfg, extras);
  if (result.message !== undefined) throw new Error(`expected the model call to fail, it answered ${JSON.stringify(result.message.content)}`);
  expect(result.error).toBeInstanceOf(ModelCallError);
  return { ...result, error: result.error as ModelCallError };
}

function expectNoKey(error: ModelCallError, failures: ModelAttemptFailure[] = []): void {
  expect(error.message).not.toContain(API_KEY);
  expect(String(error.stack)).not.toContain(API_KEY);
  for (const info of failures) expect(info.message).not.toContain(API_KEY);
}

const addTool = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: "add",
  description: "Adds two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

describe("createChatModel", () => {
  it("builds a ChatOpenAI for openai:NAME that never retries and leaves `streaming` unset", () => {
    const model = createChatModel(config({ DEVMIND_MODEL: "openai:gpt-test" }));
    expect(model).toBeInstanceOf(ChatOpenAI);
    const openai = model as ChatOpenAI;
    expect(openai.model).toBe("gpt-test");
    // `.invoke()` must not stream (tiktoken estimation); `.stream()` must (disableStreaming off)
    expect(openai.streaming).toBe(false);
    expect(openai.disableStreaming).toBe(false);
    expect(openai.streamUsage).toBe(true);
    expect((openai as unknown as { caller: { maxRetries: number } }).caller.maxRetries).toBe(0);
  });

  it("makes exactly one request per call on its own: no client-side retries", async () => {
    server.enqueue(errorReply(500, "boom"), textReply(["must not be reached"]));
    const model = createChatModel(config({ DEVMIND_MODEL_MAX_RETRIES: "5" }));
    await expect(async () => {
      for await (const _chunk of await model.stream([new HumanMessage("hi")])) {
        // drain
      }
    }).rejects.toMatchObject({ status: 500 });
    expect(server.requests).toHaveLength(1);
  }, 10_000);

  it("builds a ScriptedChatModel for scripted:PATH", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-wire-"));
    try {
      const path = join(dir, "script.json");
      writeFileSync(path, JSON.stringify([{ content: "scripted hello" }]));
      const model = createChatModel(loadConfig({ DEVMIND_MODEL: `scripted:${path}` }));
      expect(model).toBeInstanceOf(ScriptedChatModel);
      expect((await success(model)).message.content).toBe("scripted hello");
      expect(() => createChatModel(loadConfig({ DEVMIND_MODEL: `scripted:${join(dir, "missing.json")}` }))).toThrow(ModelError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("throws a ConfigError saying what to set when no model is configured", () => {
    expect(() => createChatModel(loadConfig({}))).toThrow(ConfigError);
    expect(() => createChatModel(loadConfig({}))).toThrow(describeModelRequirement());
    expect(() => createChatModel(loadConfig({ DEVMIND_MODEL: "openai:gpt-x" }))).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL/);
  });

  it("sends a placeholder key when only a base URL is configured", async () => {
    server.enqueue(textReply(["local"]));
    const cfg = loadConfig({ OPENAI_BASE_URL: server.baseUrl });
    expect((await success(createChatModel(cfg), cfg)).message.content).toBe("local");
    expect(server.requests[0]?.authorization).toBe(true);
  });
});

describe("ChatOpenAI through callModel: streaming", () => {
  it("delivers content deltas to onDelta as several pieces that join, with stream options and the key sent", async () => {
    server.enqueue(textReply(["Hel", "lo, ", "wor", "ld"]));
    const { message, deltas, failures } = await success(createChatModel(config()));
    expect(deltas).toEqual(["Hel", "lo, ", "wor", "ld"]);
    expect(message.content).toBe("Hello, world");
    expect(message.response_metadata["finish_reason"]).toBe("stop");
    expect(failures).toEqual([]);
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request).toMatchObject({ method: "POST", path: "/v1/chat/completions", authorization: true });
    expect(JSON.stringify(request?.headers)).not.toContain(API_KEY);
    expect(request?.body).toMatchObject({ model: "test-model", stream: true, stream_options: { include_usage: true } });
  });

  it("joins tool-call argument deltas into tool_calls with parsed args and the server's id", async () => {
    server.enqueue(toolCallReply([{ id: "call_abc", name: "add", argumentParts: ['{"a"', ": 1, ", '"b": ', "2}"] }]));
    const model = createChatModel(config()).bindTools!([addTool]);
    const { message, deltas } = await success(model);
    expect(deltas).toEqual([]);
    expect(message.tool_calls).toEqual([{ type: "tool_call", id: "call_abc", name: "add", args: { a: 1, b: 2 } }]);
    expect(message.invalid_tool_calls).toEqual([]);
    expect(message.response_metadata["finish_reason"]).toBe("tool_calls");
    const body = server.requests[0]?.body as { tools: unknown[] };
    expect(body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "add",
          description: "Adds two numbers.",
          parameters: expect.objectContaining({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] }),
        },
      },
    ]);
  });

  it("separates two parallel tool calls whose deltas interleave", async () => {
    server.enqueue(
      toolCallReply(
        [
          { id: "call_one", name: "add", argumentParts: ['{"a": ', "1, ", '"b": 2}'] },
          { id: "call_two", name: "get_current_time", argumentParts: ['{"time', 'zone": "Eur', 'ope/Paris"}'] },
        ],
        { interleave: true, content: ["Checking ", "both."] },
      ),
    );
    const { message, deltas } = await success(createChatModel(config()));
    expect(deltas).toEqual(["Checking ", "both."]);
    expect(message.content).toBe("Checking both.");
    expect(message.tool_calls).toEqual([
      { type: "tool_call", id: "call_one", name: "add", args: { a: 1, b: 2 } },
      { type: "tool_call", id: "call_two", name: "get_current_time", args: { timezone: "Europe/Paris" } },
    ]);
  });

  it("puts malformed argument JSON into invalid_tool_calls, next to a valid call", async () => {
    server.enqueue(
      toolCallReply([
        { id: "call_ok", name: "add", argumentParts: ['{"a": 1, "b": 2}'] },
        { id: "call_bad", name: "add", argumentParts: ['{"a": 1', ',, "b": }'] },
      ]),
    );
    const { message } = await success(createChatModel(config()));
    expect(message.tool_calls?.map((c) => c.id)).toEqual(["call_ok"]);
    expect(message.invalid_tool_calls).toEqual([expect.objectContaining({ id: "call_bad", name: "add", args: '{"a": 1,, "b": }', error: expect.any(String) })]);
  });

  it("turns the final usage chunk into usage_metadata", async () => {
    server.enqueue(textReply(["counted"], { usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } }));
    const { message } = await success(createChatModel(config()));
    expect(message.usage_metadata).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
  });

  it('shows finish_reason "length" in response_metadata', async () => {
    server.enqueue(textReply(["cut sh"], { finishReason: "length" }));
    const { message } = await success(createChatModel(config()));
    expect(message.content).toBe("cut sh");
    expect(message.response_metadata["finish_reason"]).toBe("length");
  });
});

describe("ChatOpenAI through callModel: retries and failures", () => {
  it("retries a 429 and succeeds: exactly 2 requests (also after bindTools)", async () => {
    server.enqueue(errorReply(429, "Rate limit reached, slow down", { "retry-after": "0" }), textReply(["after the limit"]));
    const { message, failures, deltas } = await success(createChatModel(config()).bindTools!([addTool]));
    expect(message.content).toBe("after the limit");
    expect(deltas.join("")).toBe("after the limit");
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: expect.stringContaining("Rate limit"), willRetry: true }]);
    expect(server.requests).toHaveLength(2);
    expect(server.pending).toBe(0);
  }, 10_000);

  it("waits at least a 429's retry-after hint before retrying", async () => {
    server.enqueue(errorReply(429, "Rate limit reached", { "retry-after": "1" }), textReply(["waited"]));
    const { message, ms } = await success(createChatModel(config()));
    expect(message.content).toBe("waited");
    // the hint (1 s) is longer than the first backoff (200 ms)
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3_000);
    expect(server.requests).toHaveLength(2);
  }, 10_000);

  it("gives up on repeated 500s after exactly modelMaxRetries + 1 requests, as MODEL_FAILED", async () => {
    server.enqueue(errorReply(500, "boom"), errorReply(500, "boom"), errorReply(500, "boom"), textReply(["too late"]));
    const cfg = config({ DEVMIND_MODEL_MAX_RETRIES: "2" });
    const { error, failures } = await failure(createChatModel(cfg), cfg);
    expect(server.requests).toHaveLength(3);
    expect(server.pending).toBe(1);
    expect(error).toMatchObject({ code: "MODEL_FAILED", attempts: 3, message: expect.stringContaining("boom") });
    expect(failures.map((f) => [f.attempt, f.code, f.willRetry])).toEqual([
      [1, "MODEL_FAILED", true],
      [2, "MODEL_FAILED", true],
      [3, "MODEL_FAILED", false],
    ]);
    expectNoKey(error, failures);
  }, 10_000);

  it("never retries 400, 401, 403, 404 or 422", async () => {
    for (const status of [400, 401, 403, 404, 422]) {
      server.reset();
      server.enqueue(errorReply(status, `refused with ${status}`), textReply(["must not be reached"]));
      const { error, failures } = await failure(createChatModel(config()));
      expect(server.requests, `status ${status}`).toHaveLength(1);
      expect(error).toMatchObject({ code: "MODEL_FAILED", attempts: 1, message: expect.stringContaining(`refused with ${status}`) });
      expect(failures).toEqual([{ attempt: 1, code: "MODEL_FAILED", message: error.message, willRetry: false }]);
      expectNoKey(error, failures);
    }
  }, 10_000);

  it("retries network errors too (counted at the fetch), then fails", async () => {
    const closed = new OpenAiTestServer();
    const baseUrl = await closed.start();
    await closed.close();
    let attempts = 0;
    const counting = (input: string | URL | Request, init?: RequestInit) => {
      attempts += 1;
      return realFetch(input, init);
    };
    const cfg = loadConfig({ OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: API_KEY, DEVMIND_MODEL_MAX_RETRIES: "1" });
    const { error, failures } = await failure(createChatModel(cfg, { fetch: counting }), cfg);
    expect(attempts).toBe(2);
    expect(error).toMatchObject({ code: "MODEL_FAILED", attempts: 2 });
    expect(failures.map((f) => f.willRetry)).toEqual([true, false]);
    expectNoKey(error, failures);
  }, 10_000);

  it("fails a reply slower than the timeout within the timeout, as MODEL_TIMEOUT, not retried with 0 retries", async () => {
    server.enqueue(slowReply(5_000), textReply(["must not be reached"]));
    const cfg = config({ DEVMIND_MODEL_TIMEOUT_MS: "300", DEVMIND_MODEL_MAX_RETRIES: "0" });
    const { error, ms, failures } = await failure(createChatModel(cfg), cfg);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 1, message: expect.stringContaining("300 ms") });
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_TIMEOUT", message: error.message, willRetry: false }]);
    expectNoKey(error);
  }, 10_000);

  it("retries a timed-out request like any transient error", async () => {
    server.enqueue(slowReply(5_000), slowReply(5_000), textReply(["unused"]));
    const cfg = config({ DEVMIND_MODEL_TIMEOUT_MS: "300", DEVMIND_MODEL_MAX_RETRIES: "1" });
    const { error, ms, failures } = await failure(createChatModel(cfg), cfg);
    expect(server.requests).toHaveLength(2);
    // two 300 ms attempts and one 200 ms backoff
    expect(ms).toBeGreaterThanOrEqual(750);
    expect(ms).toBeLessThan(3_000);
    expect(error).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 2 });
    expect(failures.map((f) => [f.code, f.willRetry])).toEqual([
      ["MODEL_TIMEOUT", true],
      ["MODEL_TIMEOUT", false],
    ]);
  }, 10_000);

  it("retries a timed-out request, then succeeds", async () => {
    server.enqueue(slowReply(5_000), textReply(["second time lucky"]));
    const cfg = config({ DEVMIND_MODEL_TIMEOUT_MS: "300", DEVMIND_MODEL_MAX_RETRIES: "1" });
    const { message, deltas } = await success(createChatModel(cfg), cfg);
    expect(message.content).toBe("second time lucky");
    expect(deltas.join("")).toBe("second time lucky");
    expect(server.requests).toHaveLength(2);
  }, 10_000);

  it("fails a response that stalls after its first deltas as MODEL_TIMEOUT, without retrying it", async () => {
    server.enqueue(stalledReply(["partial ", "answer"]), textReply(["must not be reached"]));
    const cfg = config({ DEVMIND_MODEL_TIMEOUT_MS: "400", DEVMIND_MODEL_MAX_RETRIES: "2" });
    const { error, ms, deltas, failures } = await failure(createChatModel(cfg), cfg);
    expect(deltas).toEqual(["partial ", "answer"]);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: "MODEL_TIMEOUT", attempts: 1, message: expect.stringContaining("400 ms") });
    expect(failures).toEqual([{ attempt: 1, code: "MODEL_TIMEOUT", message: error.message, willRetry: false }]);
  }, 10_000);

  it("stops at once when the caller cancels during a request, as MODEL_CANCELLED, and sends nothing more", async () => {
    server.enqueue(slowReply(5_000), textReply(["must not be reached"]));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const { error, ms, failures } = await failure(createChatModel(config()), config(), { signal: controller.signal });
    expect(ms).toBeLessThan(1_000);
    expect(error).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    expect(failures).toEqual([]);
    // longer than the first backoff: a retry would have reached the server by now
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.requests).toHaveLength(1);
  }, 10_000);

  it("stops at once when the caller cancels mid-stream, as MODEL_CANCELLED", async () => {
    server.enqueue(stalledReply(["half"]), textReply(["must not be reached"]));
    const controller = new AbortController();
    const { error, ms, deltas } = await failure(createChatModel(config()), config(), { signal: controller.signal, onDelta: () => controller.abort() });
    expect(deltas).toEqual(["half"]);
    expect(ms).toBeLessThan(1_000);
    expect(error).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.requests).toHaveLength(1);
  }, 10_000);

  it("stops at once when cancelled while waiting to retry, and sends no further request", async () => {
    // the 2 s hint makes the wait long; the cancel comes as soon as it starts
    server.enqueue(errorReply(429, "Rate limit reached", { "retry-after": "2" }), textReply(["must not be reached"]));
    const controller = new AbortController();
    const { error, ms, failures } = await failure(createChatModel(config()), config(), {
      signal: controller.signal,
      onAttemptFailed: (info) => info.willRetry && setTimeout(() => controller.abort(), 50),
    });
    expect(failures.map((f) => f.willRetry)).toEqual([true]);
    expect(ms).toBeLessThan(1_000);
    expect(error).toMatchObject({ code: "MODEL_CANCELLED", attempts: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect(server.requests).toHaveLength(1);
  }, 10_000);

  it("keeps a key echoed by the server out of the ModelCallError", async () => {
    server.enqueue(errorReply(401, `Incorrect API key provided: ${API_KEY}. Authorization: Bearer ${API_KEY}`));
    const { error, failures } = await failure(createChatModel(config()));
    expect(server.requests).toHaveLength(1);
    expect(error.code).toBe("MODEL_FAILED");
    expect(error.message).toContain("Incorrect API key provided");
    expectNoKey(error, failures);
  }, 10_000);

  it("keeps a key that matches no pattern out too, when it is passed as a secret", async () => {
    const oddKey = "local-9f8e7d6c5b4a";
    server.enqueue(errorReply(500, `upstream rejected key ${oddKey}`));
    const cfg = config({ OPENAI_API_KEY: oddKey, DEVMIND_MODEL_MAX_RETRIES: "0" });
    const message = await callModel(createChatModel(cfg), [new HumanMessage("hi")], { timeoutMs: cfg.modelTimeoutMs, maxRetries: 0, secrets: [oddKey] }).catch((e: unknown) => e);
    expect(message).toBeInstanceOf(ModelCallError);
    expect((message as ModelCallError).message).toContain("upstream rejected key");
    expect((message as ModelCallError).message).not.toContain(oddKey);
  }, 10_000);
});

describe("classifyModelError and the retry policy", () => {
  it("classifies the shapes errors arrive in", () => {
    const wrappedTimeout = Object.assign(new Error("Request timed out."), { name: "TimeoutError" });
    const timeoutSignal = AbortSignal.abort(new DOMException("signal timed out", "TimeoutError"));
    const cancelSignal = AbortSignal.abort();
    expect(classifyModelError(new APIConnectionTimeoutError()).code).toBe("MODEL_TIMEOUT");
    expect(classifyModelError(wrappedTimeout).code).toBe("MODEL_TIMEOUT");
    expect(classifyModelError(new DOMException("signal timed out", "TimeoutError")).code).toBe("MODEL_TIMEOUT");
    expect(classifyModelError(new Error("AbortError"), { signal: timeoutSignal }).code).toBe("MODEL_TIMEOUT");
    expect(classifyModelError(new Error("wrapped", { cause: new DOMException("t", "TimeoutError") })).code).toBe("MODEL_TIMEOUT");
    expect(classifyModelError(new APIUserAbortError()).code).toBe("MODEL_CANCELLED");
    expect(classifyModelError(new Error("AbortError")).code).toBe("MODEL_CANCELLED");
    expect(classifyModelError(new Error("anything"), { signal: cancelSignal }).code).toBe("MODEL_CANCELLED");
    expect(classifyModelError(Object.assign(new Error("500 boom"), { status: 500 })).code).toBe("MODEL_FAILED");
    expect(classifyModelError("a string").message).toBe("a string");
  });

  it("redacts keys and tokens", () => {
    const text = redactSecrets(`sk-proj-abcdef123456 Bearer abc.def-ghi_123 {"api_key": "hunter22"} ?key=xyz123 my-local-secret`, ["my-local-secret"]);
    expect(text).not.toMatch(/abcdef123456|abc\.def-ghi_123|hunter22|xyz123|my-local-secret/);
    expect(text).toContain("Bearer [REDACTED]");
  });

  it("reads a 429's retry-after hint", () => {
    const limited = (headers: Record<string, string>) => Object.assign(new Error("429"), { status: 429, headers: new Headers(headers) });
    expect(retryAfterHintMs(limited({ "retry-after": "3" }))).toBe(3_000);
    expect(retryAfterHintMs(limited({ "retry-after": "0" }))).toBe(0);
    expect(retryAfterHintMs(limited({}))).toBeUndefined();
    expect(retryAfterHintMs(Object.assign(new Error("500"), { status: 500, headers: new Headers({ "retry-after": "3" }) }))).toBeUndefined();
    expect(retryAfterHintMs("nope")).toBeUndefined();
  });

  it("treats only 429, 5xx, network errors and timeouts as transient", () => {
    const status = (s: number, extra: object = {}) => Object.assign(new Error(`${s}`), { status: s, ...extra });
    expect([429, 500, 502, 503, 504].map((s) => isTransientModelError(status(s)))).toEqual([true, true, true, true, true]);
    expect([400, 401, 403, 404, 408, 409, 422].map((s) => isTransientModelError(status(s)))).toEqual(Array(7).fill(false));
    expect(isTransientModelError(status(429, { code: "insufficient_quota" }))).toBe(false);
    expect(isTransientModelError(status(429, { headers: new Headers({ "retry-after": "3600" }) }))).toBe(false);
    expect(isTransientModelError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(true);
    expect(isTransientModelError(new APIConnectionTimeoutError())).toBe(true);
    expect(isTransientModelError(new APIUserAbortError())).toBe(false);
    expect(isTransientModelError(new TypeError("undefined is not a function"))).toBe(false);
  });
});
