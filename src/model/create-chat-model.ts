/**
 * The chat model the configuration asks for (CONTRACT section 2, DEVMIND_MODEL): `ChatOpenAI`
 * for any OpenAI-compatible server, or the scripted model read from a file.
 *
 * How the OpenAI client is set up, and why:
 * - everything comes from `config`, passed explicitly (base URL included), so variables that
 *   LangChain would read on its own (OPENAI_API_KEY, OPENAI_BASE_URL, LANGSMITH_GATEWAY) change
 *   nothing behind the config module's back;
 * - streamed through `.stream()`: the graph's `callModel` calls `.stream()` and aggregates with
 *   `concat`, and ChatOpenAI's `.stream()` streams (token deltas, then a usage chunk thanks to
 *   `streamUsage: true`) whatever its `streaming` field says. `streaming` is left unset on
 *   purpose: `streaming: true` would make `.invoke()` estimate tokens with tiktoken, which
 *   downloads its encodings (and hangs offline), and an explicit `streaming: false` would turn
 *   `.stream()` into a single non-streamed call (LangChain reads it as `disableStreaming`);
 * - no retries here (`maxRetries: 0`; ChatOpenAI keeps the openai SDK's own retries off too):
 *   every retry happens in `callModel`, the one retry policy for every model (see
 *   retry-policy.ts), so a failing request is retried `modelMaxRetries` times, not that squared;
 * - timeouts: the SDK aborts a request whose headers take longer than `modelTimeoutMs`, and
 *   `withResponseDeadline` fails a response whose body is not complete by then. `callModel`
 *   bounds each attempt with its own timeout too (and decides what is retried).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { describeModelRequirement, type DevmindConfig } from "../config.js";
import { MODEL_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";
import { withResponseDeadline, type FetchLike } from "./response-deadline.js";
import { scriptedModelFromFile } from "./scripted-model.js";

/** Options of `createChatModel`. */
export interface CreateChatModelOptions {
  /** The fetch the OpenAI client uses (default: the global `fetch`, looked up at each request). */
  fetch?: FetchLike;
}

/**
 * Builds the configured chat model. Throws `ConfigError` (exit 2) when no model is configured
 * (the message says what to set) or when `openai:NAME` has neither an API key nor a base URL;
 * `ModelError` `SCRIPT_INVALID` when a `scripted:PATH` file is missing or invalid.
 *
 * The model makes one request per call and never retries: call it through the graph's
 * `callModel`, which retries transient failures up to `config.modelMaxRetries` times.
 *
 * @example
 * const config = loadConfig();
 * const model = createChatModel(config).bindTools!(tools);
 * const reply = await callModel(model, messages, { timeoutMs: config.modelTimeoutMs, maxRetries: config.modelMaxRetries, signal });
 */
export function createChatModel(config: DevmindConfig, options: CreateChatModelOptions = {}): BaseChatModel {
  const spec = config.model;
  if (spec === null) throw new ConfigError(describeModelRequirement(), { variables: ["DEVMIND_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"] });
  if (spec.provider === "scripted") return scriptedModelFromFile(spec.path);
  return createOpenAiModel(config, spec.name, options);
}

function createOpenAiModel(config: DevmindConfig, name: string, options: CreateChatModelOptions): ChatOpenAI {
  const { apiKey, baseUrl } = config.openai;
  if (apiKey === undefined && baseUrl === undefined) {
    throw new ConfigError(
      `DEVMIND_MODEL=openai:${name} needs OPENAI_API_KEY (or LLM_API_KEY), or OPENAI_BASE_URL (or LLM_BASE_URL) for a local server that needs no key.`,
      { variables: ["OPENAI_API_KEY", "OPENAI_BASE_URL"] },
    );
  }
  const baseFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return new ChatOpenAI({
    model: name,
    apiKey: apiKey ?? MODEL_DEFAULTS.placeholderApiKey,
    configuration: {
      baseURL: baseUrl ?? MODEL_DEFAULTS.openaiBaseUrl,
      fetch: withResponseDeadline(baseFetch, config.modelTimeoutMs),
    },
    timeout: config.modelTimeoutMs,
    streamUsage: true,
    maxRetries: 0,
  });
}
