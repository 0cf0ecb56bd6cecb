import { inferChannel, isPrefixMatch } from "@langchain/langgraph/stream";
import type { EventFilter } from "./command-schema.js";

/** A protocol event as the filter reads it. */
export interface FilterableEvent {
  method: string;
  seq?: number | undefined;
  params: { namespace: string[]; data?: unknown };
}

/**
 * Whether `event` passes `filter`, as the official server's sinks match: after `since`, its
 * channel asked for (`custom:NAME` also by `custom`), and its namespace under one of the
 * prefixes asked for, at most `depth` below it.
 */
export function matchesFilter(filter: EventFilter, event: FilterableEvent): boolean {
  if (filter.since !== undefined && (event.seq ?? 0) <= filter.since) return false;
  const channel = inferChannel(event);
  if (channel === undefined) return false;
  if (!filter.channels.has(channel) && !(channel.startsWith("custom:") && filter.channels.has("custom"))) return false;
  if (filter.namespaces === undefined || filter.namespaces.length === 0) return true;
  return filter.namespaces.some((prefix) => isPrefixMatch(event.params.namespace, prefix) && (filter.depth === undefined || event.params.namespace.length - prefix.length <= filter.depth));
}
