import type { StateSnapshot } from "@langchain/langgraph";
import { DevmindError } from "../../errors.js";
import { runInputError } from "../queue/run-record.js";

/** Bounds of reading a thread's checkpoints. */
export const THREAD_STATE_LIMITS = {
  /** `history` returns at most this many states per call. */
  historyMax: 1_000,
  /** `runSnapshots` looks at most this many checkpoints back for a run's first one. */
  runScanMax: 5_000,
} as const;

/** A run's checkpoints after a known one, oldest first, and where the next read may stop. */
export interface RunSnapshots {
  snapshots: StateSnapshot[];
  /** The thread's newest checkpoint id as read (of this run or not): a later read may stop there. */
  newestId: string | undefined;
  /**
   * Checkpoint `afterId` read again: its tasks' writes (results, interrupts) may have been stored
   * since the caller read it (they are final once a newer checkpoint exists).
   */
  after: StateSnapshot | undefined;
  /** The older checkpoint of another run (or the run's input) the walk stopped at, as read: the run's start when it is its first checkpoint's parent. */
  stoppedAt?: StateSnapshot | undefined;
}

/** The id of a snapshot's checkpoint. */
export function checkpointIdOf(snapshot: StateSnapshot): string {
  return String(snapshot.config.configurable?.["checkpoint_id"] ?? "");
}

/** True when a snapshot belongs to run `runId` (the agent's state or a user graph's checkpoint metadata names it) and is not the next run's input. */
function ofRun(snapshot: StateSnapshot, runId: string): boolean {
  const named = (snapshot.values as { run_id?: unknown } | undefined)?.run_id === runId || (snapshot.metadata as { run_id?: unknown } | undefined)?.run_id === runId;
  return named && snapshot.metadata?.source !== "input";
}

/** What reading a thread's state needs of a graph (the agent's or a user graph compiled with devmind's saver). */
export interface StateReadableGraph {
  getState(config: { configurable: Record<string, unknown> }, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  getStateHistory(
    config: { configurable: Record<string, unknown> },
    options?: { limit?: number; before?: { configurable: Record<string, unknown> }; filter?: Record<string, unknown> },
  ): AsyncIterable<StateSnapshot>;
  updateState(config: { configurable: Record<string, unknown> }, values: unknown, asNode?: string): Promise<{ configurable?: Record<string, unknown> }>;
  bulkUpdateState?(config: { configurable: Record<string, unknown> }, supersteps: { updates: { values: unknown; asNode?: string | undefined }[] }[]): Promise<{ configurable?: Record<string, unknown> }>;
}

/** Filters of `history` (LangGraph's `POST /threads/{id}/history`). */
export interface HistoryOptions {
  /** 1..THREAD_STATE_LIMITS.historyMax, default 10. */
  limit?: number | undefined;
  /** Only states older than this checkpoint. */
  before?: string | undefined;
  /** Only states whose checkpoint metadata contains these keys and values. */
  metadata?: Record<string, unknown> | undefined;
  /** Start at this checkpoint (it and its ancestors) instead of the newest. */
  checkpointId?: string | undefined;
  /** The states of this subgraph namespace (`node:task_id[|...]`, a subgraph task's `checkpoint_ns`) instead of the graph's own. */
  checkpointNs?: string | undefined;
}

/**
 * Which state to read (LangGraph's `getState` options): `checkpointNs` a subgraph's namespace
 * (`node:task_id[|...]`, as a subgraph task's `checkpoint` names it) instead of the graph's own;
 * `subgraphs` each task of an interrupted subgraph carries that subgraph's state (`tasks[].state`).
 */
export interface StateOptions {
  checkpointNs?: string | undefined;
  subgraphs?: boolean | undefined;
  /** The run whose checkpoint this is, when the caller has it: its graph reads it (no lookup of the thread's latest run). */
  run?: GraphOfRun | undefined;
}

/** The `configurable` of a read at `checkpointNs` (nothing for the graph's own, `""`). */
function namespaced(threadId: string, checkpointNs: string | undefined, checkpointId?: string): Record<string, unknown> {
  return { thread_id: threadId, ...(checkpointNs === undefined || checkpointNs === "" ? {} : { checkpoint_ns: checkpointNs }), ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }) };
}

/** True for LangGraph's "No checkpointer set": the graph (or the subgraph a namespace names) was compiled with `checkpointer: false`. */
function isMissingCheckpointer(error: unknown): boolean {
  return (error as { lc_error_code?: unknown } | null)?.lc_error_code === "MISSING_CHECKPOINTER";
}

/** True when `checkpointNs` names a subgraph namespace (not the graph's own, `""`). */
function isSubgraphNs(checkpointNs: string | undefined): checkpointNs is string {
  return checkpointNs !== undefined && checkpointNs !== "";
}

/**
 * Runs a read or write at a subgraph namespace: LangGraph's "Subgraph … not found" (a namespace
 * the thread's graph has no subgraph for; LangGraph throws it for updates, a read finds no
 * checkpoint there and answers an empty state) becomes NOT_FOUND naming it. `stateless`: what a
 * read answers for a subgraph compiled with `checkpointer: false` (LangGraph throws "No
 * checkpointer set": it stores nothing, so there is nothing to read, as at a namespace without
 * checkpoints); without it (a write) that is RUN_INPUT_INVALID (422) naming the namespace.
 */
async function atNamespace<T>(checkpointNs: string | undefined, read: () => Promise<T>, stateless?: () => T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isSubgraphNs(checkpointNs) && error instanceof Error && /^Subgraph (with namespace )?.* not found/i.test(error.message)) {
      throw new DevmindError("NOT_FOUND", `no subgraph for checkpoint_ns ${JSON.stringify(checkpointNs.slice(0, 200))} in the thread's graph`, { details: { field: "checkpoint_ns" } });
    }
    if (isSubgraphNs(checkpointNs) && isMissingCheckpointer(error)) {
      if (stateless !== undefined) return stateless();
      throw runInputError(`the subgraph at checkpoint_ns ${JSON.stringify(checkpointNs.slice(0, 200))} is compiled with checkpointer: false: it keeps no state to update`, { field: "checkpoint_ns" });
    }
    throw error;
  }
}

/** The state of a namespace holding no checkpoint, as LangGraph's getState answers one: no values, no tasks, the config read. */
function emptyState(configurable: Record<string, unknown>): StateSnapshot {
  return { values: {}, next: [], tasks: [], config: { configurable } };
}

/**
 * Reads a thread's state from the agent graph's checkpoints: the current state, the history
 * (newest first, as LangGraph's `getStateHistory`), and the checkpoints one run wrote, which is
 * how a server streams a run another process executes (values after each step, updates from the
 * step's task writes, interrupts from its tasks).
 */
/** A run's graph and configurable, when a reader of its checkpoints has the run: its graph needs no lookup. */
export interface GraphOfRun {
  graphId: string;
  configurable?: Record<string, unknown> | undefined;
}

export class ThreadStateReader {
  /** `graphFor(threadId, run?)`: the graph whose checkpoints the thread holds (its runs' graph; `run`'s when the caller knows the run). */
  constructor(private readonly graphFor: (threadId: string, run?: GraphOfRun) => Promise<StateReadableGraph>) {}

  /** The thread's latest state (empty values and no tasks for a thread without checkpoints); `options` (StateOptions) a subgraph's, nested states. */
  async state(threadId: string, options: StateOptions = {}): Promise<StateSnapshot> {
    const graph = await this.graphFor(threadId);
    const configurable = namespaced(threadId, options.checkpointNs);
    return atNamespace(options.checkpointNs, () => graph.getState({ configurable }, { subgraphs: options.subgraphs === true }), () => emptyState(configurable));
  }

  /** The state at one checkpoint of the thread (of a subgraph's namespace with `options.checkpointNs`). */
  async stateAt(threadId: string, checkpointId: string, options: StateOptions = {}): Promise<StateSnapshot> {
    const graph = await this.graphFor(threadId, options.run);
    const configurable = namespaced(threadId, options.checkpointNs, checkpointId);
    return atNamespace(options.checkpointNs, () => graph.getState({ configurable }, { subgraphs: options.subgraphs === true }), () => emptyState(configurable));
  }

  /** Up to `limit` (default 10) states, newest first, older than checkpoint `before` when given. */
  async history(threadId: string, options: HistoryOptions = {}): Promise<StateSnapshot[]> {
    const limit = options.limit ?? 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > THREAD_STATE_LIMITS.historyMax) {
      throw runInputError(`limit must be an integer from 1 to ${THREAD_STATE_LIMITS.historyMax}`, { field: "limit" });
    }
    const graph = await this.graphFor(threadId);
    const states: StateSnapshot[] = [];
    const before = options.before === undefined ? undefined : { configurable: { thread_id: threadId, checkpoint_id: options.before } };
    const from = { configurable: namespaced(threadId, options.checkpointNs, options.checkpointId) };
    const filter = options.metadata === undefined ? {} : { filter: options.metadata };
    await atNamespace(options.checkpointNs, async () => {
      for await (const snapshot of graph.getStateHistory(from, { limit, ...(before === undefined ? {} : { before }), ...filter })) {
        states.push(snapshot);
        if (states.length >= limit) break;
      }
    }, () => undefined);
    return states;
  }

  /**
   * Writes `values` to the thread's state as node `asNode` would (LangGraph's `updateState`), on
   * its latest checkpoint or on `checkpointId` (forking there); with `checkpointNs`, the state of
   * that subgraph (LangGraph hands the update to the subgraph). Returns the new checkpoint's id.
   */
  async updateState(threadId: string, values: unknown, options: { asNode?: string | undefined; checkpointId?: string | undefined; checkpointNs?: string | undefined } = {}): Promise<string> {
    const graph = await this.graphFor(threadId);
    const config = { configurable: { checkpoint_ns: "", ...namespaced(threadId, options.checkpointNs, options.checkpointId) } };
    const next = await atNamespace(options.checkpointNs, () => graph.updateState(config, values, options.asNode));
    return String(next.configurable?.["checkpoint_id"] ?? "");
  }

  /** Applies supersteps of updates (LangGraph's `bulkUpdateState`; one `updateState` per step on older LangGraph). */
  async applySupersteps(threadId: string, supersteps: readonly { updates: readonly { values: unknown; asNode?: string | undefined }[] }[]): Promise<string> {
    const graph = await this.graphFor(threadId);
    const config = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
    const steps = supersteps.map((step) => ({ updates: step.updates.map((update) => ({ values: update.values, ...(update.asNode === undefined ? {} : { asNode: update.asNode }) })) }));
    if (typeof graph.bulkUpdateState === "function") return String((await graph.bulkUpdateState(config, steps)).configurable?.["checkpoint_id"] ?? "");
    let last = "";
    for (const step of steps) for (const update of step.updates) last = String((await graph.updateState(config, update.values, update.asNode)).configurable?.["checkpoint_id"] ?? "");
    return last;
  }

  /**
   * The checkpoints run `runId` wrote on `threadId` after checkpoint `afterId` (all of them when
   * undefined), oldest first. Walks the history newest first and stops at `afterId` or at the
   * first older checkpoint of another run, so a poll that finds nothing new reads one page. A
   * caller that found none yet passes the returned `newestId` next time: the run's checkpoints
   * can only come after it.
   */
  async runSnapshots(threadId: string, runId: string, afterId: string | undefined, run?: GraphOfRun): Promise<RunSnapshots> {
    const graph = await this.graphFor(threadId, run);
    const found: StateSnapshot[] = [];
    let newestId: string | undefined;
    let after: StateSnapshot | undefined;
    let stoppedAt: StateSnapshot | undefined;
    let seen = 0;
    for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: threadId } })) {
      seen += 1;
      newestId ??= checkpointIdOf(snapshot);
      if (afterId !== undefined && checkpointIdOf(snapshot) === afterId) {
        after = snapshot;
        break;
      }
      if (ofRun(snapshot, runId)) found.push(snapshot);
      else if (found.length > 0) {
        stoppedAt = snapshot;
        break;
      }
      if (seen >= THREAD_STATE_LIMITS.runScanMax) break;
    }
    return { snapshots: found.reverse(), newestId: newestId ?? afterId, after, stoppedAt };
  }

  /**
   * Every checkpoint of one subgraph invocation on `threadId`, oldest first: the namespace
   * `checkpointNs` (`node:task_id`, nested ones joined with `|`) that LangGraph gives a subgraph
   * task. None for a namespace the thread's graph has no subgraph for. `run`: the run whose
   * subgraph it is, when the caller has it: its graph reads it (a later run of the thread may run
   * another graph, without that subgraph). Undefined for a subgraph compiled with
   * `checkpointer: false`: it stores nothing, so nothing is ever there to wait for.
   */
  async namespaceSnapshots(threadId: string, checkpointNs: string, run?: GraphOfRun): Promise<StateSnapshot[] | undefined> {
    const graph = await this.graphFor(threadId, run);
    const found: StateSnapshot[] = [];
    try {
      for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: threadId, checkpoint_ns: checkpointNs } })) {
        found.push(snapshot);
        if (found.length >= THREAD_STATE_LIMITS.runScanMax) break;
      }
    } catch (error) {
      // LangGraph names a namespace without a subgraph in its message: nothing to read there
      if (error instanceof Error && /not found/i.test(error.message)) return [];
      // a subgraph without a checkpointer of its own (`checkpointer: false`) keeps no history
      if (isMissingCheckpointer(error)) return undefined;
      throw error;
    }
    return found.reverse();
  }
}
