import { randomBytes } from "node:crypto";

/** W3C Trace Context version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A parsed traceparent: the trace, the parent span and whether it was sampled. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/**
 * The traceparent header value parsed, or null when it is malformed (wrong shape, version ff,
 * all-zero ids, or a later version's extra fields we cannot read): a bad header is ignored, never an error.
 */
export function parseTraceParent(value: string | null | undefined): TraceParent | null {
  if (typeof value !== "string" || value.length > 256) return null;
  const text = value.trim().toLowerCase();
  // a later version may append fields after the four of version 00
  const head = /^[0-9a-f]{2}-/.test(text) && text.slice(0, 2) !== "00" ? text.slice(0, 55) : text;
  const match = TRACEPARENT.exec(head);
  if (match === null) return null;
  const [, version, traceId, spanId, flags] = match as unknown as [string, string, string, string, string];
  if (version === "ff" || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The header value of a parsed traceparent (version 00). */
export function formatTraceParent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? "01" : "00"}`;
}

/** A new sampled trace's traceparent (a request without one, on a server that traces). */
export function newTraceParent(): string {
  return formatTraceParent({ traceId: randomBytes(16).toString("hex"), spanId: randomBytes(8).toString("hex"), sampled: true });
}
