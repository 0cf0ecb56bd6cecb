import type { RunnableConfig } from "@langchain/core/runnables";
import { withCommit, type Database, type Queryable } from "../db/types.js";
import { LeaseLostError } from "../errors.js";

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

/**
 * Key of `config.configurable` carrying a `CheckpointRider`: work another store has pending under
 * the same lease (a run's events), committed in the transaction of the saver's next fenced write.
 */
export const CHECKPOINT_RIDER_KEY = "__devmind_checkpoint_rider";

/**
 * Pending work that rides in a checkpoint write's commit (one commit instead of two). `take` is
 * asked as a fenced write begins; the work it returns runs in the write's transaction, after it.
 */
export interface CheckpointRider {
  take(): RiderWork | undefined;
}

/** Work taken from a rider: `settle()` once committed, `settle(error)` when not (the work is the rider's again). */
export interface RiderWork {
  write(tx: Queryable): Promise<void>;
  settle(error?: unknown): void;
}

/** The rider a config carries, if any. */
export function readRider(config: RunnableConfig): CheckpointRider | undefined {
  const rider = config?.configurable?.[CHECKPOINT_RIDER_KEY] as CheckpointRider | undefined;
  return rider !== null && typeof rider === "object" && typeof rider.take === "function" ? rider : undefined;
}

/**
 * Runs `write` (a fenced write of a run), with the work `rider` has pending (the run's events) in
 * the same transaction when it has any: one commit for both. If that transaction fails for
 * another reason than the lease, the work goes back to the rider and `write` runs alone.
 */
export async function withRider<T>(db: Database, rider: CheckpointRider | undefined, write: (db: Queryable) => Promise<T>): Promise<T> {
  const work = rider?.take();
  if (work === undefined) return write(db);
  let outcome: { wrote: PromiseSettledResult<T> };
  try {
    // both are sent at once, the rider's with COMMIT (one round trip on PostgreSQL): neither waits
    // for the other's result, and both are fenced by the same lease, so a lost lease writes neither
    outcome = await db.transaction(async (tx) => {
      const [wrote, rode] = await Promise.allSettled([write(tx), work.write(withCommit(tx))]);
      // the rider's own failure (its statement failed, so nothing commits) is the transaction's
      if (rode.status === "rejected" && wrote.status === "fulfilled") throw rode.reason;
      return { wrote };
    });
  } catch (error) {
    work.settle(error);
    if (error instanceof LeaseLostError) throw error;
    return write(db);
  }
  // committed with the write refused (a lost lease, seen by the write after its statement): the
  // rider's statement, under the same lease, stored nothing either
  if (outcome.wrote.status === "rejected") {
    work.settle(outcome.wrote.reason);
    throw outcome.wrote.reason;
  }
  work.settle();
  return outcome.wrote.value;
}
