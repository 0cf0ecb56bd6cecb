import { RunConflictError } from "../errors.js";
import { STREAM_EVENTS_DEFAULTS } from "../constants.js";
import type { RunGraphConfig, RunLimits } from "../runtime/queue/run-record.js";
import { isHitlRequest, type NextRunOptions, type Runtime } from "../runtime/runtime.js";
import { httpError } from "./http-errors.js";
import type { StartedRun } from "./run-start.js";
import type { RunCreateBody } from "./validation.js";
import type { AccessFilter } from "../vocabulary/access-filter.js";

/** The keys of a run's `config` devmind passes to a graph (CONTRACT section 10). */
const CONFIG_KEYS = ["configurable", "recursion_limit", "tags"] as const;

/**
 * LangGraph run options devmind does not implement, with the values that ask for nothing (the
 * SDK sends a field only when the caller set it). Any other value is refused with a 422 naming
 * the option, never accepted and ignored.
 */
const UNSUPPORTED_OPTIONS: Record<string, (value: unknown) => boolean> = {
  feedback_keys: (value) => Array.isArray(value) && value.length === 0,
  stream_subgraphs: (value) => value === false,
  checkpoint_during: (value) => value === true,
  durability: (value) => value === "sync" || value === "async",
  strict_resume: (value) => value === false,
  langsmith_tracer: () => false,
};

/** What happens to a stateless run's thread after the run (`on_completion: "delete"`), in `runtime.runs.create`'s terms. */
export interface RunCompletionOptions {
  deleteThread?: boolean;
  completionHoldMs?: number;
}

/** The multitask mode of `runtime.runs.create` a request's strategy becomes ("interrupt" queues behind what is still stopping). */
export function multitaskOf(body: RunCreateBody): "reject" | "enqueue" {
  return body.multitask_strategy === "enqueue" || body.multitask_strategy === "interrupt" ? "enqueue" : "reject";
}

/** Refuses (422 REQUEST_INVALID, naming it) the first LangGraph run option set that devmind does not implement. */
export function refuseUnsupportedOptions(body: RunCreateBody): void {
  const raw = body as Record<string, unknown>;
  for (const [option, neutral] of Object.entries(UNSUPPORTED_OPTIONS)) {
    const value = raw[option];
    if (value === undefined || value === null || neutral(value)) continue;
    throw httpError("REQUEST_INVALID", `${option} is not supported by devmind serve`, { field: option });
  }
}

/** True when a request's `stream_mode` (one mode or a list) includes `mode`. */
function wantsMode(body: RunCreateBody, mode: string): boolean {
  const modes = body.stream_mode;
  return modes === mode || (Array.isArray(modes) && modes.includes(mode));
}

/**
 * A request's `stream_mode` as a list, as the client named the modes (the run keeps them: a stream
 * joined without modes sends these, as the official server's does); undefined when none was given.
 */
export function requestedModes(body: RunCreateBody): string[] | undefined {
  const modes = body.stream_mode;
  if (modes === undefined || modes === null) return undefined;
  const list = typeof modes === "string" ? [modes] : [...modes];
  return list.length === 0 ? undefined : list;
}

/** True when a request's `stream_mode` (one mode or a list) includes `events`. */
function wantsStreamEvents(body: RunCreateBody): boolean {
  return wantsMode(body, "events");
}

/**
 * The run's `limits` for `runtime.runs.create`: the request's devmind `limits`, plus — when its
 * `stream_mode` includes `events` — `maxStreamEvents` (STREAM_EVENTS_DEFAULTS.maxPerRun unless the
 * request set it), which makes the worker record the run's LangChain stream events, and — when it
 * includes `tools` — `recordTools`, which makes the worker record tool events even for a graph
 * without a tool node (a node that calls a tool itself). Undefined when there are none.
 */
export function runLimitsOf(body: RunCreateBody): RunLimits | undefined {
  const given = body.limits === undefined || body.limits === null ? undefined : (body.limits as RunLimits);
  const events = wantsStreamEvents(body) ? { maxStreamEvents: given?.maxStreamEvents ?? STREAM_EVENTS_DEFAULTS.maxPerRun } : {};
  const tools = wantsMode(body, "tools") ? { recordTools: true } : {};
  if (given === undefined && Object.keys(events).length === 0 && Object.keys(tools).length === 0) return undefined;
  return { ...given, ...events, ...tools };
}

/** A breakpoint option as LangGraph takes it: `"*"` or a list of node names; undefined when not set. */
function breakpoints(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "*") return ["*"];
  if (!Array.isArray(value) || !value.every((node) => typeof node === "string")) throw httpError("REQUEST_INVALID", `${field} must be "*" or a list of node names`, { field });
  return value.length === 0 ? undefined : (value as string[]);
}

/**
 * A request's `config.metadata` (LangGraph's RunnableConfig metadata, which the official server
 * hands to the graph, so it lands in the run's checkpoints' metadata); undefined when not given,
 * 422 when not an object.
 */
export function configMetadataOf(body: RunCreateBody): Record<string, unknown> | undefined {
  const metadata = body.config?.["metadata"];
  if (metadata === undefined || metadata === null) return undefined;
  if (typeof metadata !== "object" || Array.isArray(metadata)) throw httpError("REQUEST_INVALID", "config.metadata must be an object", { field: "config.metadata" });
  return metadata as Record<string, unknown>;
}

/**
 * The run options of a request every graph's runs take, in `runtime.runs.create`'s terms:
 * `metadata` (the request's `config.metadata` with its `metadata` over it: devmind's run metadata
 * reaches the run's checkpoints as the official server's `config.metadata` does, and the run
 * record as its `metadata` does), `after_seconds`, `interrupt_before` / `interrupt_after`, and the
 * checkpoint to start from (`checkpoint_id`, or `checkpoint: {checkpoint_id, checkpoint_ns: ""}`).
 */
export function runOptionsOf(body: RunCreateBody): { metadata?: Record<string, unknown>; afterSeconds?: number; interruptBefore?: string[]; interruptAfter?: string[]; checkpointId?: string } {
  const raw = body as Record<string, unknown>;
  const afterSeconds = raw["after_seconds"];
  if (afterSeconds !== undefined && afterSeconds !== null && (typeof afterSeconds !== "number" || !Number.isFinite(afterSeconds) || afterSeconds < 0)) {
    throw httpError("REQUEST_INVALID", "after_seconds must be a non-negative number", { field: "after_seconds" });
  }
  const checkpoint = raw["checkpoint"] as { checkpoint_id?: unknown; checkpoint_ns?: unknown } | null | undefined;
  if (checkpoint !== undefined && checkpoint !== null) {
    if (typeof checkpoint !== "object" || typeof checkpoint.checkpoint_id !== "string") throw httpError("REQUEST_INVALID", "checkpoint must be {checkpoint_id, checkpoint_ns?}", { field: "checkpoint" });
    if (checkpoint.checkpoint_ns !== undefined && checkpoint.checkpoint_ns !== null && checkpoint.checkpoint_ns !== "") {
      throw httpError("REQUEST_INVALID", "checkpoint.checkpoint_ns is not supported: runs start from a checkpoint of the graph itself", { field: "checkpoint.checkpoint_ns" });
    }
  }
  const checkpointId = (raw["checkpoint_id"] as string | null | undefined) ?? (checkpoint?.checkpoint_id as string | undefined);
  if (checkpointId !== undefined && typeof checkpointId !== "string") throw httpError("REQUEST_INVALID", "checkpoint_id must be a string", { field: "checkpoint_id" });
  const interruptBefore = breakpoints(raw["interrupt_before"], "interrupt_before");
  const interruptAfter = breakpoints(raw["interrupt_after"], "interrupt_after");
  const configMetadata = configMetadataOf(body);
  const metadata = configMetadata === undefined ? (body.metadata ?? undefined) : { ...configMetadata, ...(body.metadata ?? {}) };
  return {
    ...(metadata === undefined ? {} : { metadata }),
    ...(typeof afterSeconds === "number" && afterSeconds > 0 ? { afterSeconds } : {}),
    ...(interruptBefore === undefined ? {} : { interruptBefore }),
    ...(interruptAfter === undefined ? {} : { interruptAfter }),
    ...(checkpointId === undefined ? {} : { checkpointId }),
  };
}

/**
 * A run's `config` for a user graph: `configurable` (an object), `recursion_limit` (a positive
 * integer) and `tags` (strings); `metadata` is the run's (`runOptionsOf`); any other key is
 * refused naming it.
 */
export function graphConfigOf(config: Record<string, unknown> | null | undefined): RunGraphConfig | undefined {
  if (config === undefined || config === null) return undefined;
  const extra = Object.keys(config).filter((key) => !(CONFIG_KEYS as readonly string[]).includes(key) && key !== "metadata" && config[key] !== undefined && config[key] !== null);
  if (extra.length > 0) throw httpError("REQUEST_INVALID", `config.${extra[0]} is not supported by devmind serve (configurable, recursion_limit and tags are)`, { field: `config.${extra[0]}` });
  const result: RunGraphConfig = {};
  const { configurable, recursion_limit: recursionLimit, tags } = config;
  if (configurable !== undefined && configurable !== null) {
    if (typeof configurable !== "object" || Array.isArray(configurable)) throw httpError("REQUEST_INVALID", "config.configurable must be an object", { field: "config.configurable" });
    result.configurable = configurable as Record<string, unknown>;
  }
  if (recursionLimit !== undefined && recursionLimit !== null) {
    if (typeof recursionLimit !== "number" || !Number.isInteger(recursionLimit) || recursionLimit < 1) throw httpError("REQUEST_INVALID", "config.recursion_limit must be a positive integer", { field: "config.recursion_limit" });
    result.recursion_limit = recursionLimit;
  }
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === "string")) throw httpError("REQUEST_INVALID", "config.tags must be a list of strings", { field: "config.tags" });
    result.tags = tags as string[];
  }
  return result;
}

function isEmptyInput(input: unknown): boolean {
  return input === undefined || input === null || (typeof input === "object" && !Array.isArray(input) && Object.keys(input).length === 0);
}

function hasCommand(body: RunCreateBody): boolean {
  const command = body.command;
  return command !== undefined && command !== null && (command.resume !== undefined || command.update !== undefined || command.goto !== undefined);
}

/** Whether a resume value is the LangChain HITL decisions body `{decisions: [...]}`. */
function isDecisionsBody(value: unknown): boolean {
  return value !== null && typeof value === "object" && Array.isArray((value as { decisions?: unknown }).decisions);
}


/**
 * Starts what a run request asks of a graph on `thread`: a new run of the assistant `target`
 * names (its config and context under the run's) with the request's `input` passed through
 * unchanged, its `config` (configurable, recursion_limit, tags) and `context`; or — with
 * `command` — the run that resumes the thread's waiting run (CONTRACT section 3: a resume is a
 * new run), its resume audited with `audit` (who, and the reason when given): `command.resume` `{decisions: [...]}` on a
 * HITL-shaped interrupt is decided (`runtime.runs.decide`), anything else is
 * `runtime.runs.resume`'s Command (one value, or a map keyed by interrupt id; `update` and `goto`
 * passed through). A Command's `update` / `goto` on a thread that waits on nothing starts a run
 * with it. When a resume leaves an interrupt unanswered, the thread still waits: the waiting run
 * is returned.
 */
export async function startGraphRun(
  runtime: Runtime,
  thread: string,
  target: { assistantId: string; graphId: string | null },
  body: RunCreateBody,
  audit: { principal: string; reason?: string | undefined },
  completion: RunCompletionOptions = {},
  threadMustExist?: { access?: AccessFilter | undefined },
): Promise<StartedRun> {
  const options = runOptionsOf(body);
  const config = graphConfigOf(body.config);
  const limits = runLimitsOf(body);
  const streamMode = requestedModes(body);
  // what a run this request creates starts with, whichever kind of run it is
  const shared = {
    ...(config === undefined ? {} : { config }),
    ...(body.context === undefined || body.context === null ? {} : { context: body.context }),
    ...(limits === undefined ? {} : { limits }),
    ...(streamMode === undefined ? {} : { streamMode }),
    webhook: body.webhook ?? null,
  };
  const created = { threadId: thread, assistantId: target.assistantId, ...options, ...shared, multitask: multitaskOf(body), ...completion, ...(threadMustExist === undefined ? {} : { threadMustExist }) };
  if (hasCommand(body)) {
    if (!isEmptyInput(body.input)) throw httpError("REQUEST_INVALID", "send either input or command, not both");
    const command = body.command as { resume?: unknown; update?: unknown; goto?: unknown };
    const [waiting] = await runtime.runs.list({ threadId: thread, waiting: true, limit: 1 });
    if (waiting === undefined) {
      if (command.resume !== undefined) throw new RunConflictError(`thread ${thread} has no interrupted run to resume`, { threadId: thread });
      // a Command's update / goto with nothing to resume: a run that starts with it
      const commanded = { ...(command.update === undefined ? {} : { update: command.update }), ...(command.goto === undefined ? {} : { goto: command.goto }), by: audit.principal };
      return { run: await runtime.runs.create({ ...created, input: null, command: commanded }) };
    }
    if (target.graphId !== null && waiting.graph_id !== target.graphId) throw new RunConflictError(`thread ${thread}'s interrupted run is of graph ${waiting.graph_id}, not ${target.graphId}`, { threadId: thread, graphId: waiting.graph_id });
    // the resuming run takes the request's options (not `checkpointId`: it continues where the thread waits)
    const { checkpointId: _checkpointId, ...resumeOptions } = options;
    const next: NextRunOptions = { ...shared, ...resumeOptions };
    const resumeAudit = { principal: audit.principal, ...(audit.reason === undefined ? {} : { reason: audit.reason }) };
    const hitl = (waiting.interrupts ?? []).some((item) => isHitlRequest(item.value));
    if (hitl && isDecisionsBody(command.resume) && command.update === undefined && command.goto === undefined) {
      return { run: await runtime.runs.decide(waiting.run_id, command.resume, resumeAudit, next) };
    }
    const given = Object.fromEntries(Object.entries({ resume: command.resume, update: command.update, goto: command.goto }).filter(([, value]) => value !== undefined));
    return { run: await runtime.runs.resume(waiting.run_id, { command: given }, resumeAudit, next) };
  }
  const from = options.checkpointId === undefined ? undefined : await runtime.threads.stateAt(thread, options.checkpointId);
  if (options.checkpointId !== undefined && from?.createdAt === undefined) {
    throw httpError("NOT_FOUND", `no checkpoint ${JSON.stringify(options.checkpointId.slice(0, 100))} on thread ${thread}`, { field: "checkpoint_id" });
  }
  // no input continues the thread from a checkpoint: without one there is nothing to run (LangGraph
  // would fail the run for its missing input), so the request is refused and nothing is created
  if (body.input === undefined || body.input === null) {
    const state = from ?? (await runtime.threads.state(thread));
    if (state.createdAt === undefined) {
      throw httpError("REQUEST_INVALID", "input is required: the thread has no checkpoint to continue from (input null continues one; command resumes an interrupted run)", { field: "input" });
    }
  }
  // input null continues the thread from its checkpoint (after a breakpoint, or from `checkpoint_id`)
  return { run: await runtime.runs.create({ ...created, input: body.input ?? null }) };
}
