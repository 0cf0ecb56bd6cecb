import type { StateSnapshot } from "@langchain/langgraph";
import { SERVER_DEFAULTS } from "../constants.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { plainJson, type ThreadRecord } from "../runtime/runtime.js";
import { withHitlCopies } from "../vocabulary/hitl.js";

/**
 * The built-in agent's assistant id: LangGraph's default assistant id for graph `agent` (uuid5 of
 * the graph id in LangGraph's namespace, `assistantIdFor`), so clients that pass either the graph
 * id or this uuid agree.
 */
export const AGENT_ASSISTANT_ID: string = SERVER_DEFAULTS.assistantId;

/** A value as JSON the LangGraph clients read: messages as dicts (the runtime's `plainJson`). */
export const toWire: (value: unknown) => unknown = plainJson;

/**
 * An interrupt as the LangGraph clients read it, `{id, value}`: its value as plain JSON, a
 * human-in-the-loop request of any graph with the snake_case copies Agent Chat UI reads (`withHitlCopies`).
 */
export function interruptWire(item: { id?: string | undefined; value?: unknown }): { id: string | undefined; value: unknown } {
  return { id: item.id, value: withHitlCopies(toWire(item.value)) };
}

/** The interrupts of a snapshot's tasks as `[{id, value}]`. */
export function interruptsOf(snapshot: StateSnapshot): { id: string | undefined; value: unknown }[] {
  return snapshot.tasks.flatMap((task) => task.interrupts.map(interruptWire));
}

function checkpointWire(config: StateSnapshot["config"] | undefined, threadId: string): Record<string, unknown> | null {
  const id = config?.configurable?.["checkpoint_id"];
  if (typeof id !== "string") return null;
  return { thread_id: threadId, checkpoint_ns: String(config?.configurable?.["checkpoint_ns"] ?? ""), checkpoint_id: id, checkpoint_map: null };
}

/** A state snapshot as LangGraph's ThreadState: values, next, tasks with interrupts, checkpoints. */
export function stateWire(snapshot: StateSnapshot, threadId: string): Record<string, unknown> {
  return {
    values: toWire(snapshot.values ?? {}),
    next: [...snapshot.next],
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error === undefined || task.error === null ? null : String((task.error as { message?: unknown }).message ?? task.error),
      interrupts: task.interrupts.map(interruptWire),
      // as the official server: the task's path, a subgraph task's checkpoint (its namespace), the result or null
      ...(task.path === undefined ? {} : { path: toWire(task.path) }),
      checkpoint: subgraphCheckpoint(task.state),
      // read with `subgraphs`: an interrupted subgraph task carries that subgraph's own state
      state: isStateSnapshot(task.state) ? stateWire(task.state, threadId) : null,
      result: task.result === undefined ? null : toWire(task.result),
    })),
    metadata: toWire(snapshot.metadata ?? {}),
    created_at: snapshot.createdAt ?? null,
    checkpoint: checkpointWire(snapshot.config, threadId) ?? { thread_id: threadId, checkpoint_ns: "", checkpoint_id: null, checkpoint_map: null },
    parent_checkpoint: checkpointWire(snapshot.parentConfig, threadId),
  };
}

/** True for a task's `state` that is a subgraph's state snapshot (not the config naming its checkpoint). */
function isStateSnapshot(state: unknown): state is StateSnapshot {
  return state !== null && typeof state === "object" && "values" in state && "next" in state;
}

/**
 * The checkpoint a subgraph task's `state` config names, as the official server shows it: that
 * config's `configurable` as LangGraph gives it (`{thread_id, checkpoint_ns}` for a subgraph task
 * of the thread's state; no `checkpoint_id` or `checkpoint_map` LangGraph did not set), without
 * internal (`__`) keys; null for a task with no subgraph.
 */
function subgraphCheckpoint(state: unknown): Record<string, unknown> | null {
  if (state === null || typeof state !== "object" || !("configurable" in state)) return null;
  const configurable = (state as StateSnapshot["config"]).configurable ?? {};
  if (typeof configurable["checkpoint_ns"] !== "string") return null;
  return toWire(Object.fromEntries(Object.entries(configurable).filter(([key, value]) => !key.startsWith("__") && value !== undefined))) as Record<string, unknown>;
}

/** A thread as LangGraph's Thread, with the latest state's values and open interrupts (by task id). */
export function threadWire(thread: ThreadRecord, state: StateSnapshot | undefined): Record<string, unknown> {
  const interrupts: Record<string, unknown[]> = {};
  for (const task of state?.tasks ?? []) {
    if (task.interrupts.length > 0) interrupts[task.id] = task.interrupts.map(interruptWire);
  }
  return {
    thread_id: thread.thread_id,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
    state_updated_at: state?.createdAt ?? thread.updated_at,
    metadata: thread.metadata,
    status: thread.status,
    values: state === undefined ? null : toWire(state.values ?? {}),
    interrupts,
    config: {},
    error: null,
  };
}

/**
 * A run as LangGraph's Run (`run_id`, `thread_id`, `assistant_id` (its graph's assistant uuid), `status`, `metadata`,
 * `multitask_strategy`, times) plus devmind's record fields (`stop_reason`, `answer`, counts,
 * `usage`, `error`), so one object serves both kinds of client. `input` and the lease stay out.
 */
export function runWire(run: RunRecord): Record<string, unknown> {
  const { input: _input, lease: _lease, limits: _limits, ...rest } = run;
  return { ...rest, multitask_strategy: null, kwargs: {} };
}
