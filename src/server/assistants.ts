import { assistantIdFor } from "../graphs/assistant-id.js";
import type { Runtime } from "../runtime/runtime.js";
import { httpError } from "./http-errors.js";

/**
 * The graph an `assistant_id` names: a loaded graph's id, or its default assistant's uuid
 * (`assistantIdFor`), as LangGraph Platform accepts both. 404 NOT_FOUND naming the id otherwise.
 */
export function graphOfAssistant(runtime: Runtime, assistantId: string): string {
  const ids = runtime.graphs.ids();
  const graphId = ids.find((id) => id === assistantId) ?? ids.find((id) => assistantIdFor(id) === assistantId.toLowerCase());
  if (graphId === undefined) {
    throw httpError("NOT_FOUND", `no assistant ${JSON.stringify(assistantId.slice(0, 100))}; this server's assistants are its graphs: ${ids.join(", ") || "(none)"}`, {
      assistant_id: assistantId.slice(0, 100),
      known: ids,
    });
  }
  return graphId;
}
