import type { TupleRow } from "../../checkpoint/tuple-rows.js";
import { CONFIG_BOUNDS, GRAPHS_DEFAULTS, RUN_STORE_LIMITS, STREAM_EVENTS_DEFAULTS } from "../../constants.js";
import { assistantIdFor } from "../../graphs/assistant-id.js";
import type { Row } from "../../db/types.js";
import { DevmindError, RunNotFoundError } from "../../errors.js";
import type { AgentLimits } from "../../vocabulary/limits.js";
import type { RunError, StopReason, Usage } from "../../vocabulary/stop-reasons.js";
import { unknownOutcomesOf, type UnknownOutcome } from "../../vocabulary/unknown-outcomes.js";

/** Every run status of CONTRACT section 3, in lifecycle order. */
export const RUN_STATUSES = ["pending", "running", "success", "error", "timeout", "interrupted"] as const;

/**
 * Where a run is (LangGraph Platform's statuses): `pending` (queued), `running` (a worker holds
 * its lease), or one of the final statuses `success` (also a run that ended at an interrupt: its
 * stop reason is `interrupt` and its thread waits on it, `waiting`), `error`, `timeout`,
 * `interrupted` (cancelled, or interrupted by a newer run's multitask strategy).
 */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** True when `value` is one of `RUN_STATUSES` (use it to validate a status filter from input). */
export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === "string" && (RUN_STATUSES as readonly string[]).includes(value);
}

/** One message of a run's input: a string (a user message) or a message dict such as `{ role, content }`. */
export type RunInputMessage = string | { [key: string]: unknown };

/** What a run was asked: `{ messages: [...] }` with at least one message, stored as JSON. */
export interface RunInput {
  messages: RunInputMessage[];
}

/**
 * An interrupt a paused run waits on, as the graph raised it: LangGraph's interrupt `id` (resume
 * maps are keyed by it), the `value` passed to `interrupt(value)`, and the checkpoint namespace
 * of the task that raised it (`[]` for the graph itself, `["node:task"]` inside a subgraph).
 */
export interface RunInterrupt {
  id: string;
  value: unknown;
  ns: string[];
}

/**
 * A run's config for its graph (CONTRACT section 10): `configurable` values the graph reads from
 * `config.configurable`, LangGraph's `recursion_limit`, and `tags`. Stored as JSON.
 */
export interface RunGraphConfig {
  configurable?: Record<string, unknown>;
  recursion_limit?: number;
  tags?: string[];
}

/**
 * The per-run overrides of the agent limits (CONTRACT section 9); absent fields use the defaults.
 * `maxStreamEvents` is a run's own: the most LangChain stream events (the `events` stream mode)
 * each attempt of the run records; absent, none are recorded (the HTTP API sets
 * STREAM_EVENTS_DEFAULTS.maxPerRun for a run created with stream_mode `events`).
 */
export type RunLimits = Partial<AgentLimits> & { maxStreamEvents?: number; recordTools?: boolean };

/** The lease of a running run: who holds it, its fencing token, and when it lapses unless renewed. */
export interface RunLease {
  owner: string;
  epoch: number;
  /** ISO timestamp (database clock). */
  expires_at: string;
}

/**
 * A run as stored: CONTRACT section 3's record plus the fields workers need. Field names are the
 * wire names (snake_case), so the record goes to JSON, the CLI and HTTP unchanged.
 * Build one only with `runFromRow`.
 */
export interface RunRecord {
  run_id: string;
  thread_id: string;
  status: RunStatus;
  stop_reason: StopReason | null;
  /** The model's final (or partial) answer, once there is one. */
  answer: string | null;
  model_rounds: number;
  tool_calls: number;
  usage: Usage;
  /** Times the run was claimed by a worker (a requeued or released run counts again when re-claimed). */
  attempt: number;
  /** ISO timestamps (UTC, millisecond precision). */
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  error: RunError | null;
  /** The graph the run executes (`agent`: the built-in agent) and the assistant it was started as. */
  graph_id: string;
  /** The assistant the run was created for (a uuid; a graph's default assistant when none was named). */
  assistant_id: string;
  /** What the run was asked: `{ messages }` for the agent, any JSON value for other graphs. */
  input: unknown;
  limits: RunLimits;
  config: RunGraphConfig;
  /** The run's context for the graph (`config.context` / `runtime.context` in nodes); null when none. */
  context: unknown;
  /** For a run that ended at an interrupt (stop reason `interrupt`): what it stopped at. Null otherwise. */
  interrupts: RunInterrupt[] | null;
  /**
   * The run ended at an interrupt and its thread waits on it: the next run on the thread that
   * answers it (a decision, `command.resume`, or `input: null` after a breakpoint) resumes it.
   * Cleared once a newer run on the thread was created.
   */
  waiting: boolean;
  /** The waiting run this run resumes (it was created by the resume); null for a run created with input. */
  resumes_run: string | null;
  /** The run's own metadata (LangGraph's run `metadata`); `{}` when none. */
  metadata: Record<string, unknown>;
  /** `after_seconds`: no worker claims the run before this time (ISO); null: at once. */
  not_before: string | null;
  /** LangGraph's static breakpoints: the graph stops before / after these nodes (`*`: all); null when none. */
  interrupt_before: string[] | null;
  interrupt_after: string[] | null;
  /** The thread checkpoint the run starts from (time travel, forking the thread there); null: the latest. */
  checkpoint_id: string | null;
  /**
   * The LangGraph stream modes the run was created with, as the client named them (`stream_mode`);
   * a stream joined without modes sends these. Null: none given (LangGraph's default, `values`).
   */
  stream_mode: string[] | null;
  /** Set while `status` is `running`, null otherwise. */
  lease: RunLease | null;
  /** A cancel was requested; a running run's worker stops at its next check. */
  cancel_requested: boolean;
  /** Wall-clock time spent running, summed over attempts and resumes (approval waits excluded). */
  active_ms: number;
  /**
   * The tool calls of this run whose outcome is unknown (TOOL_OUTCOME_UNKNOWN), in the order they
   * were found: they may or may not have taken effect. Empty for most runs.
   */
  unknown_outcomes: UnknownOutcome[];
  /** The W3C traceparent of the request that created the run (or of the run it resumes): its spans continue that trace. Absent: none. */
  trace_parent?: string;
}

/**
 * What a worker reports when it stops running a run (interrupt, finish, release): the run's
 * totals so far as absolute values, and the running time of this stretch as a delta to add.
 */
export interface RunCounts {
  modelRounds: number;
  toolCalls: number;
  usage: Usage;
  /** Milliseconds this stretch ran; added to the stored `active_ms`. */
  activeMsDelta: number;
}

/** A run this process now holds, with the fencing token every later write must present. */
export interface ClaimedRun {
  run: RunRecord;
  epoch: number;
  /** True when the claim saw no open resume for the run (nor for the run it resumes): its executor reads none. */
  noOpenResumes?: boolean;
  /** True when the claim saw another due run pending (a worker's claim): the slot claims again after this run. */
  morePending?: boolean;
  /**
   * The rows of the thread's newest root checkpoint as the claim's transaction read them
   * (`get_tuple_latest`; empty: none), for the run's first attempt to start from without a read.
   * The executor takes them (sets this undefined): a later attempt reads the thread afresh.
   */
  threadCheckpoint?: readonly TupleRow[] | undefined;
  /**
   * Tool calls this process began to run under this claim, across its attempts (a database fault
   * starts a new attempt under the same lease): a call found `started` under this epoch but not
   * here was begun by a write whose answer was lost, so its tool never ran (see `GraphToolLedger`).
   */
  launched?: Set<string>;
}

/**
 * Maps one row selected with `runColumns()` (src/runtime/queue/run-sql.ts) to a record. The SQL already
 * formats timestamps as ISO text; bigint columns arrive as strings (node-pg) or numbers (PGlite)
 * and are parsed here.
 */
export function runFromRow(row: Row): RunRecord {
  const leaseOwner = row["lease_owner"] as string | null;
  const errorCode = row["error_code"] as string | null;
  return {
    run_id: row["run_id"] as string,
    thread_id: row["thread_id"] as string,
    status: row["status"] as RunStatus,
    stop_reason: (row["stop_reason"] as StopReason | null) ?? null,
    answer: (row["answer"] as string | null) ?? null,
    model_rounds: toNumber(row["model_rounds"], "model_rounds"),
    tool_calls: toNumber(row["tool_calls"], "tool_calls"),
    usage: { input_tokens: toNumber(row["input_tokens"], "input_tokens"), output_tokens: toNumber(row["output_tokens"], "output_tokens") },
    attempt: toNumber(row["attempt"], "attempt"),
    created_at: row["created_at"] as string,
    updated_at: row["updated_at"] as string,
    finished_at: (row["finished_at"] as string | null) ?? null,
    error: errorCode === null || errorCode === undefined ? null : errorOfRow(errorCode, row),
    graph_id: (row["graph_id"] as string | undefined) ?? "agent",
    assistant_id: assistantOfRow(row),
    input: row["input"],
    limits: (row["limits"] as RunLimits | null) ?? {},
    config: (row["config"] as RunGraphConfig | null) ?? {},
    context: row["context"] ?? null,
    interrupts: row["stop_reason"] === "interrupt" ? ((row["interrupts"] as RunInterrupt[] | null) ?? []) : null,
    waiting: row["waiting"] === true,
    resumes_run: (row["resumes_run"] as string | null) ?? null,
    metadata: (row["metadata"] as Record<string, unknown> | null | undefined) ?? {},
    not_before: (row["not_before"] as string | null | undefined) ?? null,
    interrupt_before: (row["interrupt_before"] as string[] | null | undefined) ?? null,
    interrupt_after: (row["interrupt_after"] as string[] | null | undefined) ?? null,
    checkpoint_id: (row["checkpoint_id"] as string | null | undefined) ?? null,
    stream_mode: (row["stream_mode"] as string[] | null | undefined) ?? null,
    lease:
      leaseOwner === null || leaseOwner === undefined
        ? null
        : { owner: leaseOwner, epoch: toNumber(row["lease_epoch"], "lease_epoch"), expires_at: row["lease_expires_at"] as string },
    cancel_requested: row["cancel_requested"] === true,
    active_ms: toNumber(row["active_ms"], "active_ms"),
    unknown_outcomes: unknownOutcomesOf(row["unknown_outcomes"]),
    ...(typeof row["trace_parent"] === "string" ? { trace_parent: row["trace_parent"] } : {}),
  };
}

/** A failed run's stored error: code and message, and the class name of the exception when one was recorded. */
function errorOfRow(code: string, row: Row): RunError {
  const name = row["error_name"] as string | null | undefined;
  return { code, message: (row["error_message"] as string | null) ?? "", ...(typeof name === "string" && name !== "" ? { name } : {}) };
}

/** Parses an integer or bigint column; a value beyond 2^53 would silently lose digits, so it throws. */
function toNumber(value: unknown, column: string): number {
  const parsed = typeof value === "number" ? value : Number(value as string | bigint);
  if (!Number.isSafeInteger(parsed)) throw new Error(`runs.${column} holds ${String(value)}, not a safe integer`);
  return parsed;
}

/** Every stop reason of CONTRACT section 3 (a record, so a new StopReason fails to compile until listed). */
const STOP_REASONS: Readonly<Record<StopReason, true>> = {
  completed: true,
  max_model_rounds: true,
  max_tool_calls: true,
  token_budget: true,
  deadline: true,
  no_progress: true,
  model_failed: true,
  model_timeout: true,
  model_truncated: true,
  max_attempts: true,
  cancelled: true,
  internal_error: true,
  recursion_limit: true,
  interrupt: true,
};

/** True when `value` is a stop reason of CONTRACT section 3. */
export function isStopReason(value: unknown): value is StopReason {
  return typeof value === "string" && Object.hasOwn(STOP_REASONS, value);
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a uuid string: run and attachment ids are uuids, so anything else names nothing (no query, no cast error). */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}

/** A RUN_INPUT_INVALID error (a user error: exit 2 / HTTP 400); `details.field` names the culprit. */
export function runInputError(message: string, details: Record<string, unknown> = {}): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details });
}

/**
 * Returns `runId` if it is a uuid; otherwise throws RunNotFoundError. Checked before any query,
 * so a malformed id is "not found" rather than a database cast error.
 */
export function checkRunId(runId: string): string {
  if (!isUuid(runId)) throw new RunNotFoundError(String(runId));
  return runId;
}

/** Returns `threadId` if it is a usable thread id (non-empty, bounded, no NUL); else RUN_INPUT_INVALID. */
export function checkThreadId(threadId: string): string {
  if (typeof threadId !== "string" || threadId.length === 0 || threadId.length > RUN_STORE_LIMITS.threadIdMaxChars || threadId.includes("\0")) {
    throw runInputError(`thread id must be a non-empty string of at most ${RUN_STORE_LIMITS.threadIdMaxChars} characters without NUL`, { field: "threadId" });
  }
  return threadId;
}

/** `value` as JSON text (no NUL characters: jsonb cannot hold them); RUN_INPUT_INVALID naming `field` otherwise. */
export function serializeJson(value: unknown, field: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw runInputError(`${field} is not serialisable as JSON: ${(error as Error).message}`, { field });
  }
  if (json === undefined || json.includes("\\u0000")) throw runInputError(`${field} must be JSON without NUL characters`, { field });
  return json;
}

const LIMIT_KEYS: ReadonlySet<string> = new Set<keyof AgentLimits>([
  "maxModelRounds",
  "maxToolCalls",
  "maxTokens",
  "runTimeoutMs",
  "toolTimeoutMs",
  "maxToolOutputChars",
  "noProgressLimit",
  "contextTokens",
  "modelTimeoutMs",
  "modelMaxRetries",
]);

/**
 * Checks per-run limit overrides: known keys only, integers within the bounds of the matching
 * DEVMIND_* variable (CONFIG_BOUNDS). Returns them without undefined entries; RUN_INPUT_INVALID otherwise.
 */
export function checkRunLimits(limits: RunLimits | undefined): RunLimits {
  if (limits === undefined) return {};
  if (limits === null || typeof limits !== "object" || Array.isArray(limits)) throw runInputError("limits must be an object", { field: "limits" });
  const checked: RunLimits = {};
  for (const [key, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (key === "maxStreamEvents") {
      const { min, max } = STREAM_EVENTS_DEFAULTS.maxPerRunBounds;
      if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
        throw runInputError(`limit maxStreamEvents must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, { field: "limits", limit: key });
      }
      checked.maxStreamEvents = value;
      continue;
    }
    if (key === "recordTools") {
      if (value !== true) throw runInputError(`limit recordTools must be true, got ${JSON.stringify(value)}`, { field: "limits", limit: key });
      checked.recordTools = true;
      continue;
    }
    if (!LIMIT_KEYS.has(key)) {
      throw runInputError(`unknown limit ${JSON.stringify(key)}; known: ${[...LIMIT_KEYS, "maxStreamEvents", "recordTools"].join(", ")}`, { field: "limits", limit: key });
    }
    const { min, max } = CONFIG_BOUNDS[key as keyof AgentLimits];
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      throw runInputError(`limit ${key} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, { field: "limits", limit: key });
    }
    checked[key as keyof AgentLimits] = value;
  }
  return checked;
}

/** Checks a worker's counts: every field a non-negative safe integer; RUN_INPUT_INVALID otherwise. */
export function checkRunCounts(counts: RunCounts): RunCounts {
  const fields: [string, unknown][] = [
    ["modelRounds", counts?.modelRounds],
    ["toolCalls", counts?.toolCalls],
    ["usage.input_tokens", counts?.usage?.input_tokens],
    ["usage.output_tokens", counts?.usage?.output_tokens],
    ["activeMsDelta", counts?.activeMsDelta],
  ];
  for (const [name, value] of fields) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw runInputError(`counts.${name} must be a non-negative integer, got ${String(value)}`, { field: `counts.${name}` });
    }
  }
  return counts;
}

const ASSISTANT_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A run's assistant id; rows from before assistants were stored (and cron runs) name the graph: its default assistant's. */
function assistantOfRow(row: Row): string {
  const stored = row["assistant_id"] as string | undefined;
  if (stored !== undefined && ASSISTANT_UUID.test(stored)) return stored;
  return assistantIdFor((row["graph_id"] as string | undefined) ?? stored ?? GRAPHS_DEFAULTS.defaultGraphId);
}
