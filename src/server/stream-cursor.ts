/**
 * Where a LangGraph run stream is, carried as each SSE part's `id` so a client that reconnects
 * with `Last-Event-ID` continues exactly after the last part it received.
 *
 * The stream merges two durable, append-only sources of one run: its events (by `seq`) and the
 * checkpoints it wrote (by position). `seq` events were sent, `values` checkpoints had their
 * values unit sent, `settled` checkpoints had their interrupt check done; `partial` says how many
 * parts of the next unit (of that kind: `e` the event after `seq`, whose parts may include a
 * subgraph's) were already sent. Ids look like `12-4-3` or `12-4-3-v2`.
 */
export interface StreamCursor {
  seq: number;
  values: number;
  settled: number;
  partial?: { kind: "v" | "i" | "e"; parts: number } | undefined;
}

const CURSOR_PATTERN = /^(\d{1,10})-(\d{1,7})-(\d{1,7})(?:-([vie])(\d{1,4}))?$/;

/** The start of a stream. */
export const STREAM_START: StreamCursor = { seq: 0, values: 0, settled: 0 };

/** The cursor as an SSE id. */
export function formatCursor(cursor: StreamCursor): string {
  const base = `${cursor.seq}-${cursor.values}-${cursor.settled}`;
  return cursor.partial === undefined ? base : `${base}-${cursor.partial.kind}${cursor.partial.parts}`;
}

/** Parses a `Last-Event-ID`; undefined for anything this server did not write. */
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
