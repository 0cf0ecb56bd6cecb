import { assistantIdFor } from "../graphs/assistant-id.js";
import type { Runtime } from "../runtime/runtime.js";
import { httpError } from "./http-errors.js";

/**
 * The graph an `assistant_id` of a cron names: a loaded graph's id, or its default assistant's
 * uuid (`assistantIdFor`). Crons run a graph's default assistant; another assistant (created with
 * `POST /assistants`) is 404 NOT_FOUND naming the id, never run with its config dropped.
 */
export function graphOfAssistant(runtime: Runtime, assistantId: string): string {
  const ids = runtime.graphs.ids();
  const graphId = ids.find((id) => id === assistantId) ?? ids.find((id) => assistantIdFor(id) === assistantId.toLowerCase());
  if (graphId === undefined) {
    throw httpError("NOT_FOUND", `no graph or default assistant ${JSON.stringify(assistantId.slice(0, 100))}; crons run a loaded graph's default assistant: ${ids.join(", ") || "(none)"}`, {
      assistant_id: assistantId.slice(0, 100),
      known: ids,
    });
  }
  return graphId;
}
