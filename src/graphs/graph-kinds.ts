import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import { DevmindError, GraphDefinitionError } from "../errors.js";
import { PostgresStore } from "../store/postgres-store.js";
import { refuseReservedNodeNames } from "./reserved-node-names.js";
import { ledgerToolNodes } from "./tool-node-ledger.js";

/**
 * A compiled LangGraph graph as devmind drives it: invoked and streamed with a thread's config,
 * its state read back, its checkpointer set to devmind's.
 */
export interface CompiledGraphLike {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  stream(input: unknown, config?: RunnableConfig): Promise<AsyncIterable<unknown>>;
  getState(config: RunnableConfig): Promise<unknown>;
  getGraph(config?: RunnableConfig): unknown;
  checkpointer?: unknown;
  store?: unknown;
}

/** An uncompiled `StateGraph` (anything with `compile` and `addNode`). */
export interface StateGraphLike {
  compile(options?: { checkpointer?: BaseCheckpointSaver; store?: BaseStore }): CompiledGraphLike;
  addNode: (...args: never[]) => unknown;
}

/** An agent object holding its compiled graph, as LangChain's `createAgent` returns (`agent.graph`). */
export interface AgentLike {
  graph: CompiledGraphLike;
}

/** What a factory or a promise may give: a compiled graph, a StateGraph or an agent object. */
export type GraphValue = CompiledGraphLike | StateGraphLike | AgentLike;

/** What a graph entry may be, as `langgraph.json` allows: a graph, a promise of one, or a factory. */
export type GraphEntry = GraphValue | PromiseLike<GraphValue> | GraphFactory;

/** A factory `(config) => graph` (sync or async), called for each run with the run's config. */
export type GraphFactory = (config: RunnableConfig) => GraphValue | PromiseLike<GraphValue>;

/** The kind of a graph entry, or null when the value is not one. */
export type GraphKind = "compiled" | "state_graph" | "promise" | "factory";

/** Tells what kind of graph entry `value` is (null: not a graph). Checks shape, not class, so a second copy of LangGraph in node_modules works too. */
export function graphKind(value: unknown): GraphKind | null {
  if (typeof value === "function") return "factory";
  if (value === null || typeof value !== "object") return null;
  const candidate = value as Record<string, unknown>;
  if (typeof candidate["then"] === "function") return "promise";
  if (wrappedGraph(value) !== undefined) return "compiled";
  if (typeof candidate["invoke"] === "function" && typeof candidate["getState"] === "function" && typeof candidate["getGraph"] === "function") return "compiled";
  if (typeof candidate["compile"] === "function" && typeof candidate["addNode"] === "function") return "state_graph";
  return null;
}

/**
 * Turns a graph entry into a compiled graph checkpointed by `checkpointer`: awaits a promise,
 * calls a factory with `config`, compiles a StateGraph with the checkpointer, and attaches it to
 * a compiled graph. A checkpointer (or a store) the graph was compiled with is replaced by
 * devmind's, as the LangGraph Platform does, and `onReplaced` is told (the runtime logs it
 * once). Every tool node in the graph
 * and its subgraphs gets the run's tool ledger (`ledgerToolNodes`, CONTRACT section 3).
 */
export async function resolveGraph(
  entry: unknown,
  options: { checkpointer: BaseCheckpointSaver; store?: BaseStore | undefined; config?: RunnableConfig; id: string; onReplaced?: ((id: string, replaced: ReplacedPersistence) => void) | undefined },
): Promise<CompiledGraphLike> {
  let value: unknown = entry;
  for (let depth = 0; depth < 4; depth += 1) {
    const kind = graphKind(value);
    if (kind === "promise") {
      value = await built(options.id, () => value as PromiseLike<unknown>);
      continue;
    }
    if (kind === "factory") {
      if (depth > 0) throw new GraphDefinitionError(`graph ${options.id}: the factory returned another function, not a graph`, { graph: options.id });
      const factory = value as GraphFactory;
      value = await built(options.id, () => factory(options.config ?? {}));
      continue;
    }
    if (kind === "state_graph") return checked((value as StateGraphLike).compile({ checkpointer: options.checkpointer, ...(options.store === undefined ? {} : { store: options.store }) }), options.id);
    if (kind === "compiled") return checked(attachCheckpointer(wrappedGraph(value) ?? (value as CompiledGraphLike), options.checkpointer, options.id, options.store, options.onReplaced), options.id);
    throw new GraphDefinitionError(`graph ${options.id}: ${describeValue(value)} is not a LangGraph graph (expected a compiled graph, a StateGraph, a promise of one, or a factory (config) => graph)`, { graph: options.id });
  }
  throw new GraphDefinitionError(`graph ${options.id}: promises or factories nested too deep`, { graph: options.id });
}

/**
 * Awaits a graph's promise or factory: what it throws (a missing key, a module that cannot start)
 * becomes GRAPH_LOAD_FAILED naming the graph and the cause's first line, so its runs, its drawing,
 * its schemas and its threads' state all say why (422 on the HTTP API, not a bare 500); devmind's
 * own errors pass unchanged.
 */
async function built(id: string, make: () => unknown): Promise<unknown> {
  try {
    return await make();
  } catch (error) {
    if (error instanceof DevmindError) throw error;
    const text = error instanceof Error ? error.message : String(error);
    throw new GraphDefinitionError(`graph ${id} could not be built: ${(text.split("\n")[0] ?? "").slice(0, 500)}`, { graph: id }, "GRAPH_LOAD_FAILED", error);
  }
}

/**
 * The compiled graph of a loaded entry, to look at (its nodes), not to run: a StateGraph is
 * compiled without a checkpointer, an agent object gives its graph. Null for a factory (it is
 * called with a run's config only) and for anything that is not a graph.
 */
export function graphToInspect(entry: unknown): CompiledGraphLike | null {
  const kind = graphKind(entry);
  if (kind === "state_graph") return (entry as StateGraphLike).compile();
  if (kind === "compiled") return wrappedGraph(entry) ?? (entry as CompiledGraphLike);
  return null;
}

/** A resolved graph ready to run: no node named like devmind's own, every tool node ledgered. */
function checked(graph: CompiledGraphLike, id: string): CompiledGraphLike {
  refuseReservedNodeNames(graph, id);
  ledgerToolNodes(graph);
  return graph;
}

/**
 * The compiled graph inside an agent object (LangChain's `createAgent` returns a `ReactAgent`
 * whose `graph` is the compiled StateGraph; its own `getState` refuses to work), or undefined.
 */
function wrappedGraph(value: unknown): CompiledGraphLike | undefined {
  const inner = (value as { graph?: unknown } | null)?.graph;
  if (inner === null || typeof inner !== "object") return undefined;
  const graph = inner as Record<string, unknown>;
  return typeof graph["invoke"] === "function" && typeof graph["getState"] === "function" && typeof graph["getGraph"] === "function" ? (inner as CompiledGraphLike) : undefined;
}

/** What devmind put in place of a graph's own persistence: the class names of the checkpointer and store it brought. */
export interface ReplacedPersistence {
  checkpointer?: string;
  store?: string;
}

function className(value: unknown, fallback: string): string {
  return typeof value === "object" && value !== null ? ((value as { constructor?: { name?: string } }).constructor?.name ?? fallback) : fallback;
}

/**
 * The checkpointer and store a compiled graph brought that devmind replaces (the LangGraph
 * Platform does the same): a checkpointer that is not devmind's (MemorySaver, another library's
 * saver; `compile({ checkpointer: new MemorySaver() })` is how many tutorials write it), and,
 * when devmind has a store, a store that is not one of devmind's. Its runs would otherwise be
 * kept where devmind cannot see them, lost at a restart. Empty when nothing is replaced.
 */
export function replacedPersistence(graph: Pick<CompiledGraphLike, "checkpointer" | "store">, ours: { checkpointer?: unknown; store?: unknown } = {}): ReplacedPersistence {
  const replaced: ReplacedPersistence = {};
  const current = graph.checkpointer;
  if (current !== undefined && current !== null && typeof current !== "boolean" && current !== ours.checkpointer && !(current instanceof PostgresCheckpointSaver)) {
    replaced.checkpointer = className(current, "a checkpointer");
  }
  const store = graph.store;
  if (store !== undefined && store !== null && store !== ours.store && !(store instanceof PostgresStore)) replaced.store = className(store, "a store");
  return replaced;
}

/** "its MemorySaver and InMemoryStore" — the words for what was replaced. */
export function replacedWords(replaced: ReplacedPersistence): string {
  return [replaced.checkpointer, replaced.store].filter((name): name is string => name !== undefined).join(" and ");
}

/**
 * The compiled graph checkpointed by `checkpointer`, without changing the caller's object (one
 * compiled graph may serve several runtimes on several databases): a view whose own
 * `checkpointer` is ours and whose nodes, channels and methods are the graph's. A checkpointer
 * the graph brought is replaced by ours, as is a store that is not devmind's when we have one
 * (`replacedPersistence`; `onReplaced` hears what); a `checkpointer: false` graph (a subgraph
 * meant to share its parent's) runs checkpointed too, as a root graph must.
 */
function attachCheckpointer(graph: CompiledGraphLike, checkpointer: BaseCheckpointSaver, id: string, store?: BaseStore, onReplaced?: (id: string, replaced: ReplacedPersistence) => void): CompiledGraphLike {
  if (graph.checkpointer === checkpointer && (store === undefined || graph.store === store)) return graph;
  const replaced = replacedPersistence(graph, { checkpointer, store });
  if (store === undefined) delete replaced.store;
  if (replaced.checkpointer !== undefined || replaced.store !== undefined) onReplaced?.(id, replaced);
  const own = (value: unknown) => ({ value, writable: true, enumerable: true, configurable: true });
  // a devmind store the graph was compiled with stays; any other gets devmind's
  const keepStore = store === undefined || (graph.store !== undefined && graph.store !== null && replaced.store === undefined);
  return Object.create(graph, { checkpointer: own(checkpointer), ...(keepStore ? {} : { store: own(store) }) }) as CompiledGraphLike;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "object") return `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "(none)"}`;
  return `a ${typeof value}`;
}
