import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { LIVE_MESSAGES } from "../../constants.js";

/**
 * The task namespace each tool call ran in (`langgraph_checkpoint_ns` of the node that invoked
 * the tool: `node:task_id`, nested ones after `|`), read from LangChain's tool-start callback by
 * tool call id. LangGraph's `tools` stream mode names only the graph a tool ran in; its protocol
 * stream (`streamEvents` v3) sends a tool's events under the node's namespace, and the executor
 * stores that with each `tools` event. Bounded: past `LIVE_MESSAGES.startedMessagesMax` calls a
 * call's namespace is not kept (its events keep the graph's).
 */
export class ToolNamespaces extends BaseCallbackHandler {
  name = "devmind_tool_namespaces";
  override ignoreChain = true;
  override ignoreLLM = true;
  override ignoreRetriever = true;
  override ignoreCustomEvent = true;
  // recorded inline, before LangGraph's tools stream hands the call's start to the executor
  override awaitHandlers = true;
  private readonly byCall = new Map<string, string>();

  override handleToolStart(_tool: Serialized, _input: string, _runId: string, _parent?: string, _tags?: string[], metadata?: Record<string, unknown>, _runName?: string, toolCallId?: string): void {
    const ns = metadata?.["langgraph_checkpoint_ns"];
    if (typeof toolCallId !== "string" || typeof ns !== "string" || ns === "" || this.byCall.size >= LIVE_MESSAGES.startedMessagesMax) return;
    this.byCall.set(toolCallId, ns);
  }

  /** The namespace of the task that ran tool call `toolCallId` (a `tools` payload's `toolCallId`), if recorded. */
  of(toolCallId: unknown): string | undefined {
    return typeof toolCallId === "string" ? this.byCall.get(toolCallId) : undefined;
  }
}
