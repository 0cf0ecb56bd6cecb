import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { START, StateGraph } from "@langchain/langgraph";
import { DevmindError } from "../errors.js";
import { resolve } from "node:path";
import { CONFIG_DEFAULTS } from "../constants.js";
import type { Tool } from "../tools/define-tool.js";
import { ToolRegistry } from "../tools/registry.js";
import type { EventSink } from "../vocabulary/events.js";
import { createApprovalNode } from "./approval-node.js";
import { createGuardNode, GUARD_DESTINATIONS } from "./guard.js";
import { resolveLimits, type AgentLimits } from "../vocabulary/limits.js";
import type { CallableModel } from "./model-call.js";
import { createModelNode } from "./model-node.js";
import { AgentState } from "./state.js";
import { DEFAULT_SYSTEM_PROMPT } from "./system-prompt.js";
import { createToolsNode } from "./tools-node.js";

/** Options of `buildAgentGraph` (CONTRACT section 9). */
export interface BuildAgentGraphOptions {
  /** Any LangChain chat model that supports `bindTools` (ChatOpenAI, ScriptedChatModel, …). */
  model: BaseChatModel;
  /** A registry, or tools (e.g. `builtinTools(config)`) for which one is built from the limits. */
  tools: ToolRegistry | readonly Tool[];
  /** Workspace handed to tools in their context when `tools` is a list (default DEVMIND_WORKSPACE's default). */
  workspace?: string;
  /** Tool names added to / waived from approval when `tools` is a list. */
  requireApproval?: string[];
  autoApprove?: string[];
  checkpointer?: BaseCheckpointSaver;
  limits?: Partial<AgentLimits>;
  systemPrompt?: string;
  /** Receives model.* and tool.call.* events of every run of this graph. */
  events?: EventSink;
}

/**
 * Builds the devmind agent: `START -> guard`, and every step that can change what happens next —
 * the run's input, `model`, `tools`, `approval` — leads back to `guard`, the one node that
 * decides. The guard records its decision in the state (`decision`: where to and why, so the
 * checkpoint history shows every decision) and routes by it with a `Command` whose destinations
 * are declared (so the drawn graph shows them): to `model`, to `tools` (one `Send` per admitted
 * call), to `approval` (an `interrupt()` for calls that need a human; the wait does not count
 * toward the deadline), or to END: it ends the run itself, in the same step, with the stop reason,
 * the answer and the run's counts (calls left unanswered answered TOOL_NOT_RUN). A devmind run's
 * input resets the run-scoped fields; for a plain `invoke` the guard's first decision does. A model
 * round with tools is four steps: model, guard, tools, guard; a run that only asks the model
 * writes five checkpoints (input, start, guard, model, guard). Input `{ messages }`; the output
 * state also carries `stop_reason`, `answer`, `model_rounds`, `tool_calls`, `usage`, `error` and
 * `decision`. Per-run signals, sinks and limit overrides go in `context` (see AgentRunContext).
 * `graph.getGraph().drawMermaid()` draws it.
 *
 * @example
 *   const graph = buildAgentGraph({ model, tools: new ToolRegistry(builtinTools(…), …), checkpointer });
 *   const out = await graph.invoke({ messages: [new HumanMessage("add 2 and 3")] }, { configurable: { thread_id: "t" } });
 *   out.stop_reason; // "completed"
 */
export function buildAgentGraph(options: BuildAgentGraphOptions) {
  const limits = resolveLimits(options.limits);
  if (typeof options.model.bindTools !== "function") {
    throw new DevmindError("CONFIG_INVALID", "the chat model does not support tool calling (bindTools)");
  }
  const registry =
    options.tools instanceof ToolRegistry
      ? options.tools
      : new ToolRegistry([...options.tools], {
          workspace: resolve(options.workspace ?? CONFIG_DEFAULTS.workspace),
          defaultTimeoutMs: limits.toolTimeoutMs,
          maxOutputChars: limits.maxToolOutputChars,
          ...(options.requireApproval === undefined ? {} : { requireApproval: options.requireApproval }),
          ...(options.autoApprove === undefined ? {} : { autoApprove: options.autoApprove }),
        });
  const modelTools = registry.modelTools();
  const model = (modelTools.length > 0 ? options.model.bindTools(modelTools) : options.model) as unknown as CallableModel;
  const toolSchemaTokens = Math.ceil(JSON.stringify(modelTools).length / 4);

  const graph = new StateGraph(AgentState)
    .addNode("guard", createGuardNode({ registry, limits, events: options.events }), { ends: [...GUARD_DESTINATIONS] })
    .addNode("model", createModelNode({ model, registry, systemPrompt: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, toolSchemaTokens, limits, events: options.events }))
    .addNode("tools", createToolsNode({ registry, events: options.events }) as never)
    .addNode("approval", createApprovalNode({ registry, events: options.events }))
    .addEdge(START, "guard")
    .addEdge("model", "guard")
    // tools runs one task per call; the guard, a node of its own, runs once after all of them
    .addEdge("tools", "guard")
    .addEdge("approval", "guard");
  return graph.compile(options.checkpointer === undefined ? {} : { checkpointer: options.checkpointer });
}

/** The compiled agent graph type. */
export type AgentGraph = ReturnType<typeof buildAgentGraph>;
