import { PROTOCOL_DEFAULTS } from "../../constants.js";

/**
 * Where a protocol event is in its thread's one order (see PROTOCOL_DEFAULTS): the run's ordinal
 * (1 for the thread's oldest run), the part of the run's stream it comes from (`part`: the part's
 * id + 1; 0 before the first), and its index among that part's events.
 */
export interface EventPosition {
  ordinal: number;
  part: number;
  index: number;
}

const { runSeqSpan, partSeqSpan } = PROTOCOL_DEFAULTS;

/** The `seq` of a position. */
export function seqOf(position: EventPosition): number {
  return position.ordinal * runSeqSpan + position.part * partSeqSpan + Math.min(position.index, partSeqSpan - 1);
}

/** The position a `seq` (e.g. a client's `since`) names. */
export function positionOf(seq: number): EventPosition {
  const ordinal = Math.floor(seq / runSeqSpan);
  const rest = seq - ordinal * runSeqSpan;
  return { ordinal, part: Math.floor(rest / partSeqSpan), index: rest % partSeqSpan };
}

/**
 * The `event_id` of a durable event: its run and position (`RUN_ID:part:index`), stable in every
 * process, so a client's dedup by `event_id` holds across reconnects and restarts.
 */
export function durableEventId(runId: string, position: EventPosition): string {
  return `${runId}:${position.part}:${position.index}`;
}
