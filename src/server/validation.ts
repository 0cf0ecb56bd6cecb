import type { Context } from "hono";
import { z } from "zod";
import { SERVER_DEFAULTS } from "../constants.js";
import { httpError } from "./http-errors.js";

/**
 * Stream modes of LangGraph's API that devmind knows (the routes refuse `events`, and any other
 * value, with a 422 naming it).
 */
export const STREAM_MODES = ["values", "updates", "messages", "messages-tuple", "custom", "events", "debug", "tasks", "checkpoints", "tools"] as const;

// any text here: the routes check each mode and name the one they refuse
const streamMode = z.union([z.string().max(100), z.array(z.string().max(100)).max(20)]);
const metadata = z.record(z.string(), z.unknown());
/** A checkpoint id as a client may send one: bounded text without NUL (ids are uuid6 strings). */
export const CheckpointId = z.string().min(1).max(256).regex(/^[^\u0000]*$/, "must not contain NUL");

/**
 * `POST /threads/{id}/runs[/stream|/wait]` and `POST /runs[/stream|/wait]` (LangGraph RunCreate).
 * devmind uses: `assistant_id` (a loaded graph's id or its assistant uuid), `input` (any JSON,
 * checked by the graph's own input check when it has one), `command` (resume, update, goto),
 * `config` (configurable, recursion_limit, tags) and `context`,
 * `stream_mode`, `multitask_strategy` reject|enqueue|interrupt|rollback, `if_not_exists` create|reject,
 * `on_disconnect` cancel|continue, `metadata`, and devmind's `limits` (a partial of the run
 * limits); `after_seconds`, `interrupt_before`/`interrupt_after` and `checkpoint(_id)` are read by
 * `runOptionsOf`, for every graph. The LangGraph options devmind does not implement are refused
 * by `refuseUnsupportedOptions`.
 */
export const RunCreateBody = z
  .object({
    assistant_id: z.string().min(1).max(256),
    // checked by the graph's run hooks when it has an input check (`{}` and null beside a command are no input)
    input: z.unknown().optional(),
    command: z
      .object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() })
      .nullish(),
    stream_mode: streamMode.nullish(),
    stream_resumable: z.boolean().nullish(),
    multitask_strategy: z.enum(["reject", "enqueue", "interrupt", "rollback"]).nullish(),
    if_not_exists: z.enum(["create", "reject"]).nullish(),
    on_disconnect: z.enum(["cancel", "continue"]).nullish(),
    // stateless runs only: "delete" removes the new thread once the run ended
    on_completion: z.enum(["delete", "keep"]).nullish(),
    limits: z.record(z.string(), z.number()).nullish(),
    metadata: metadata.nullish(),
    config: z.record(z.string(), z.unknown()).nullish(),
    context: z.unknown().optional(),
    // called when the run ends; the runtime checks the target (DEVMIND_WEBHOOK_ALLOW)
    webhook: z.string().max(2_048).nullish(),
  })
  .passthrough();
/** A validated run request. */
export type RunCreateBody = z.infer<typeof RunCreateBody>;

/** `POST /runs/cancel` (the SDK's `cancelMany`): the runs named, or every run of a status (optionally of one thread). */
export const RunCancelManyBody = z
  .object({
    thread_id: z.string().min(1).max(256).nullish(),
    run_ids: z.array(z.string().min(1).max(64)).min(1).max(SERVER_DEFAULTS.runBatchMax).nullish(),
    status: z.enum(["pending", "running", "all"]).nullish(),
  })
  .strict()
  .refine((body) => (body.run_ids ?? null) !== null || (body.status ?? null) !== null, { message: "give run_ids or status" });

/** One update of a superstep or of `POST /threads/{id}/state`'s kind: values written as a node. */
const StateUpdate = z.object({ values: z.unknown(), as_node: z.string().min(1).max(256).nullish(), command: z.unknown().optional() }).strict();

/**
 * A thread's TTL as LangGraph takes it: `{strategy: "delete", ttl: minutes}` (the SDK sends a
 * number as that object). The thread is deleted once `ttl` minutes passed since its last update.
 */
export const ThreadTtl = z.object({ strategy: z.literal("delete").nullish(), ttl: z.number().positive() }).strict();

/** `POST /threads`: `supersteps` pre-fill the state with the graph `metadata.graph_id` names; `ttl` (ThreadTtl). */
export const ThreadCreateBody = z
  .object({
    thread_id: z.string().min(1).max(256).nullish(),
    metadata: metadata.nullish(),
    if_exists: z.enum(["raise", "do_nothing"]).nullish(),
    supersteps: z.array(z.object({ updates: z.array(StateUpdate).min(1).max(100) }).strict()).max(100).nullish(),
    ttl: ThreadTtl.nullish(),
  })
  .strict();

/** `PATCH /threads/{id}`: `metadata` merged, `ttl` (ThreadTtl) replaces the thread's. */
export const ThreadPatchBody = z.object({ metadata: metadata.nullish(), ttl: ThreadTtl.nullish() }).strict();

/** `PATCH /threads/{id}/state` (the SDK's `patchState`): metadata merged into the newest checkpoint's. */
export const ThreadStatePatchBody = z.object({ metadata }).strict();

/** `POST /threads/count`. `values` (a state filter) is refused when not empty. */
export const ThreadCountBody = z
  .object({ metadata: metadata.nullish(), values: metadata.nullish(), status: z.enum(["idle", "busy", "interrupted", "error"]).nullish() })
  .strict();

/**
 * A checkpoint as LangGraph's requests name one (`{checkpoint_id?, checkpoint_ns?, thread_id?,
 * checkpoint_map?}`): `checkpoint_ns` a subgraph's namespace (`node:task_id[|...]`, as a subgraph
 * task's `checkpoint` gives it), `""` or absent for the graph's own.
 */
const CheckpointRef = z
  .object({ checkpoint_id: CheckpointId.nullish(), checkpoint_ns: z.string().max(1_024).regex(/^[^\u0000]*$/, "must not contain NUL").nullish(), thread_id: z.string().max(256).nullish() })
  .passthrough();

/** `POST /threads/{id}/state` (LangGraph's ThreadStateUpdate). */
export const ThreadStateUpdateBody = z
  .object({
    values: z.unknown(),
    as_node: z.string().min(1).max(256).nullish(),
    checkpoint_id: CheckpointId.nullish(),
    checkpoint: CheckpointRef.nullish(),
  })
  .strict();

/** `POST /threads/{id}/state/checkpoint` (the SDK's `getState` with a checkpoint object). */
export const ThreadStateAtBody = z
  .object({ checkpoint: CheckpointRef.nullish(), subgraphs: z.boolean().nullish() })
  .strict();

/** `POST /threads/prune`: `delete` removes the threads; `keep_latest` keeps each one's newest checkpoint only. */
export const ThreadPruneBody = z.object({ thread_ids: z.array(z.string().min(1).max(256)).min(1).max(500), strategy: z.enum(["delete", "keep_latest"]).nullish() }).strict();

/** `POST /threads/search`. */
export const ThreadSearchBody = z
  .object({
    metadata: metadata.nullish(),
    ids: z.array(z.string().min(1).max(256)).max(500).nullish(),
    status: z.enum(["idle", "busy", "interrupted", "error"]).nullish(),
    limit: z.number().int().min(1).max(500).nullish(),
    offset: z.number().int().min(0).max(1_000_000).nullish(),
    sort_by: z.enum(["thread_id", "created_at", "updated_at", "status"]).nullish(),
    sort_order: z.enum(["asc", "desc"]).nullish(),
    select: z.array(z.enum(["thread_id", "created_at", "updated_at", "metadata", "status", "values", "interrupts"])).max(7).nullish(),
    values: metadata.nullish(),
  })
  .strict();

/** `POST /threads/{id}/history`: `before` a checkpoint id or LangGraph's `{configurable: {checkpoint_id}}`. */
export const HistoryBody = z
  .object({
    limit: z.number().int().min(1).max(1_000).nullish(),
    before: z.union([CheckpointId, z.object({ configurable: z.object({ checkpoint_id: CheckpointId }).passthrough() }).passthrough()]).nullish(),
    metadata: metadata.nullish(),
    checkpoint: CheckpointRef.nullish(),
  })
  .strict();

const ASSISTANT_FIELDS = ["assistant_id", "graph_id", "name", "description", "config", "context", "metadata", "version", "created_at", "updated_at"] as const;

const assistantSortKeys = z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]);

/** `POST /assistants/search` (LangGraph's AssistantSearchRequest). */
export const AssistantSearchBody = z
  .object({
    graph_id: z.string().max(256).nullish(),
    name: z.string().max(256).nullish(),
    metadata: metadata.nullish(),
    limit: z.number().int().min(1).max(1_000).nullish(),
    offset: z.number().int().min(0).max(1_000_000).nullish(),
    sort_by: assistantSortKeys.nullish(),
    sort_order: z.enum(["asc", "desc"]).nullish(),
    select: z.array(z.enum(ASSISTANT_FIELDS)).max(ASSISTANT_FIELDS.length).nullish(),
  })
  .strict();

/** `POST /assistants/count`. */
export const AssistantCountBody = z
  .object({ graph_id: z.string().max(256).nullish(), name: z.string().max(256).nullish(), metadata: metadata.nullish() })
  .strict();

/** `POST /assistants` (LangGraph's AssistantCreate); `config` is checked by the runtime (configurable, recursion_limit, tags). */
export const AssistantCreateBody = z
  .object({
    graph_id: z.string().min(1).max(256),
    assistant_id: z.string().uuid().nullish(),
    config: z.record(z.string(), z.unknown()).nullish(),
    context: z.unknown().optional(),
    metadata: metadata.nullish(),
    if_exists: z.enum(["raise", "do_nothing"]).nullish(),
    name: z.string().max(1_000).nullish(),
    description: z.string().max(10_000).nullish(),
  })
  .strict();

/** `PATCH /assistants/{id}` (LangGraph's AssistantPatch): every field optional; metadata is merged. */
export const AssistantPatchBody = z
  .object({
    graph_id: z.string().min(1).max(256).nullish(),
    config: z.record(z.string(), z.unknown()).nullish(),
    context: z.unknown().optional(),
    metadata: metadata.nullish(),
    name: z.string().max(1_000).nullish(),
    description: z.string().max(10_000).nullish(),
  })
  .strict();

/** `POST /assistants/{id}/versions`. */
export const AssistantVersionsBody = z
  .object({ metadata: metadata.nullish(), limit: z.number().int().min(1).max(1_000).nullish(), offset: z.number().int().min(0).max(1_000_000).nullish() })
  .strict();

/** `POST /assistants/{id}/latest`. */
export const AssistantLatestBody = z.object({ version: z.number().int().min(1) }).strict();

/**
 * Reads the JSON body and validates it: no body counts as `{}`; malformed JSON is 400
 * BAD_REQUEST; a body the schema refuses is REQUEST_INVALID (`validate`).
 */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text) as unknown;
    } catch {
      throw httpError("BAD_REQUEST", "the request body is not valid JSON", { malformedJson: true });
    }
  }
  return validate(schema, raw);
}

/**
 * Reads the JSON body without a schema (for bodies with their own parser, e.g. decisions'
 * `parseDecisions`): no body counts as `{}`; malformed JSON is 400 BAD_REQUEST.
 */
export async function readJson(c: Context): Promise<unknown> {
  return readBody(c, z.unknown());
}

/**
 * Validates a value (e.g. query parameters) against a schema; REQUEST_INVALID otherwise, with
 * the zod issues in `details.issues` (at most SERVER_DEFAULTS.validationIssuesMax): devmind's
 * routes answer 422 naming the first problems, LangGraph's routes 400 with the issues, as the
 * official server's validator does (`officialErrorResponse`).
 */
export function validate<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "body"}: ${issue.message}`);
  const issues = parsed.error.issues.slice(0, SERVER_DEFAULTS.validationIssuesMax).map((issue) => JSON.parse(JSON.stringify({ ...issue, path: issue.path.map((key) => (typeof key === "symbol" ? String(key) : key)) })) as unknown);
  throw httpError("REQUEST_INVALID", `invalid request: ${problems.join("; ")}`, { problems, issues });
}

/** A non-negative integer query parameter, or `fallback` when absent; 422 otherwise. */
export function intQuery(value: string | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) > max) throw httpError("REQUEST_INVALID", `${name} must be an integer from 0 to ${max}`);
  return Number(value);
}
