import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { GRAPHS_DEFAULTS } from "../constants.js";
import { GraphDefinitionError, GraphNotFoundError } from "../errors.js";
import { graphKind, graphToInspect, resolveGraph, type CompiledGraphLike, type GraphEntry, type ReplacedPersistence } from "./graph-kinds.js";
import { refuseReservedNodeNames } from "./reserved-node-names.js";
import type { BuiltinAgent } from "./builtin-agent.js";
import type { GraphRunHooks } from "./run-hooks.js";
import { graphSourceOf, type GraphSource } from "./static-schemas.js";

const NO_HOOKS: GraphRunHooks = Object.freeze({});

/**
 * The graphs a runtime runs, by id: user graphs (compiled, StateGraph, promise or factory, as
 * `langgraph.json` allows) and the built-in agent under `agent` unless replaced or omitted, each
 * with the run hooks its runs use (`hooks`).
 * Every graph is checkpointed by the runtime's saver; one compiled with its own checkpointer (or
 * a store not devmind's) gets devmind's in its place when first resolved, said once
 * (`onReplaced`); one with a node named like devmind's own (`__…`) is refused here
 * (a factory's or a promise's graph when resolved); each gets the runtime's store as `config.store` unless it brought
 * one of its own. A factory is called for each run with the run's config; other
 * entries are resolved once.
 */
export class GraphRegistry {
  private readonly entries = new Map<string, GraphEntry>();
  private readonly resolved = new Map<string, Promise<CompiledGraphLike>>();
  private builtin: boolean;
  private readonly announced = new Set<string>();
  /** Says once per graph what was replaced (a factory's graph is resolved at every run). */
  private readonly onReplaced = (id: string, replaced: ReplacedPersistence): void => {
    if (this.announced.has(id)) return;
    this.announced.add(id);
    this.options.onReplaced?.(id, replaced);
  };

  constructor(
    graphs: Readonly<Record<string, GraphEntry | false | null | undefined>> | undefined,
    private readonly options: {
      checkpointer: BaseCheckpointSaver;
      store?: BaseStore;
      agent?: BuiltinAgent;
      hooks?: Readonly<Record<string, GraphRunHooks>>;
      /** Told once per graph that devmind replaced the checkpointer or store it was compiled with. */
      onReplaced?: (id: string, replaced: ReplacedPersistence) => void;
    },
  ) {
    this.builtin = this.register(graphs);
  }

  /**
   * Puts `graphs` in place of the registered ones (checked first: a GraphDefinitionError leaves
   * the registry as it was); compiled graphs resolved from the old entries are forgotten.
   */
  replace(graphs: Readonly<Record<string, GraphEntry | false | null | undefined>>): void {
    const before = new Map(this.entries);
    try {
      this.entries.clear();
      this.builtin = this.register(graphs);
    } catch (error) {
      this.entries.clear();
      for (const [id, entry] of before) this.entries.set(id, entry);
      throw error;
    }
    this.resolved.clear();
  }

  /** Checks and adds `graphs`; whether the built-in agent is one of them. */
  private register(graphs: Readonly<Record<string, GraphEntry | false | null | undefined>> | undefined): boolean {
    const given = graphs ?? {};
    for (const [id, entry] of Object.entries(given)) {
      if (entry === false || entry === null || entry === undefined) continue;
      if (id.length === 0 || id.length > 200 || id.includes("\0")) throw new GraphDefinitionError(`graph id ${JSON.stringify(id)} is not usable: 1 to 200 characters, no NUL`, { graph: id });
      if (graphKind(entry) === null) {
        throw new GraphDefinitionError(`graph ${id}: not a LangGraph graph (expected a compiled graph, a StateGraph, a promise of one, or a factory (config) => graph)`, { graph: id });
      }
      // a graph that can be looked at now is refused now (a factory's, or a promise's, when resolved)
      const inspectable = graphToInspect(entry);
      if (inspectable !== null) refuseReservedNodeNames(inspectable, id);
      this.entries.set(id, entry);
    }
    const agentId = GRAPHS_DEFAULTS.builtinId;
    // the agent is there unless the caller replaced it (an entry named agent) or omitted it (agent: false)
    return given[agentId] === undefined && this.options.agent !== undefined;
  }

  /** Every graph id, the agent's first when it is the built-in one. */
  ids(): string[] {
    return [...(this.builtin ? [GRAPHS_DEFAULTS.builtinId] : []), ...this.entries.keys()];
  }

  /** Whether `id` is a graph of this registry. */
  has(id: string): boolean {
    return (this.builtin && id === GRAPHS_DEFAULTS.builtinId) || this.entries.has(id);
  }

  /**
   * The run hooks of graph `id` (`GraphRunHooks`): what the graph tells the runtime beyond
   * LangGraph's stream and state (its input check, entry, counters, stop reasons). None for a
   * plain graph.
   */
  hooks(id: string): GraphRunHooks {
    if (this.builtin && id === GRAPHS_DEFAULTS.builtinId) return (this.options.agent as BuiltinAgent).hooks;
    return this.options.hooks?.[id] ?? NO_HOOKS;
  }

  /** Where graph `id` was loaded from (its `langgraph.json` module and export); undefined for a graph given in code. */
  source(id: string): GraphSource | undefined {
    return graphSourceOf(this.entries.get(id));
  }

  /** Whether graph `id` is a factory `(config) => graph` (called per run, so not ahead of one). */
  isFactory(id: string): boolean {
    const entry = this.entries.get(id);
    return entry !== undefined && graphKind(entry) === "factory";
  }

  /** GraphNotFoundError unless `id` is a graph of this registry. */
  check(id: string): void {
    if (!this.has(id)) throw new GraphNotFoundError(id, this.ids());
  }

  /**
   * The compiled graph `id`, checkpointed by the runtime's saver. A factory is called with
   * `config` each time (the run's config); anything else is resolved once and cached (a failure
   * is not cached, so a fixed module can be retried).
   */
  async compiled(id: string, config: RunnableConfig = {}): Promise<CompiledGraphLike> {
    this.check(id);
    if (this.builtin && id === GRAPHS_DEFAULTS.builtinId) return (this.options.agent as BuiltinAgent).graph();
    const entry = this.entries.get(id) as GraphEntry;
    if (graphKind(entry) === "factory") return resolveGraph(entry, { checkpointer: this.options.checkpointer, store: this.options.store, config, id, onReplaced: this.onReplaced });
    let cached = this.resolved.get(id);
    if (cached === undefined) {
      cached = resolveGraph(entry, { checkpointer: this.options.checkpointer, store: this.options.store, id, onReplaced: this.onReplaced });
      this.resolved.set(id, cached);
      cached.catch(() => this.resolved.delete(id));
    }
    return cached;
  }
}
