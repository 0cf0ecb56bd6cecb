/**
 * Which failed model calls are worth retrying (CONTRACT section 2: "retries only transient
 * errors (429, 5xx, network)"), for the one retry loop there is: `callModel` in
 * src/graph/model-call.ts, which every model goes through. Models themselves do not retry
 * (`createChatModel` builds ChatOpenAI with `maxRetries: 0`), so a failing request is retried
 * `modelMaxRetries` times, not that many times over.
 *
 * LangChain's own default handler retries too much (422, 408, 409 and any unknown error) and too
 * little (a 429 without a retry-after header is given up at once); this policy is narrower and
 * explicit. It only sees the error; `callModel` adds what the error cannot say (its own timeout
 * is transient, an attempt that already streamed output is never retried).
 */
import { classifyRateLimitError } from "@langchain/core/utils/async_caller";
import { MODEL_DEFAULTS } from "../constants.js";

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
// LangChain rewraps the SDK's APIConnectionTimeoutError as an Error named "TimeoutError"
const TRANSIENT_NAMES = new Set(["APIConnectionError", "APIConnectionTimeoutError", "TimeoutError"]);
const ABORT_NAMES = new Set(["AbortError", "APIUserAbortError", "ModelAbortError"]);

/**
 * True for failures a retry may fix: HTTP 429 (unless the quota is exhausted or the server asks
 * for a wait longer than `MODEL_DEFAULTS.maxRetryAfterMs`), any 5xx, connection failures and
 * request timeouts. False for aborts, every other HTTP status (400, 401, 403, 404, 422, …) and
 * anything unrecognised (a bug does not go away by retrying).
 */
export function isTransientModelError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, status, code } = describe(error);
  if (name !== undefined && ABORT_NAMES.has(name)) return false;
  if (status !== undefined) {
    if (status === 429) return rateLimitRetryable(error);
    return status >= 500 && status <= 599;
  }
  if (name !== undefined && TRANSIENT_NAMES.has(name)) return true;
  const causeCode = describe((error as { cause?: unknown }).cause).code;
  return [code, causeCode].some((c) => c !== undefined && NETWORK_CODES.has(c));
}

/**
 * How long a 429 asks to wait before the next attempt (its retry-after header, or a "try again
 * in N s" message), in ms; undefined for anything else or a 429 without a hint. `callModel` waits
 * at least this long (an error this returns more than `MODEL_DEFAULTS.maxRetryAfterMs` for is
 * not transient, so never waited for).
 */
export function retryAfterHintMs(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  return classifyRateLimitError(error)?.retryAfterMs;
}

function rateLimitRetryable(error: object): boolean {
  const rateLimit = classifyRateLimitError(error);
  if (rateLimit === undefined) return true;
  if (rateLimit.action === "stop") return false;
  return rateLimit.retryAfterMs === undefined || rateLimit.retryAfterMs <= MODEL_DEFAULTS.maxRetryAfterMs;
}

function describe(value: unknown): { name?: string; status?: number; code?: string } {
  if (typeof value !== "object" || value === null) return {};
  const record = value as { name?: unknown; status?: unknown; code?: unknown; response?: { status?: unknown }; constructor?: { name?: unknown } };
  const ownName = typeof record.name === "string" && record.name !== "Error" ? record.name : undefined;
  const status = typeof record.status === "number" ? record.status : typeof record.response?.status === "number" ? record.response.status : undefined;
  return {
    name: ownName ?? (typeof record.constructor?.name === "string" ? record.constructor.name : undefined),
    status,
    code: typeof record.code === "string" ? record.code : undefined,
  };
}
