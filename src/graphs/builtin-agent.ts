import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { DevmindConfig } from "../config.js";
import { ASSISTANT_DEFAULTS } from "../constants.js";
import { agentRunHooks } from "../graph/agent-run-hooks.js";
import { buildAgentGraph } from "../graph/build-agent-graph.js";
import { loadChatModel } from "../model/load-chat-model.js";
import { builtinTools, type BuiltinToolsOptions } from "../tools/builtin/index.js";
import type { Tool } from "../tools/define-tool.js";
import { ToolRegistry } from "../tools/registry.js";
import { ensureWorkspace } from "../tools/workspace.js";
import { limitsFromConfig } from "../vocabulary/limits.js";
import type { CompiledGraphLike } from "./graph-kinds.js";
import type { GraphRunHooks } from "./run-hooks.js";

/** What the built-in agent is built from: the config (model, workspace, limits, approval policy) and the runtime's stores. */
export interface BuiltinAgentOptions {
  config: DevmindConfig;
  checkpointer: BaseCheckpointSaver;
  /** The chat model; default the configured one (LangChain's OpenAI client loads at the first run that needs it). */
  model?: BaseChatModel | undefined;
  /**
   * Without `model`, when the configured model cannot be built: the model the graph is built with
   * instead (given the build's error), so what needs the graph but never calls the model (its
   * state, drawing, an approval's edit check) still works; its hooks' `ready` still throws the
   * error. Default: none, the error is thrown wherever the graph is needed.
   */
  modelStandIn?: ((error: unknown) => Promise<BaseChatModel>) | undefined;
  /** The tools; default `builtinTools` in the configured workspace. */
  tools?: readonly Tool[] | undefined;
  /** Where `send_file` stores attachments. */
  attachments?: BuiltinToolsOptions["attachments"];
}

/** The built-in agent as the registry holds it: the graph (built on first use) and its run hooks. */
export interface BuiltinAgent {
  graph: () => Promise<CompiledGraphLike>;
  hooks: GraphRunHooks;
}

/**
 * The built-in agent, registered under `agent` like any graph: built on first use (a model is
 * needed only once a run of it executes), with the hooks its runs use (`agentRunHooks`); it is
 * `ready` once its model builds. A failed build is not kept, so a fixed configuration is retried.
 */
export function builtinAgent(options: BuiltinAgentOptions): BuiltinAgent {
  const { config } = options;
  let loaded: Promise<BaseChatModel> | undefined;
  // the model alone: what `ready` checks; a failed load is not kept either
  const model = (): Promise<BaseChatModel> => {
    loaded ??= options.model !== undefined ? Promise.resolve(options.model) : loadChatModel(config);
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
  let built: Promise<{ graph: CompiledGraphLike; registry: ToolRegistry }> | undefined;
  const build = (): Promise<{ graph: CompiledGraphLike; registry: ToolRegistry }> => {
    built ??= (async () => {
      const workspace = await ensureWorkspace(config.workspace);
      const limits = limitsFromConfig(config);
      const tools = options.tools ?? builtinTools({ workspace, attachments: options.attachments, image: config.image });
      const registry = new ToolRegistry([...tools], {
        workspace,
        defaultTimeoutMs: limits.toolTimeoutMs,
        maxOutputChars: limits.maxToolOutputChars,
        requireApproval: config.requireApproval,
        autoApprove: config.autoApprove,
      });
      const standIn = options.modelStandIn;
      const chat = await model().catch((error: unknown) => (standIn === undefined ? Promise.reject(error) : standIn(error)));
      const graph = buildAgentGraph({ model: chat, tools: registry, checkpointer: options.checkpointer, limits });
      return { graph: graph as unknown as CompiledGraphLike, registry };
    })();
    built.catch(() => (built = undefined));
    return built;
  };
  return {
    graph: async () => (await build()).graph,
    hooks: {
      ...agentRunHooks(async () => (await build()).registry),
      description: ASSISTANT_DEFAULTS.agentDescription,
      ready: async () => void (await model()),
    },
  };
}
