import type { RunnableConfig } from "@langchain/core/runnables";
import type { AgentEvent } from "../vocabulary/events.js";
import type { AgentLimits } from "../vocabulary/limits.js";

/** The configurable key under which the runtime hands a run's handle to the graph it executes. */
export const RUN_HANDLE_KEY = "__devmind_run";

/**
 * The key under which a node writes a step event (model.*, tool.call.*) into LangGraph's `custom`
 * stream (`config.writer({ [STEP_EVENT_KEY]: event })`), so it takes its place in the graph's own
 * stream order, between its task's start and end; the runtime stores it as the step event it is,
 * not as a custom part.
 */
export const STEP_EVENT_KEY = "__devmind_step_event";

/** A step event written into the custom stream, or undefined for any other custom write. */
export function stepEventOf(payload: unknown): AgentEvent | undefined {
  const event = (payload as Record<string, unknown> | null)?.[STEP_EVENT_KEY] as AgentEvent | undefined;
  return payload !== null && typeof payload === "object" && event !== undefined && typeof event.type === "string" ? event : undefined;
}

/** What a ledgered tool learns before it runs a call. */
export type GraphLedgerBegin =
  /** Run the tool, then `complete`. */
  | { state: "run" }
  /** Finished before (or its outcome is unknown): return `result` without running the tool. */
  | { state: "done"; ok: boolean; result: unknown };

/**
 * A run as the nodes of the graph executing it see it (read with `runHandleOf(config)`): its ids,
 * a signal aborted when the run is cancelled or its lease is lost, the run's tool ledger, its
 * limits, where its step events go, and a signal for draining. Keys starting with `__` never
 * reach checkpoint metadata, so the handle is never stored. The same for every graph: the agent
 * reads its cancel, limits, ledger and event sink from here, as any graph may.
 */
export interface RunHandle {
  runId: string;
  threadId: string;
  signal: AbortSignal;
  /**
   * What a ledgered tool call listens to instead of its node's signal: aborted when the run is
   * cancelled, its lease lost, its deadline passed or the process drains, but not on a database
   * fault (which stops the graph, while its calls finish and are recorded). Absent: the node's.
   */
  callSignal?: AbortSignal | undefined;
  ledger: RunToolLedger;
  /** The run's limit overrides (`runs.create({ limits })`). */
  limits: Partial<AgentLimits>;
  /** Reports a model or tool step event of the run (CONTRACT section 6): stored in the run's sequence, `model.delta` live only. */
  emit: (event: AgentEvent) => void;
  /** Aborted when the process drains: a graph may stop at its next step boundary (throw `DrainError`). */
  drainSignal?: AbortSignal | undefined;
}

/** The run's tool ledger, as ledgered tools use it. */
export interface RunToolLedger {
  /**
   * Before a tool call runs: `run` the first time (and again for an idempotent tool whose
   * process died mid-call); `done` with the stored result when the call finished before, or
   * with a TOOL_OUTCOME_UNKNOWN result for a non-idempotent call found in flight. A call that
   * `needsApproval` runs only with arguments whose digest a human approved (else `done` with a
   * PERMISSION_DENIED result).
   */
  begin(call: { toolCallId: string; tool: string; args: unknown; idempotent: boolean; needsApproval?: boolean }): Promise<GraphLedgerBegin>;
  complete(call: { toolCallId: string }, outcome: { ok: boolean; result: unknown }): Promise<void>;
  /**
   * Forgets a begun call that did not succeed, so it runs as new next time: for a tool that
   * raised LangGraph's interrupt (it runs again when resumed), one whose arguments were refused
   * before it ran, or a retry (in the same attempt) after a recorded failure.
   */
  release(call: { toolCallId: string }): Promise<void>;
  /** A begun call whose outcome this attempt will not record (cancelled, or the lease lost, mid-call): nothing waits for it any more. */
  abandon?(call: { toolCallId: string }): void;
}

/** The run handle in a node's config, or undefined outside a devmind run (e.g. a plain `graph.invoke`). */
export function runHandleOf(config: RunnableConfig | undefined): RunHandle | undefined {
  const handle = config?.configurable?.[RUN_HANDLE_KEY] as RunHandle | undefined;
  return handle !== undefined && typeof handle === "object" && typeof handle.runId === "string" ? handle : undefined;
}
