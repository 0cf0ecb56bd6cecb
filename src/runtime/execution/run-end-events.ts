import { LeaseLostError } from "../../errors.js";
import type { NewRunEvent } from "../events/event-store.js";
import type { RunRecord } from "../queue/run-record.js";

/** The run's events still waiting to be stored, taken into its ending transaction (see `RunEventBatcher.takeForEnd`). */
export type PendingEvents = () => Promise<{ events: NewRunEvent[]; settle: (error?: unknown) => void }>;

/**
 * Runs an ending transaction (`write`, given the events to store ahead of its own) with the run's
 * events still waiting (`pending`), and tells the batcher how it went: a lease found lost, a
 * failure, or stored.
 */
export async function appendWithPending(pending: PendingEvents | undefined, run: RunRecord, epoch: number, write: (events: NewRunEvent[]) => Promise<boolean>): Promise<boolean> {
  const taken = pending === undefined ? { events: [], settle: () => undefined } : await pending();
  let held: boolean;
  try {
    held = await write(taken.events);
  } catch (error) {
    taken.settle(error);
    throw error;
  }
  taken.settle(held ? undefined : new LeaseLostError(run.run_id, epoch));
  return held;
}
