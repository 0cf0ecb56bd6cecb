import type { EndBatch } from "../events/event-batcher.js";
import type { NewRunEvent } from "../events/event-store.js";

/** The run's events still waiting to be stored, taken into its ending transaction (see `RunEventBatcher.takeForEnd`). */
export type PendingEvents = () => Promise<EndBatch>;

/**
 * Runs an ending transaction (`write`, given the events to store ahead of its own) with the run's
 * events still waiting (`pending`), and tells the batcher how it went: stored, a lease found lost
 * (they go with the attempt), or a failure (they are stored alone first, retried through a
 * database fault, so the attempt that finishes the run later loses none).
 */
export async function appendWithPending(pending: PendingEvents | undefined, write: (events: NewRunEvent[]) => Promise<boolean>): Promise<boolean> {
  const taken = await pending?.();
  let held: boolean;
  try {
    held = await write(taken?.events ?? []);
  } catch (error) {
    await taken?.failed().catch(() => undefined);
    throw error;
  }
  if (held) taken?.stored();
  else taken?.dropped();
  return held;
}
