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

/**
 * A loaded graph as LangGraph Platform's Assistant (the default assistant the official server
 * registers per graph): `assistant_id` the uuid5 of the graph id, `name` the graph id, empty
 * `config` and `context`, `metadata {created_by: "system"}`, version 1, times of the server's start.
 */
export function assistantWire(runtime: Runtime, graphId: string, createdAt: string): Record<string, unknown> {
  return {
    assistant_id: assistantIdFor(graphId),
    graph_id: graphId,
    name: graphId,
    description: runtime.graphs.isBuiltinAgent(graphId) ? "devmind's agent: tools with approvals, durable runs" : null,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    version: 1,
    created_at: createdAt,
    updated_at: createdAt,
  };
}
