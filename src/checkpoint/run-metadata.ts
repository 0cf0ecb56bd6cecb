import type { RunnableConfig } from "@langchain/core/runnables";

/** Configurable keys that address the checkpoint itself (or name the run, which the fence sets): never copied. */
const ADDRESS_KEYS: ReadonlySet<string> = new Set(["checkpoint_ns", "checkpoint_id", "checkpoint_map", "run_id", "thread_id"]);

function isJsonValue(value: unknown): boolean {
  if (value === undefined || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") return false;
  try {
    return JSON.stringify(value) !== undefined;
  } catch {
    return false;
  }
}

/**
 * What a run's checkpoint metadata carries beyond LangGraph's own (`source`, `step`, `parents`),
 * as LangGraph Platform's checkpointer adds it: the run's `configurable` values (its ids:
 * `graph_id`, `assistant_id`, and the caller's, e.g. `user_id`), but internal (`__`) keys and the
 * checkpoint's address, then the run's `config.metadata` (its metadata), LangGraph's own winning.
 * So `POST /threads/{id}/history` filtered by a run's metadata finds that run's checkpoints, its
 * input's included. Values that are not JSON are left out.
 */
export function runCheckpointMetadata(config: RunnableConfig): Record<string, unknown> {
  const entries = [...Object.entries(config.configurable ?? {}).filter(([key]) => !key.startsWith("__") && !ADDRESS_KEYS.has(key)), ...Object.entries(config.metadata ?? {})];
  return Object.fromEntries(entries.filter(([, value]) => isJsonValue(value)));
}
