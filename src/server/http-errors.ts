import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { SERVER_DEFAULTS } from "../constants.js";
import { AuthRefusalError, DevmindError, HttpRequestError } from "../errors.js";
import { routeFamily } from "./route-family.js";

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
  GRAPH_LOAD_FAILED: 422,
  STORE_INPUT_INVALID: 422,
  DATABASE_UNREACHABLE: 503,
  DATABASE_WRITE_FAILED: 503,
};

/** The status and JSON body (`{"error": CODE, "message": TEXT}`) an error answers with. */
export function errorBody(error: unknown): { status: ContentfulStatusCode; body: { error: string; message: string } } {
  if (error instanceof AuthRefusalError) return { status: error.status as ContentfulStatusCode, body: { error: error.code, message: error.message } };
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

/**
 * A refusal as LangGraph Platform's official server answers it on its routes (CONTRACT section 8),
 * so the SDK's error messages (`HTTP {status}: {body}`) read the same:
 * - a body its schema refuses (`validate`): 400 with @hono/zod-validator's JSON
 *   `{"success": false, "error": {"issues": [...], "name": "ZodError"}}`;
 * - malformed JSON: 400 `Malformed JSON in request body` (Hono's validator);
 * - any other refusal: its status with the message as plain text (Hono's HTTPException), in the
 *   official words where the official server has them (`officialMessage`);
 * - a server fault: 500 `Internal Server Error`; the database away: 503 with Retry-After.
 */
export function officialErrorResponse(c: Context, error: unknown): Response {
  const { status } = errorBody(error);
  if (status === 503) c.header("Retry-After", String(SERVER_DEFAULTS.retryAfterSeconds));
  if (!(error instanceof DevmindError) || status >= 500) {
    return c.text(status === 503 ? "the database is unavailable; retry shortly" : "Internal Server Error", status);
  }
  const issues = error.details["issues"];
  if (error.code === "REQUEST_INVALID" && Array.isArray(issues)) return c.json({ success: false, error: { issues, name: "ZodError" } }, 400);
  if (error.code === "BAD_REQUEST" && error.details["malformedJson"] === true) return c.text("Malformed JSON in request body", 400);
  return c.text(officialMessage(error), status);
}

/**
 * The official server's words for the refusals it has (storage ops' HTTPException messages), so
 * SDK callers matching on them keep working; devmind's own message for the others.
 */
export function officialMessage(error: DevmindError): string {
  const id = (key: string): string => String(error.details[key] ?? "");
  switch (error.code) {
    case "ASSISTANT_NOT_FOUND":
      return error.details["forRun"] === true
        ? `No assistant found for "${id("assistantId")}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`
        : "Assistant not found";
    case "THREAD_NOT_FOUND":
      return `Thread with ID ${id("threadId")} not found`;
    case "RUN_NOT_FOUND":
      return "Run not found";
    case "RUN_CONFLICT":
      if (error.details["activeRunId"] !== undefined) return "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.";
      if (error.details["conflict"] === "thread_exists") return "Thread already exists";
      if (error.details["conflict"] === "assistant_exists") return "Assistant already exists";
      if (error.details["conflict"] === "thread_busy") return "Thread is busy";
      return error.message;
    default:
      return error.message;
  }
}

/** Codes of the gates every API request passes first (API key, browser guard): devmind's own, on every route. */
const GATE_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN"]);

/**
 * Answers `c` with the error in the form of the request's route family (`routeFamily`); the
 * gates' refusals (401/403) keep devmind's `{error, message}` on every route, as the web page
 * and clients recognise a refused key by it (the official server has no API key gate).
 */
export function familyErrorResponse(c: Context, error: unknown): Response {
  if (error instanceof AuthRefusalError) return authRefusalResponse(c, error);
  const gate = error instanceof DevmindError && GATE_CODES.has(error.code);
  return !gate && routeFamily(c.req.method, c.req.path) === "langgraph" ? officialErrorResponse(c, error) : errorResponse(c, error);
}

/**
 * The auth handler's HTTPException, as the official server answers it: its status, its headers
 * (e.g. `WWW-Authenticate`) and its message as plain text on LangGraph's routes; on devmind's own
 * routes the same status with `{"error": "AUTH_REFUSED", "message"}`.
 */
function authRefusalResponse(c: Context, error: AuthRefusalError): Response {
  const status = error.status as ContentfulStatusCode;
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  if (routeFamily(c.req.method, c.req.path) === "langgraph") return c.text(error.message || "Unauthorized", status);
  return c.json({ error: error.code, message: error.message || "Unauthorized" }, status);
}

/** Shorthand for the server's own refusals. */
export function httpError(code: "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "BAD_REQUEST" | "REQUEST_INVALID" | "PAYLOAD_TOO_LARGE", message: string, details: Record<string, unknown> = {}): HttpRequestError {
  return new HttpRequestError(code, message, { details });
}
