import { v5 } from "@langchain/core/utils/uuid";
import { GRAPHS_DEFAULTS } from "../constants.js";

/**
 * The id LangGraph Platform gives a graph's default assistant: the uuid5 of the graph id in
 * LangGraph's namespace (`NAMESPACE_GRAPH`), so clients that pass either the graph id or this
 * uuid name the same assistant. `assistantIdFor("agent")` is `SERVER_DEFAULTS.assistantId`.
 */
export function assistantIdFor(graphId: string): string {
  return v5(graphId, GRAPHS_DEFAULTS.assistantNamespace);
}
