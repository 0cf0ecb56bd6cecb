import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { SERVER_DEFAULTS } from "../constants.js";
import { DevmindError, HttpRequestError } from "../errors.js";

/** HTTP status per error code; a user error not listed is 400, a system error 500. */
const STATUS_BY_CODE: Partial<Record<string, ContentfulStatusCode>> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  THREAD_NOT_FOUND: 404,
  ASSISTANT_NOT_FOUND: 404,
  GRAPH_NOT_FOUND: 404,
  RUN_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  BAD_REQUEST: 400,
  REQUEST_INVALID: 422,
  RUN_INPUT_INVALID: 422,
  CONFIG_INVALID: 422,
  STORE_INPUT_INVALID: 422,
  DATABASE_UNREACHABLE: 503,
  DATABASE_WRITE_FAILED: 503,
};

/** The status and JSON body (`{"error": CODE, "message": TEXT}`) an error answers with. */
export function errorBody(error: unknown): { status: ContentfulStatusCode; body: { error: string; message: string } } {
  if (error instanceof DevmindError) {
    const status = STATUS_BY_CODE[error.code] ?? (error.kind === "system" ? 500 : 400);
    // a system error's text may name internals; the log has it, the client gets the code
    const message = status === 503 ? "the database is unavailable; retry shortly" : status >= 500 ? "the server could not complete the request" : error.message;
    return { status, body: { error: error.code, message } };
  }
  return { status: 500, body: { error: "INTERNAL_ERROR", message: "the server could not complete the request" } };
}

/** Answers `c` with the error's status and body; a 503 (the database is away) says when to retry. */
export function errorResponse(c: Context, error: unknown): Response {
  const { status, body } = errorBody(error);
  if (status === 503) c.header("Retry-After", String(SERVER_DEFAULTS.retryAfterSeconds));
  return c.json(body, status);
}

/** Shorthand for the server's own refusals. */
export function httpError(code: "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "BAD_REQUEST" | "REQUEST_INVALID" | "PAYLOAD_TOO_LARGE", message: string, details: Record<string, unknown> = {}): HttpRequestError {
  return new HttpRequestError(code, message, { details });
}
