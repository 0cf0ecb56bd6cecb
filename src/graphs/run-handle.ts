import type { RunnableConfig } from "@langchain/core/runnables";

/** The configurable key under which the runtime hands a run's handle to the graph it executes. */
export const RUN_HANDLE_KEY = "__devmind_run";

/** What a ledgered tool learns before it runs a call. */
export type GraphLedgerBegin =
  /** Run the tool, then `complete`. */
  | { state: "run" }
  /** Finished before (or its outcome is unknown): return `result` without running the tool. */
  | { state: "done"; ok: boolean; result: unknown };

/**
 * A run as the nodes of the graph executing it see it (read with `runHandleOf(config)`): its ids,
 * a signal aborted when the run is cancelled or its lease is lost, and the run's tool ledger. Keys
 * starting with `__` never reach checkpoint metadata, so the handle is never stored.
 */
export interface RunHandle {
  runId: string;
  threadId: string;
  signal: AbortSignal;
  ledger: RunToolLedger;
}

/** The run's tool ledger, as ledgered tools use it. */
export interface RunToolLedger {
  /**
   * Before a tool call runs: `run` the first time (and again for an idempotent tool whose
   * process died mid-call); `done` with the stored result when the call finished before, or
   * with a TOOL_OUTCOME_UNKNOWN result for a non-idempotent call found in flight.
   */
  begin(call: { toolCallId: string; tool: string; args: unknown; idempotent: boolean }): Promise<GraphLedgerBegin>;
  complete(call: { toolCallId: string }, outcome: { ok: boolean; result: unknown }): Promise<void>;
}

/** The run handle in a node's config, or undefined outside a devmind run (e.g. a plain `graph.invoke`). */
export function runHandleOf(config: RunnableConfig | undefined): RunHandle | undefined {
  const handle = config?.configurable?.[RUN_HANDLE_KEY] as RunHandle | undefined;
  return handle !== undefined && typeof handle === "object" && typeof handle.runId === "string" ? handle : undefined;
}
