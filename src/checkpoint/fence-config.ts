import type { RunnableConfig } from "@langchain/core/runnables";

/**
 * Keys of `config.configurable` carrying a run's lease. LangGraph hands configurable to every
 * `put` and `putWrites`; keys starting with `__` are never copied into checkpoint metadata.
 */
export const FENCE_RUN_ID_KEY = "__devmind_run_id";
export const FENCE_EPOCH_KEY = "__devmind_lease_epoch";

/** A run's lease as the checkpointer checks it. */
export interface CheckpointFence {
  runId: string;
  epoch: number;
}

/** The fence a config carries, if any: with one, every checkpoint write is conditional on the lease. */
export function readFence(config: RunnableConfig): CheckpointFence | undefined {
  const runId = config?.configurable?.[FENCE_RUN_ID_KEY];
  const epoch = config?.configurable?.[FENCE_EPOCH_KEY];
  if (typeof runId !== "string" || typeof epoch !== "number") return undefined;
  return { runId, epoch };
}

/** The configurable entries that make a graph invocation write under `fence`. */
export function fenceConfigurable(fence: CheckpointFence): Record<string, string | number> {
  return { [FENCE_RUN_ID_KEY]: fence.runId, [FENCE_EPOCH_KEY]: fence.epoch };
}
