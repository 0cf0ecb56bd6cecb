import type { StateSnapshot } from "@langchain/langgraph";
import { interruptWire, toWire } from "./wire.js";

/** One part of a run stream before it gets its resume id. */
export interface ModePart {
  event: string;
  data: unknown;
}

type SnapshotTask = StateSnapshot["tasks"][number];

/**
 * The SSE event name of a stream mode's part: the mode itself at the top level, `mode|ns1|ns2`
 * for a part of a subgraph (`ns` as LangGraph names checkpoint namespaces, `node:task_id`), as
 * the official server names them with `stream_subgraphs`.
 */
export function modeEvent(mode: string, ns: readonly string[]): string {
  return ns.length === 0 ? mode : `${mode}|${ns.join("|")}`;
}

/** A checkpoint config as LangGraph's server sends it: `configurable` without internal (`__`) keys. */
function configWire(config: StateSnapshot["config"] | undefined): Record<string, unknown> | undefined {
  if (config?.configurable === undefined) return undefined;
  return { configurable: Object.fromEntries(Object.entries(config.configurable).filter(([key]) => !key.startsWith("__"))) };
}

/** A checkpoint config as the SDK's `Checkpoint` (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `checkpoint_map`). */
function checkpointOf(config: StateSnapshot["config"] | undefined): Record<string, unknown> | null {
  const configurable = config?.configurable;
  if (configurable === undefined || typeof configurable["thread_id"] !== "string") return null;
  return {
    thread_id: configurable["thread_id"],
    checkpoint_ns: typeof configurable["checkpoint_ns"] === "string" ? configurable["checkpoint_ns"] : "",
    checkpoint_id: typeof configurable["checkpoint_id"] === "string" ? configurable["checkpoint_id"] : null,
    checkpoint_map: configurable["checkpoint_map"] ?? null,
  };
}

function errorText(error: unknown): string | null {
  if (error === undefined || error === null) return null;
  if (typeof error === "string") return error;
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" ? message : String(error);
}

function interruptsWire(task: SnapshotTask): { id: string | undefined; value: unknown }[] {
  return task.interrupts.map(interruptWire);
}

/**
 * A checkpoint's task as LangGraph's debug checkpoint lists it when the checkpoint is made, before
 * the task ran (so a replay sends what the live stream sent: no result, error or interrupt that
 * came later); a subgraph task names its `checkpoint` namespace.
 */
function checkpointTask(task: SnapshotTask): Record<string, unknown> {
  const state = task.state as StateSnapshot["config"] | undefined;
  const checkpoint = state !== undefined && typeof state === "object" && "configurable" in state ? checkpointOf(state) : null;
  return { id: task.id, name: task.name, ...(task.path === undefined ? {} : { path: task.path }), interrupts: [], ...(checkpoint === null ? {} : { checkpoint }) };
}

/**
 * A checkpoint as the official server's `checkpoints` and `debug` modes send it: `config`,
 * `parent_config`, `values`, `metadata`, `next`, `tasks`, plus `checkpoint` / `parent_checkpoint`.
 */
export function checkpointPayload(snapshot: StateSnapshot): Record<string, unknown> {
  const parent = configWire(snapshot.parentConfig);
  return {
    config: configWire(snapshot.config) ?? {},
    ...(parent === undefined ? {} : { parent_config: parent }),
    values: toWire(snapshot.values ?? {}),
    metadata: toWire(snapshot.metadata ?? {}),
    next: [...snapshot.next],
    tasks: snapshot.tasks.map(checkpointTask),
    checkpoint: checkpointOf(snapshot.config),
    parent_checkpoint: checkpointOf(snapshot.parentConfig),
  };
}

function stepOf(snapshot: StateSnapshot): number {
  const step = snapshot.metadata?.step;
  return typeof step === "number" ? step : 0;
}

function timestampOf(snapshot: StateSnapshot | undefined): string {
  return snapshot?.createdAt ?? new Date(0).toISOString();
}

/** True for LangGraph's own tasks (`__start__`), which its task streams leave out. */
function isInternal(task: SnapshotTask): boolean {
  return task.name.startsWith("__");
}

/** `checkpoints` and `debug {type: "checkpoint"}` parts of one checkpoint, for the modes asked. */
export function checkpointParts(snapshot: StateSnapshot, modes: ReadonlySet<string>, ns: readonly string[]): ModePart[] {
  if (!modes.has("checkpoints") && !modes.has("debug")) return [];
  const payload = checkpointPayload(snapshot);
  const parts: ModePart[] = [];
  if (modes.has("checkpoints")) parts.push({ event: modeEvent("checkpoints", ns), data: payload });
  if (modes.has("debug")) parts.push({ event: modeEvent("debug", ns), data: { step: stepOf(snapshot), type: "checkpoint", timestamp: timestampOf(snapshot), payload } });
  return parts;
}

/**
 * The task a checkpoint hands on as LangGraph's task stream starts it: `{id, name, input,
 * triggers, interrupts: []}`. A node pulled by its edges reads the state (the checkpoint's
 * values); a task a `Send` pushed got the Send's argument, which devmind does not keep apart
 * from the checkpoint: its `input` is null.
 */
function taskStart(snapshot: StateSnapshot, task: SnapshotTask): Record<string, unknown> {
  const pushed = task.path?.[0] === "__pregel_push";
  return {
    id: task.id,
    name: task.name,
    input: pushed ? null : toWire(snapshot.values ?? {}),
    triggers: pushed ? ["__pregel_push"] : [`branch:to:${task.name}`],
    interrupts: [],
  };
}

/** `tasks` and `debug {type: "task"}` parts for the tasks a checkpoint starts. */
export function taskStartParts(snapshot: StateSnapshot, modes: ReadonlySet<string>, ns: readonly string[]): ModePart[] {
  if (!modes.has("tasks") && !modes.has("debug")) return [];
  const parts: ModePart[] = [];
  for (const task of snapshot.tasks) {
    if (isInternal(task)) continue;
    const payload = taskStart(snapshot, task);
    if (modes.has("tasks")) parts.push({ event: modeEvent("tasks", ns), data: payload });
    if (modes.has("debug")) parts.push({ event: modeEvent("debug", ns), data: { step: stepOf(snapshot) + 1, type: "task", timestamp: timestampOf(snapshot), payload } });
  }
  return parts;
}

/**
 * `tasks` and `debug {type: "task_result"}` parts for one task of `snapshot` that ended:
 * `{id, name, result, interrupts, error}` (`result` maps each written channel to its value).
 * `at` is the next checkpoint (when it finished, as far as the stored data tells); without one
 * the task paused or failed: its interrupts and error, and no result (a task resumed later has a
 * result too, sent when it finishes, so a replay sends what the live stream sent). `result`: the
 * task's writes in wire form when the caller has them already (with the state's message ids).
 */
export function taskResultParts(snapshot: StateSnapshot, task: SnapshotTask, at: StateSnapshot | undefined, modes: ReadonlySet<string>, ns: readonly string[], result?: unknown): ModePart[] {
  if ((!modes.has("tasks") && !modes.has("debug")) || isInternal(task)) return [];
  const finished = at !== undefined;
  const payload = { id: task.id, name: task.name, result: finished ? (result ?? toWire(task.result ?? {})) : {}, interrupts: finished ? [] : interruptsWire(task), error: finished ? null : errorText(task.error) };
  const parts: ModePart[] = [];
  if (modes.has("tasks")) parts.push({ event: modeEvent("tasks", ns), data: payload });
  if (modes.has("debug")) parts.push({ event: modeEvent("debug", ns), data: { step: stepOf(snapshot) + 1, type: "task_result", timestamp: timestampOf(at ?? snapshot), payload } });
  return parts;
}
