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

/**
 * The `event_id` of a live token chunk (never stored): its run, the part before it, the message,
 * the chunk's place in the message and its index among the chunk's events
 * (`RUN_ID:live:PART:MESSAGE_ID:CHUNK:INDEX`). The part names its position, so a client can
 * resume after it (`eventIdPosition`).
 */
export function liveEventId(runId: string, part: number, messageId: string, chunk: number, index: number): string {
  return `${runId}:live:${part}:${messageId}:${chunk}:${index}`;
}

/** What an `event_id` names: a run's position (`RUN_ID:part:index`, or a live chunk's), or a bare `seq`. */
export type EventIdPosition = { runId: string; part: number; index: number } | { seq: number };

const DURABLE_ID = /^([^:]+):(\d{1,9}):(\d{1,9})$/;
const LIVE_ID = /^([^:]+):live:(\d{1,9}):.+:\d+:\d+$/;

/**
 * The position an `event_id` this server sent names (`durableEventId`, `liveEventId`; a live
 * chunk's is the end of the part before it, as its `seq`), or a decimal `seq`; undefined for
 * anything else. The run is named by id: its ordinal is the caller's to find.
 */
export function eventIdPosition(eventId: string): EventIdPosition | undefined {
  if (/^\d{1,15}$/.test(eventId)) return { seq: Number(eventId) };
  const durable = DURABLE_ID.exec(eventId);
  if (durable !== null) return { runId: durable[1] as string, part: Number(durable[2]), index: Number(durable[3]) };
  const live = LIVE_ID.exec(eventId);
  if (live !== null) return { runId: live[1] as string, part: Number(live[2]), index: partSeqSpan - 1 };
  return undefined;
}
