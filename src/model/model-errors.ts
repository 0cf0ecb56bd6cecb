/**
 * Turning whatever a chat model call threw into one of the three outcomes a run records
 * (CONTRACT section 3 stop reasons `model_timeout`, `model_failed`, `cancelled`), with a message
 * that is safe to store and show: API keys and bearer tokens are removed.
 *
 * Errors arrive in many shapes: the openai SDK's classes (APIConnectionTimeoutError,
 * APIUserAbortError, APIError with `status`), LangChain's rewraps of them (a plain Error named
 * "TimeoutError" or "AbortError", `new Error("AbortError")` when a stream was aborted,
 * ModelAbortError), DOMExceptions from AbortSignal (`TimeoutError`, `AbortError`), undici's
 * network errors, and our own `ModelError`s. Classification looks at names and codes along the
 * `cause` chain, never at translated text.
 */
import { MODEL_DEFAULTS } from "../constants.js";
import { DevmindError } from "../errors.js";
import { redactSecrets } from "../secret-redaction.js";

/** The outcome codes of a failed model call. */
export type ModelErrorCode = "MODEL_TIMEOUT" | "MODEL_FAILED" | "MODEL_CANCELLED";

/** A classified model failure: a code to branch on and a redacted message to store. */
export interface ClassifiedModelError {
  code: ModelErrorCode;
  message: string;
}

/** Optional context that makes the classification exact. */
export interface ClassifyContext {
  /**
   * The AbortSignal the call was made with. When it has fired, its reason decides: a
   * TimeoutError (as from `AbortSignal.timeout`) means MODEL_TIMEOUT, anything else
   * MODEL_CANCELLED. Needed because some layers drop the reason (LangChain ends an aborted stream
   * with `new Error("AbortError")`).
   */
  signal?: AbortSignal;
  /** Exact secrets (e.g. the configured API key) to remove from the message besides the usual patterns. */
  secrets?: readonly string[];
}

const TIMEOUT_NAMES = new Set(["TimeoutError", "APIConnectionTimeoutError", "ConnectTimeoutError", "HeadersTimeoutError", "BodyTimeoutError"]);
const TIMEOUT_CODES = new Set(["ETIMEDOUT", "ESOCKETTIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const ABORT_NAMES = new Set(["AbortError", "APIUserAbortError", "ModelAbortError"]);
// messages LangChain and core use for aborts that carry no usable name
const ABORT_MESSAGES = new Set(["AbortError", "Aborted", "This operation was aborted"]);
const MAX_CAUSE_DEPTH = 8;

/**
 * Classifies a failed model call: MODEL_TIMEOUT (a timeout anywhere in the cause chain, or the
 * call's signal fired with a TimeoutError), MODEL_CANCELLED (an abort that is not a timeout),
 * or MODEL_FAILED (everything else: HTTP errors, network errors, scripted errors, bugs).
 * The message is redacted (`redactSecrets` of src/secret-redaction.ts) and bounded.
 *
 * @example
 * try { await model.stream(messages, { signal }); }
 * catch (error) { const { code, message } = classifyModelError(error, { signal, secrets: [apiKey] }); }
 */
export function classifyModelError(error: unknown, context: ClassifyContext = {}): ClassifiedModelError {
  const code = classify(error, context.signal);
  const text = redactSecrets(describeError(error, code), context.secrets);
  const max = MODEL_DEFAULTS.errorMessageMaxChars;
  return { code, message: text.length > max ? `${text.slice(0, max - 1)}…` : text };
}

function classify(error: unknown, signal: AbortSignal | undefined): ModelErrorCode {
  if (signal?.aborted === true) return isTimeout(signal.reason) ? "MODEL_TIMEOUT" : "MODEL_CANCELLED";
  const chain = causeChain(error);
  if (error instanceof DevmindError) {
    if (error.code === "MODEL_TIMEOUT" || error.code === "MODEL_CANCELLED") return error.code;
    if (error.code === "RUN_CANCELLED") return "MODEL_CANCELLED";
  }
  if (chain.some(isTimeout)) return "MODEL_TIMEOUT";
  if (chain.some(isAbort)) return "MODEL_CANCELLED";
  return "MODEL_FAILED";
}

function isTimeout(value: unknown): boolean {
  if (value instanceof DevmindError) return value.code === "MODEL_TIMEOUT";
  const { name, code } = fields(value);
  return (name !== undefined && TIMEOUT_NAMES.has(name)) || (code !== undefined && TIMEOUT_CODES.has(code));
}

function isAbort(value: unknown): boolean {
  if (value instanceof DevmindError) return value.code === "MODEL_CANCELLED" || value.code === "RUN_CANCELLED";
  const { name, message } = fields(value);
  return (name !== undefined && ABORT_NAMES.has(name)) || (message !== undefined && ABORT_MESSAGES.has(message));
}

function fields(value: unknown): { name?: string; code?: string; message?: string } {
  if (typeof value !== "object" || value === null) return {};
  const record = value as { name?: unknown; code?: unknown; message?: unknown; constructor?: { name?: unknown } };
  const ownName = typeof record.name === "string" && record.name !== "Error" ? record.name : undefined;
  const className = typeof record.constructor?.name === "string" ? record.constructor.name : undefined;
  return {
    name: ownName ?? className,
    code: typeof record.code === "string" ? record.code : undefined,
    message: typeof record.message === "string" ? record.message : undefined,
  };
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < MAX_CAUSE_DEPTH && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function describeError(error: unknown, code: ModelErrorCode): string {
  const base = error instanceof Error ? error.message : typeof error === "string" ? error : safeJson(error);
  const cause = error instanceof Error && error.cause instanceof Error && error.cause.message !== base ? `: ${error.cause.message}` : "";
  const text = `${base}${cause}`.trim();
  if (code === "MODEL_TIMEOUT") return text === "" ? "the model call timed out" : `the model call timed out (${text})`;
  if (code === "MODEL_CANCELLED") return "the model call was cancelled";
  return text === "" ? "the model call failed" : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
