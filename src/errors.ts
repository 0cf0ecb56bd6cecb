/**
 * The one error base of devmind. Every error we raise on purpose is a `DevmindError` with a
 * string `code`, so callers branch on codes, never on message text, and the CLI maps the
 * `kind` to an exit code (user errors exit 2).
 */

/** Who is at fault: the caller's input or setup, the system we depend on, or the model's output. */
export type ErrorKind = "user" | "system" | "model";

/** Every code devmind raises, grouped by the layer that owns it. */
export type DevmindErrorCode =
  // configuration (src/config.ts)
  | "CONFIG_INVALID"
  // database seam (src/db)
  | "DATABASE_URL_INVALID"
  | "DATABASE_UNREACHABLE"
  | "DATABASE_WRITE_FAILED"
  | "DATABASE_LOCKED"
  | "DATABASE_LISTEN_UNAVAILABLE" // LISTEN through a transaction pooler: set DEVMIND_DATABASE_DIRECT_URL
  | "SCHEMA_NAME_INVALID"
  | "DATA_DIR_INVALID"
  // migrations (src/db/migrate.ts)
  | "MIGRATION_TAMPERED"
  | "MIGRATION_DATABASE_NEWER"
  | "MIGRATION_FILE_INVALID"
  | "MIGRATION_FAILED"
  // checkpointer (src/checkpoint)
  | "CHECKPOINT_CONFIG_INVALID"
  | "CHECKPOINT_CORRUPT"
  // graphs (src/graphs)
  | "GRAPH_INVALID"
  | "GRAPH_LOAD_FAILED"
  | "GRAPH_NOT_FOUND"
  | "GRAPH_FAILED"
  | "GRAPH_RECURSION_LIMIT"
  // tools (src/tools)
  | "TOOL_DEFINITION_INVALID"
  | "TOOL_NAME_DUPLICATE"
  // runs
  | "RUN_CANCELLED"
  // chat models (src/model)
  | "MODEL_FAILED"
  | "MODEL_TIMEOUT"
  | "MODEL_CANCELLED"
  | "SCRIPT_INVALID"
  | "SCRIPT_EXHAUSTED"
  // runs (src/runtime)
  | "RUN_NOT_FOUND"
  | "THREAD_NOT_FOUND"
  | "ASSISTANT_NOT_FOUND"
  | "RUN_CONFLICT"
  | "RUN_INPUT_INVALID"
  | "LEASE_LOST"
  | "RUN_DRAINED"
  | "ATTACHMENT_INVALID"
  // how a run ended: the `code` of a run's error (RunError, the run record's error_code), never
  // thrown; built with `runError` (src/vocabulary/stop-reasons.ts). A run's error may also carry
  // any code above (a DevmindError a graph threw, GRAPH_FAILED, GRAPH_RECURSION_LIMIT, MODEL_*).
  | "INTERNAL_ERROR" // the graph ended without a stop reason
  | "GRAPH_NODE_GONE" // the run's checkpoint waits at a node its graph no longer has (changed mid-run)
  | "RUN_DEADLINE" // the runtime's deadline timer stopped the run
  | "DEADLINE" // the agent's stop rules saw the deadline pass
  | "NO_PROGRESS" // the same failing call made DEVMIND_NO_PROGRESS_LIMIT times
  | "MAX_ATTEMPTS" // lease expired on every attempt (run-sql.ts requeueExpired)
  | "MAX_TOOL_CALLS"
  | "MAX_MODEL_ROUNDS"
  | "TOKEN_BUDGET"
  | "CANCELLED"
  | "MODEL_TRUNCATED" // the model's reply was cut off at its output token limit
  // memory store (src/store)
  | "STORE_INPUT_INVALID"
  // web page (src/server/web)
  | "WEB_ASSETS_MISSING"
  // HTTP API (src/server)
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "BAD_REQUEST"
  | "REQUEST_INVALID"
  | "PAYLOAD_TOO_LARGE"
  // the project's auth handler (src/server/custom-auth)
  | "AUTH_REFUSED" // the handler threw an HTTPException: its status, message and headers answer
  | "AUTH_HANDLER_FAILED"; // the handler is broken: it threw something else, timed out, or returned a malformed result

const KIND_BY_CODE: Record<DevmindErrorCode, ErrorKind> = {
  CONFIG_INVALID: "user",
  DATABASE_URL_INVALID: "user",
  DATABASE_UNREACHABLE: "system",
  DATABASE_WRITE_FAILED: "system",
  DATABASE_LOCKED: "user",
  DATABASE_LISTEN_UNAVAILABLE: "user",
  SCHEMA_NAME_INVALID: "user",
  DATA_DIR_INVALID: "user",
  MIGRATION_TAMPERED: "system",
  MIGRATION_DATABASE_NEWER: "user",
  MIGRATION_FILE_INVALID: "system",
  MIGRATION_FAILED: "system",
  CHECKPOINT_CONFIG_INVALID: "user",
  CHECKPOINT_CORRUPT: "system",
  GRAPH_INVALID: "user",
  GRAPH_LOAD_FAILED: "user",
  GRAPH_NOT_FOUND: "user",
  GRAPH_FAILED: "user",
  GRAPH_RECURSION_LIMIT: "user",
  TOOL_DEFINITION_INVALID: "user",
  TOOL_NAME_DUPLICATE: "user",
  RUN_CANCELLED: "user",
  MODEL_FAILED: "system",
  MODEL_TIMEOUT: "system",
  MODEL_CANCELLED: "user",
  SCRIPT_INVALID: "user",
  SCRIPT_EXHAUSTED: "user",
  RUN_NOT_FOUND: "user",
  THREAD_NOT_FOUND: "user",
  ASSISTANT_NOT_FOUND: "user",
  RUN_CONFLICT: "user",
  RUN_INPUT_INVALID: "user",
  LEASE_LOST: "system",
  RUN_DRAINED: "system",
  ATTACHMENT_INVALID: "user",
  // run outcomes: limits are the caller's setup, a stuck or truncated model is the model's, the rest the system's
  INTERNAL_ERROR: "system",
  GRAPH_NODE_GONE: "system",
  RUN_DEADLINE: "user",
  DEADLINE: "user",
  NO_PROGRESS: "model",
  MAX_ATTEMPTS: "system",
  MAX_TOOL_CALLS: "user",
  MAX_MODEL_ROUNDS: "user",
  TOKEN_BUDGET: "user",
  CANCELLED: "user",
  MODEL_TRUNCATED: "model",
  STORE_INPUT_INVALID: "user",
  WEB_ASSETS_MISSING: "system",
  UNAUTHORIZED: "user",
  FORBIDDEN: "user",
  NOT_FOUND: "user",
  BAD_REQUEST: "user",
  REQUEST_INVALID: "user",
  PAYLOAD_TOO_LARGE: "user",
  AUTH_REFUSED: "user",
  AUTH_HANDLER_FAILED: "system",
};

/** Structured, serialisable details attached to an error (never secrets). */
export type ErrorDetails = Record<string, unknown>;

/**
 * Base class for every error devmind raises deliberately.
 *
 * `name` follows the concrete subclass, `code` is stable and documented, `details` carries
 * structured context (variable names, versions, paths) for logs and API bodies.
 */
export class DevmindError extends Error {
  readonly code: DevmindErrorCode;
  readonly kind: ErrorKind;
  readonly details: ErrorDetails;

  constructor(code: DevmindErrorCode, message: string, options: { details?: ErrorDetails; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.kind = KIND_BY_CODE[code];
    this.details = options.details ?? {};
  }

  /** A JSON shape safe to log or return over HTTP. */
  toJSON(): { code: DevmindErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** A configuration value is missing or malformed; `details.variable` names it. */
export class ConfigError extends DevmindError {
  constructor(message: string, details: ErrorDetails = {}) {
    super("CONFIG_INVALID", message, { details });
  }
}

/**
 * Opening, locking or querying the database failed in a way the user must fix or know about.
 * DATABASE_UNREACHABLE (server away, connection lost, pool connect timeout) and
 * DATABASE_WRITE_FAILED (disk full, read-only, permission revoked) are faults of the database,
 * not of a run: see `databaseFaultOf` in src/db/database-faults.ts.
 */
export class DatabaseError extends DevmindError {}

/** A migration file or the database's migration history is inconsistent with this code. */
export class MigrationError extends DevmindError {}

/** A checkpointer call got a config it cannot serve, or found stored data it cannot read. */
export class CheckpointError extends DevmindError {}

/**
 * A graph cannot be used: an export that is not a graph, a graph compiled with a checkpointer of
 * its own, a factory returning neither (`GRAPH_INVALID`); or a graph module that fails to load
 * (`GRAPH_LOAD_FAILED`). `details` names the graph id and, when loaded from langgraph.json, the file.
 */
export class GraphDefinitionError extends DevmindError {
  constructor(message: string, details: ErrorDetails = {}, code: "GRAPH_INVALID" | "GRAPH_LOAD_FAILED" = "GRAPH_INVALID", cause?: unknown) {
    super(code, message, { details, cause });
  }
}

/** A run names a graph (assistant) this runtime has not loaded; `details.graph` names it, `details.known` lists the loaded ones. */
export class GraphNotFoundError extends DevmindError {
  constructor(graphId: string, known: readonly string[]) {
    super("GRAPH_NOT_FOUND", `no graph ${JSON.stringify(graphId)} is loaded here; known: ${known.join(", ") || "(none)"}`, { details: { graph: graphId, known: [...known] } });
  }
}

/**
 * A tool definition or a tool list is unusable (bad name, schema that is not a zod object or has
 * no JSON Schema, non-positive timeout, two tools with one name). Raised when tools are defined or
 * registered, so a broken tool fails at startup rather than in the middle of a run.
 */
export class ToolDefinitionError extends DevmindError {}

/**
 * The run was cancelled while this work was in flight (its AbortSignal fired). Thrown instead of
 * returning a result so that the caller stops the run rather than feeding the model; the runtime
 * maps it to stop reason `cancelled`.
 */
export class RunCancelledError extends DevmindError {
  constructor(message = "run was cancelled", options: { details?: ErrorDetails; cause?: unknown } = {}) {
    super("RUN_CANCELLED", message, options);
  }
}

/**
 * A chat model call failed (`MODEL_FAILED`, e.g. a scripted `{"error"}` turn), ran past its
 * deadline (`MODEL_TIMEOUT`), or was cancelled (`MODEL_CANCELLED`); or a scripted model's script
 * is unusable (`SCRIPT_INVALID`, `details` names the file, turn and problem) or has no turn left
 * for a call (`SCRIPT_EXHAUSTED`). Use `classifyModelError` to map any model failure to a code.
 */
export class ModelError extends DevmindError {}

/** True when `error` is a DevmindError carrying `code`. */
export function hasErrorCode(error: unknown, code: DevmindErrorCode): error is DevmindError {
  return error instanceof DevmindError && error.code === code;
}

/** A run or thread id that does not exist (HTTP 404). */
export class RunNotFoundError extends DevmindError {
  constructor(runId: string) {
    super("RUN_NOT_FOUND", `no run with id ${JSON.stringify(runId.slice(0, 100))}`, { details: { runId: runId.slice(0, 100) } });
  }
}

/** A thread id that does not exist (HTTP 404). */
/** No assistant has this id (or its graph is not loaded here); `details.assistantId` names it. */
export class AssistantNotFoundError extends DevmindError {
  constructor(assistantId: string, reason = "") {
    super("ASSISTANT_NOT_FOUND", `no assistant ${JSON.stringify(assistantId.slice(0, 100))}${reason}`, { details: { assistantId: assistantId.slice(0, 100) } });
  }
}

export class ThreadNotFoundError extends DevmindError {
  constructor(threadId: string) {
    super("THREAD_NOT_FOUND", `no thread with id ${JSON.stringify(threadId.slice(0, 100))}`, { details: { threadId: threadId.slice(0, 100) } });
  }
}

/**
 * The request conflicts with the run's state (HTTP 409): a second active run on a thread, a
 * decision on a run that is not waiting, a second decision for one call, cancel of a finished run.
 */
export class RunConflictError extends DevmindError {
  constructor(message: string, details: ErrorDetails = {}) {
    super("RUN_CONFLICT", message, { details });
  }
}

/**
 * This process no longer holds the run's lease (another worker took it over): control flow, not
 * a failure of the run. Whatever was about to be written is refused and the worker stops the run.
 */
export class LeaseLostError extends DevmindError {
  constructor(runId: string, epoch: number) {
    super("LEASE_LOST", `lease on run ${runId} (epoch ${epoch}) is no longer held by this worker`, { details: { runId, epoch } });
  }
}

/** The process is shutting down: the run stopped at a step boundary and can continue elsewhere. */
export class DrainError extends DevmindError {
  constructor() {
    super("RUN_DRAINED", "the run was stopped at a step boundary because this process is shutting down");
  }
}

/**
 * An HTTP request the server refuses (src/server): no or a wrong API key (UNAUTHORIZED 401,
 * FORBIDDEN 403), an unknown route or resource (NOT_FOUND 404), malformed JSON (BAD_REQUEST 400),
 * a body that fails validation (REQUEST_INVALID 422), a body over the limit (PAYLOAD_TOO_LARGE 413).
 */
export class HttpRequestError extends DevmindError {}

/**
 * The project's auth handler refused a request by throwing LangGraph's `HTTPException`
 * (`@langchain/langgraph-sdk/auth`): the answer is its `status`, `message` and `headers`, as on
 * the official server. Code `AUTH_REFUSED`.
 */
export class AuthRefusalError extends DevmindError {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super("AUTH_REFUSED", message, { details: { status } });
    this.status = status;
    this.headers = headers;
  }
}

/**
 * An operation the memory store refuses (src/store): a namespace that breaks LangGraph's rules
 * (empty, an empty label, a label with `.`, `:` or NUL), a value that is not a JSON object or is too
 * large, a TTL that is not a positive number of minutes, an embedding of the wrong size.
 * Code `STORE_INPUT_INVALID` (HTTP 422).
 */
export class StoreInputError extends DevmindError {
  constructor(message: string, details: ErrorDetails = {}) {
    super("STORE_INPUT_INVALID", message, { details });
  }
}
