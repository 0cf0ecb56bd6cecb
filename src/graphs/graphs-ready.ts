import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import type { DevmindConfig } from "../config.js";
import { builtinAgent } from "./builtin-agent.js";
import type { GraphEntry } from "./graph-kinds.js";
import { GraphRegistry } from "./graph-registry.js";

/** What `checkGraphsReady` builds the graphs from: what `createRuntime` would get. */
export interface GraphsReadyOptions {
  config: DevmindConfig;
  /** The model the runtime will get (a test's); default the configured one. */
  model?: BaseChatModel | undefined;
  /** The graphs the runtime will run; default the built-in agent alone. */
  graphs?: Readonly<Record<string, GraphEntry | false>> | undefined;
}

/**
 * Checks, before any database is opened, that runs of the graphs `ids` (`"all"`: every graph)
 * could execute in this process: each passes its `ready` hook
 * (the agent: its model builds, else the ConfigError naming what to set). The same check as
 * `runtime.graphs.ready`, for a command that must fail before it creates a data directory or
 * touches a run; nothing built here is kept.
 */
export async function checkGraphsReady(options: GraphsReadyOptions, ids: readonly string[] | "all"): Promise<void> {
  const checkpointer = new MemorySaver();
  const registry = new GraphRegistry(options.graphs, { checkpointer, agent: builtinAgent({ config: options.config, checkpointer, model: options.model }) });
  // an id that names no graph (an assistant's id) is left to the runtime, which resolves it
  for (const id of ids === "all" ? registry.ids() : ids.filter((given) => registry.has(given))) await registry.hooks(id).ready?.();
}
