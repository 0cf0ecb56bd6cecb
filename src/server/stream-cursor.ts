/**
 * Where a LangGraph run stream is. Two forms:
 *
 * - The SSE `id` of each durable part: its position in the run's stream, counted from `0` (the
 *   `metadata` part), as the official server numbers the parts of a run. The stream is derived
 *   from what is durable (the run's events and checkpoints) in one deterministic order, so any
 *   server process numbers a run's parts alike: a client that reconnects with `Last-Event-ID: N`
 *   gets the parts after the N-th, and `-1` (the official "from the beginning") all of them.
 * - A `StreamCursor`, the stream's internal read position (`run-stream.ts`): it merges two
 *   durable, append-only sources of one run, its events (by `seq`) and the checkpoints it wrote
 *   (by position). `seq` events were sent, `values` checkpoints had their values unit sent,
 *   `settled` checkpoints had their interrupt check done; `partial` says how many parts of the
 *   next unit (of that kind: `e` the event after `seq`, whose parts may include a subgraph's) were
 *   already sent. It marks where a resumed run's stream starts, and it was the SSE id of earlier
 *   devmind versions (`12-4-3`, `12-4-3-v2`), still accepted as a `Last-Event-ID`.
 */
export interface StreamCursor {
  seq: number;
  values: number;
  settled: number;
  partial?: { kind: "v" | "i" | "e"; parts: number } | undefined;
}

const CURSOR_PATTERN = /^(\d{1,10})-(\d{1,7})-(\d{1,7})(?:-([vie])(\d{1,4}))?$/;

/** A part id: `-1` (before the first part) or a position, at most 9 digits. */
const PART_ID_PATTERN = /^(?:-1|\d{1,9})$/;

/** The start of a stream. */
export const STREAM_START: StreamCursor = { seq: 0, values: 0, settled: 0 };

/** Where a reconnecting client continues: after part `after` (its last `id`), or after an older devmind's cursor id. */
export type StreamResume = { after: number } | { from: StreamCursor };

/** The SSE id of the part at `index` of a run's stream. */
export function formatPartId(index: number): string {
  return String(index);
}

/**
 * Parses a run stream `Last-Event-ID`: a part id (`N`, or `-1` for "from the beginning") or an
 * older devmind cursor id; undefined for anything this server did not write (the stream starts over).
 */
export function parseStreamResume(id: string | undefined | null): StreamResume | undefined {
  if (id === undefined || id === null) return undefined;
  const text = id.trim();
  if (PART_ID_PATTERN.test(text)) return { after: Number(text) };
  const from = parseCursor(text);
  return from === undefined ? undefined : { from };
}

/** The cursor as text (`12-4-3`, `12-4-3-v2`). */
export function formatCursor(cursor: StreamCursor): string {
  const base = `${cursor.seq}-${cursor.values}-${cursor.settled}`;
  return cursor.partial === undefined ? base : `${base}-${cursor.partial.kind}${cursor.partial.parts}`;
}

/** Parses a cursor id; undefined for anything that is not one. */
export function parseCursor(id: string | undefined | null): StreamCursor | undefined {
  if (id === undefined || id === null) return undefined;
  const match = CURSOR_PATTERN.exec(id.trim());
  if (match === null) return undefined;
  const cursor: StreamCursor = { seq: Number(match[1]), values: Number(match[2]), settled: Number(match[3]) };
  // seq is an integer column; a larger one was never written by this server
  if (cursor.seq > 2_147_483_647 || cursor.settled > cursor.values) return undefined;
  if (match[4] !== undefined) cursor.partial = { kind: match[4] as "v" | "i" | "e", parts: Number(match[5]) };
  return cursor;
}
