import { isRunEvent, type StoredRunEvent } from "../runtime/runtime.js";
import type { ModePart } from "./stream-modes.js";

/**
 * The `events` stream mode's parts for one stored run event: each LangChain stream event (v2) the
 * run recorded, as the LangGraph API server sends it (`events` with `{event, name, run_id, tags,
 * metadata, data}`, as LangChain JS produces them; with `subgraphs` the server reads every `on_chain_stream` as a
 * stream chunk, so those are left out, as its are). When the run's attempt reached its
 * `maxStreamEvents`, the `events.truncated` marker is an `events` part too, in the same shape:
 * `{event: "on_events_truncated", name: "devmind", data: {limit}}`, so a client sees that later
 * events were left out.
 */
export function eventsParts(event: StoredRunEvent, subgraphs = false): ModePart[] {
  if (!isRunEvent(event)) return [];
  if (event.type === "events") {
    if (subgraphs && (event.data as { event?: unknown } | null)?.event === "on_chain_stream") return [];
    return [{ event: "events", data: event.data }];
  }
  if (event.type === "events.truncated") {
    return [{ event: "events", data: { event: "on_events_truncated", name: "devmind", run_id: event.run_id, tags: [], metadata: {}, data: { limit: event.limit } } }];
  }
  return [];
}

/** True for the stored records of LangChain stream events (`events`, `events.truncated`): the `events` mode's, never the agent's `custom` parts. */
export function isStreamEventRecord(event: StoredRunEvent): boolean {
  return event.type === "events" || event.type === "events.truncated";
}
