import { tool as langchainTool, type StructuredToolInterface } from "@langchain/core/tools";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { CONFIG_DEFAULTS, TOOL_LEDGER_METADATA } from "../constants.js";
import type { Tool } from "../tools/define-tool.js";
import { ToolRegistry, toolMessageContent } from "../tools/registry.js";
import { ledgeredInner, ledgeredView, type InvocableTool } from "./ledgered-call.js";
import { runHandleOf } from "./run-handle.js";

/** Options of `ledgeredTool` / `ledgeredToolNode`. */
export interface LedgeredToolOptions {
  /**
   * Whether a LangChain tool may run again when its process died mid-call (default: its
   * `metadata.idempotent`, else false). A `defineTool` tool says so itself (`idempotent`).
   */
  idempotent?: boolean;
  /** Directory handed to `defineTool` tools as their workspace (default: the working directory). */
  workspace?: string;
  /** Timeout of a `defineTool` call when the tool sets none (default: DEVMIND_TOOL_TIMEOUT_MS's default). */
  timeoutMs?: number;
}

function metadataOf(tool: StructuredToolInterface): Record<string, unknown> | undefined {
  return (tool as { metadata?: Record<string, unknown> }).metadata;
}

function isDevmindTool(value: unknown): value is Tool {
  const candidate = value as Partial<Tool> | null;
  return candidate !== null && typeof candidate === "object" && typeof candidate.execute === "function" && typeof candidate.sideEffect === "string" && typeof candidate.parameters === "object";
}

/** A `defineTool` tool as a LangChain tool: run through a registry (validation, timeout, CONTRACT section 4 envelope). */
function fromDevmindTool(definition: Tool, options: LedgeredToolOptions): StructuredToolInterface {
  const registry = new ToolRegistry([definition], {
    workspace: options.workspace ?? process.cwd(),
    defaultTimeoutMs: options.timeoutMs ?? CONFIG_DEFAULTS.toolTimeoutMs,
    maxOutputChars: CONFIG_DEFAULTS.maxToolOutputChars,
    autoApprove: [definition.name],
  });
  return langchainTool(
    async (args: unknown, config?: RunnableConfig & { toolCall?: { id?: string } }) => {
      const handle = runHandleOf(config);
      const signal = handle === undefined ? config?.signal : config?.signal === undefined ? handle.signal : AbortSignal.any([handle.signal, config.signal]);
      const result = await registry.execute(
        { id: config?.toolCall?.id ?? "call", name: definition.name, args: args as Record<string, unknown> },
        { signal, runId: handle?.runId, threadId: handle?.threadId },
      );
      return toolMessageContent(result);
    },
    { name: definition.name, description: definition.description, schema: definition.schema as never },
  ) as unknown as StructuredToolInterface;
}

/**
 * Wraps a tool so each call goes through the run's tool ledger (effectively-once, CONTRACT
 * section 3): a call that finished returns its stored result when the graph re-executes after a
 * crash; a started call whose process died runs again only when the tool is idempotent, else
 * the model gets TOOL_OUTCOME_UNKNOWN. Accepts LangChain tools and `defineTool` tools. Outside a
 * devmind run (a plain `graph.invoke`) the tool runs as is. Calls are keyed by their tool call id,
 * so use it in a tool node (`ledgeredToolNode`, or LangGraph's `ToolNode`). The tool nodes of a
 * graph devmind loads are ledgered without it (src/graphs/tool-node-ledger.ts); it is for tools
 * called from a node's own code with the node's config (which carries the tool call).
 */
export function ledgeredTool(tool: StructuredToolInterface | Tool, options: LedgeredToolOptions = {}): StructuredToolInterface {
  // a ledgered tool given again is wrapped afresh around the tool it wraps, never twice
  const inner = isDevmindTool(tool) ? fromDevmindTool(tool, options) : ((ledgeredInner(tool) as StructuredToolInterface | undefined) ?? tool);
  const idempotent = isDevmindTool(tool) ? tool.idempotent : (options.idempotent ?? metadataOf(inner)?.[TOOL_LEDGER_METADATA.idempotent] === true);
  return ledgeredView(inner as StructuredToolInterface & InvocableTool, idempotent);
}

/**
 * LangGraph's `ToolNode` over ledgered tools (`ledgeredTool`): a drop-in tool node whose calls
 * are effectively-once across crashes and re-executions of the run.
 *
 * @example
 *   const tools = ledgeredToolNode([searchTool, appendLine]);
 *   const graph = new StateGraph(MessagesAnnotation).addNode("tools", tools) // ...
 */
export function ledgeredToolNode(tools: readonly (StructuredToolInterface | Tool)[], options: LedgeredToolOptions & { name?: string; handleToolErrors?: boolean } = {}): ToolNode {
  const { name, handleToolErrors, ...toolOptions } = options;
  return new ToolNode(
    tools.map((item) => ledgeredTool(item, toolOptions)),
    { ...(name === undefined ? {} : { name }), ...(handleToolErrors === undefined ? {} : { handleToolErrors }) },
  );
}
