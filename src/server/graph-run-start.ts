import { RunConflictError } from "../errors.js";
import type { RunGraphConfig } from "../runtime/run-record.js";
import { isHitlRequest, type Runtime } from "../runtime/runtime.js";
import { httpError } from "./http-errors.js";
import type { StartedRun } from "./run-start.js";
import type { RunCreateBody } from "./validation.js";

/** The keys of a run's `config` devmind passes to a graph (CONTRACT section 10). */
const CONFIG_KEYS = ["configurable", "recursion_limit", "tags"] as const;

/**
 * LangGraph run options devmind does not implement, with the values that ask for nothing (the
 * SDK sends a field only when the caller set it). Any other value is refused with a 422 naming
 * the option, never accepted and ignored.
 */
const UNSUPPORTED_OPTIONS: Record<string, (value: unknown) => boolean> = {
  interrupt_before: (value) => Array.isArray(value) && value.length === 0,
  interrupt_after: (value) => Array.isArray(value) && value.length === 0,
  checkpoint: () => false,
  checkpoint_id: () => false,
  feedback_keys: (value) => Array.isArray(value) && value.length === 0,
  after_seconds: (value) => value === 0,
  on_completion: (value) => value === "keep",
  stream_subgraphs: (value) => value === false,
  checkpoint_during: (value) => value === true,
  durability: (value) => value === "sync" || value === "async",
  strict_resume: (value) => value === false,
  langsmith_tracer: () => false,
};

/** Refuses (422 REQUEST_INVALID, naming it) the first LangGraph run option set that devmind does not implement. */
export function refuseUnsupportedOptions(body: RunCreateBody): void {
  const raw = body as Record<string, unknown>;
  for (const [option, neutral] of Object.entries(UNSUPPORTED_OPTIONS)) {
    const value = raw[option];
    if (value === undefined || value === null || neutral(value)) continue;
    throw httpError("REQUEST_INVALID", `${option} is not supported by devmind serve`, { field: option });
  }
  if (body.metadata !== undefined && body.metadata !== null && Object.keys(body.metadata).length > 0) {
    throw httpError("REQUEST_INVALID", "run metadata is not supported by devmind serve (thread metadata is: PATCH /threads/{id})", { field: "metadata" });
  }
}

/**
 * A run's `config` for a user graph: `configurable` (an object), `recursion_limit` (a positive
 * integer) and `tags` (strings); any other key is refused naming it.
 */
export function graphConfigOf(config: Record<string, unknown> | null | undefined): RunGraphConfig | undefined {
  if (config === undefined || config === null) return undefined;
  const extra = Object.keys(config).filter((key) => !(CONFIG_KEYS as readonly string[]).includes(key) && config[key] !== undefined && config[key] !== null);
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
 * Starts what a run request asks of a user graph (not the built-in agent) on `thread`: a new run
 * of `graphId` with the request's `input` passed through unchanged, its `config` (configurable,
 * recursion_limit, tags) and `context`; or — with `command` — the resume of the thread's
 * interrupted run, audited with `principal`: `command.resume` `{decisions: [...]}` on a HITL-shaped
 * interrupt is decided (`runtime.runs.decide`), anything else is `runtime.runs.resume`'s Command
 * (one value, or a map keyed by interrupt id; `update` and `goto` passed through). The same run
 * continues; the stream starts after what the run had already produced.
 */
export async function startGraphRun(runtime: Runtime, thread: string, graphId: string, body: RunCreateBody, principal: string): Promise<StartedRun> {
  if (hasCommand(body)) {
    if (!isEmptyInput(body.input)) throw httpError("REQUEST_INVALID", "send either input or command, not both");
    const [waiting] = await runtime.runs.list({ threadId: thread, status: "interrupted", limit: 1 });
    if (waiting === undefined) throw new RunConflictError(`thread ${thread} has no interrupted run to resume`, { threadId: thread });
    if (waiting.graph_id !== graphId) throw new RunConflictError(`thread ${thread}'s interrupted run is of graph ${waiting.graph_id}, not ${graphId}`, { threadId: thread, graphId: waiting.graph_id });
    const startSeq = await runtime.runs.lastEventSeq(waiting.run_id);
    const { snapshots } = await runtime.threads.runSnapshots(thread, waiting.run_id, undefined);
    const command = body.command as { resume?: unknown; update?: unknown; goto?: unknown };
    const hitl = (waiting.interrupts ?? []).some((item) => isHitlRequest(item.value));
    if (hitl && isDecisionsBody(command.resume) && command.update === undefined && command.goto === undefined) {
      await runtime.runs.decide(waiting.run_id, command.resume, { principal });
    } else {
      const given = Object.fromEntries(Object.entries({ resume: command.resume, update: command.update, goto: command.goto }).filter(([, value]) => value !== undefined));
      await runtime.runs.resume(waiting.run_id, { command: given }, { principal });
    }
    const run = await runtime.runs.get(waiting.run_id);
    let resumed = run.status !== "interrupted";
    if (!resumed) for await (const event of runtime.runs.events(run.run_id, { after: startSeq })) if (event.type === "run.resumed") resumed = true;
    return { run, from: { seq: startSeq, values: snapshots.length, settled: snapshots.length }, waitForResume: resumed, startSeq };
  }
  if (body.input === undefined || body.input === null) throw httpError("REQUEST_INVALID", `input is required for graph ${graphId} (or command to resume its interrupted run)`, { field: "input" });
  const config = graphConfigOf(body.config);
  const run = await runtime.runs.create({
    threadId: thread,
    assistantId: graphId,
    input: body.input,
    ...(config === undefined ? {} : { config }),
    ...(body.context === undefined || body.context === null ? {} : { context: body.context }),
    multitask: body.multitask_strategy === "enqueue" ? "enqueue" : "reject",
    ...(body.limits === undefined || body.limits === null ? {} : { limits: body.limits }),
    webhook: body.webhook ?? null,
  });
  return { run, waitForResume: false, startSeq: 0 };
}
