import { isRunEvent, type StoredRunEvent } from "../runtime/runtime.js";
import { modeEvent, type ModePart } from "./stream-modes.js";

/**
 * The `tools` stream mode's parts for one stored run event, in LangGraph's shape (`{event:
 * "on_tool_start" | "on_tool_event" | "on_tool_end" | "on_tool_error", toolCallId, name, ...}`):
 * a user graph's `tools` events as its LangChain tools reported them (`tools|ns` inside a
 * subgraph when `subgraphs`; left out otherwise, as the official server leaves subgraph parts
 * out); the built-in agent's tool-call events mapped onto them — `input` is the call's
 * arguments as JSON text (as LangChain hands tool inputs to callbacks), `on_tool_end` has `output: null` (the tool message itself is in `values` and
 * `messages`), a failed call is `on_tool_error` with its error code.
 */
export function toolParts(event: StoredRunEvent, subgraphs = false): ModePart[] {
  if (!isRunEvent(event)) return [];
  switch (event.type) {
    case "tools":
      if (event.ns.length > 0 && !subgraphs) return [];
      return [{ event: modeEvent("tools", event.ns), data: event.data }];
    case "tool.call.started":
      return [{ event: "tools", data: { event: "on_tool_start", toolCallId: event.tool_call_id, name: event.tool, input: JSON.stringify(event.args ?? {}) } }];
    case "tool.call.finished":
      return [
        {
          event: "tools",
          data: event.ok
            ? { event: "on_tool_end", toolCallId: event.tool_call_id, name: event.tool, output: null }
            : { event: "on_tool_error", toolCallId: event.tool_call_id, name: event.tool, error: event.error_code },
        },
      ];
    default:
      return [];
  }
}
