import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { Runtime } from "../../runtime/runtime.js";
import { transformerFinalValues } from "../../runtime/protocol/final-values.js";
import type { ProjectedEvent } from "../../runtime/protocol/part-events.js";

/** The final values of the run's graph's stream transformers (`transformerFinalValues`); none when it has none. */
export async function finalValueEvents(runtime: Runtime, run: RunRecord, events: readonly ProjectedEvent[]): Promise<ProjectedEvent[]> {
  const factories = await runtime.graphs.streamTransformers(run.graph_id).catch(() => []);
  if (factories.length === 0) return [];
  return transformerFinalValues(factories, events, Date.now());
}
