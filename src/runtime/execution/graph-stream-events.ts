import type { RunnableConfig } from "@langchain/core/runnables";
import { DevmindError } from "../../errors.js";
import type { CompiledGraphLike } from "../../graphs/graph-kinds.js";
import { plainJson } from "../events/plain-json.js";
import type { GraphRunEvent } from "../events/run-events.js";

/** One chunk of LangGraph's stream with `subgraphs: true`: `[namespace, mode, payload]`. */
export type GraphChunk = [string[], string, unknown];

/**
 * Recording a run's LangChain stream events (the `events` stream mode): at most `limit` of them
 * are handed to `emit` (the graph's own start and end, those of run id `rootRunId`, are always
 * kept, so the root's `on_chain_end` stays last); the first one left out emits `events.truncated` once.
 */
export interface StreamEventsRecording {
  limit: number;
  emit: (event: GraphRunEvent) => void;
}

/** A LangChain stream event (v2) as `streamEvents` yields it. */
interface StreamEventV2 {
  event: string;
  run_id: string;
  name?: string;
  tags?: string[];
  data?: { chunk?: unknown };
}

interface EventStreaming {
  streamEvents(input: unknown, config: RunnableConfig & { version: "v2" }): AsyncIterable<StreamEventV2>;
}

/**
 * The graph's stream of `[ns, mode, payload]` chunks for `options` (with `streamMode` and
 * `subgraphs: true`). Without `recording` it is `graph.stream` itself: a run that did not ask for
 * LangChain's stream events pays nothing for them. With it, the graph runs under
 * `graph.streamEvents(..., {version: "v2"})` as the LangGraph API server runs it: the chunks are
 * the root run's `on_chain_stream` events (the root's run id is `rootRunId`, the devmind run's
 * id), and every other event, except those tagged `langsmith:hidden`, is emitted in the order
 * LangChain produced it as an `events` run event, as plain JSON (LangChain messages as dicts).
 */
export async function graphChunks(graph: CompiledGraphLike, input: unknown, options: RunnableConfig, rootRunId: string, recording: StreamEventsRecording | null): Promise<AsyncIterable<GraphChunk>> {
  if (recording === null) return (await graph.stream(input, options)) as AsyncIterable<GraphChunk>;
  const streaming = graph as Partial<EventStreaming>;
  if (typeof streaming.streamEvents !== "function") throw new DevmindError("GRAPH_INVALID", "stream_mode events needs a LangChain Runnable graph (one with streamEvents)");
  return recordedChunks(streaming as EventStreaming, input, { ...options, runId: rootRunId }, rootRunId, recording);
}

async function* recordedChunks(graph: EventStreaming, input: unknown, options: RunnableConfig, rootRunId: string, recording: StreamEventsRecording): AsyncGenerator<GraphChunk> {
  let kept = 0;
  let truncated = false;
  for await (const event of graph.streamEvents(input, { ...options, version: "v2" })) {
    if (event.event === "on_chain_stream" && event.run_id === rootRunId) {
      yield event.data?.chunk as GraphChunk;
      continue;
    }
    if (event.tags?.includes("langsmith:hidden") === true) continue;
    if (kept >= recording.limit && event.run_id !== rootRunId) {
      if (!truncated) recording.emit({ type: "events.truncated", limit: recording.limit });
      truncated = true;
      continue;
    }
    kept += 1;
    recording.emit({ type: "events", data: eventJson(event) });
  }
}

/**
 * An event as plain JSON; one whose payload JSON cannot hold (a cycle, a BigInt) keeps its
 * `event`, `name`, `run_id` and `tags`, and says why its `data` is missing, rather than failing the run.
 */
function eventJson(event: StreamEventV2): unknown {
  try {
    return plainJson(event);
  } catch (error) {
    return { event: event.event, name: event.name ?? null, run_id: event.run_id, tags: event.tags ?? [], metadata: {}, data: { unserialisable: (error as Error).message } };
  }
}
