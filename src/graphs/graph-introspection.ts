import type { CompiledGraphLike } from "./graph-kinds.js";

/** A JSON Schema object, as LangGraph Platform's `/assistants/{id}/schemas` returns them. */
export type JsonSchema = Record<string, unknown>;

/** The JSON schemas of a graph: its input, output and state (and config when the graph declares one). */
export interface GraphSchemas {
  input: JsonSchema | null;
  output: JsonSchema | null;
  state: JsonSchema | null;
  config: JsonSchema | null;
}

/** A graph's nodes and edges, as LangGraph's drawable graph `toJSON()` gives them (`/assistants/{id}/graph`). */
export interface GraphDrawing {
  nodes: { id: string | number; type?: string; data?: unknown; metadata?: unknown }[];
  edges: { source: string; target: string; data?: unknown; conditional?: boolean }[];
}

interface Drawable {
  toJSON(): GraphDrawing;
}

interface SchemaSource {
  getJsonSchema(): unknown;
  getInputJsonSchema(): unknown;
}

interface BuilderLike {
  _schemaDefinition?: unknown;
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  /** The Zod context schema of `new StateGraph(state, contextSchema)` (LangGraph keeps no Annotation one). */
  _configRuntimeSchema?: unknown;
}

/** The nodes and edges of a compiled graph (`xray`: subgraphs expanded, a depth or true). */
export async function drawGraph(graph: CompiledGraphLike, options: { xray?: boolean | number } = {}): Promise<GraphDrawing> {
  const withAsync = graph as CompiledGraphLike & { getGraphAsync?: (config: Record<string, unknown>) => Promise<Drawable> };
  const config: Record<string, unknown> = options.xray === undefined ? {} : { xray: options.xray };
  const drawable = typeof withAsync.getGraphAsync === "function" ? await withAsync.getGraphAsync(config) : (graph.getGraph(config as never) as Drawable);
  return drawable.toJSON();
}

function isSchemaSource(value: unknown): value is SchemaSource {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as SchemaSource).getJsonSchema === "function" &&
    typeof (value as SchemaSource).getInputJsonSchema === "function"
  );
}

function asSchema(value: unknown): JsonSchema | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonSchema) : null;
}

/** An object schema naming the channels of an `Annotation.Root` definition (their types are not known at runtime). */
function channelSchema(definition: unknown, title: string): JsonSchema | null {
  if (definition === null || typeof definition !== "object") return null;
  const names = Object.keys(definition).filter((name) => !name.startsWith("__"));
  if (names.length === 0) return null;
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title,
    type: "object",
    description: "the graph's channels; their value types are not declared at runtime (Annotation state)",
    properties: Object.fromEntries(names.map((name) => [name, {}])),
  };
}

/** The config (context) schema of a graph whose StateGraph got a Zod context schema; null otherwise. */
async function zodConfigSchema(graph: CompiledGraphLike, builder: BuilderLike): Promise<JsonSchema | null> {
  if (builder._configRuntimeSchema === undefined || builder._configRuntimeSchema === null) return null;
  try {
    const zod = await import("@langchain/langgraph/zod/schema");
    const fromRegistry = asSchema(zod.getConfigTypeSchema(graph as unknown as Parameters<typeof zod.getConfigTypeSchema>[0]));
    if (fromRegistry !== null) return fromRegistry;
  } catch {
    // not a Zod schema LangGraph's registry reads: converted directly below
  }
  return directZodSchema(builder._configRuntimeSchema);
}

/** A Zod schema (v3 or v4) converted without LangGraph's registry (so without its `jsonSchemaExtra`); null for anything else. */
async function directZodSchema(schema: unknown): Promise<JsonSchema | null> {
  if (schema === undefined || schema === null || typeof schema !== "object") return null;
  try {
    const [{ toJsonSchema }, { isZodSchemaV3, isZodSchemaV4 }] = await Promise.all([import("@langchain/core/utils/json_schema"), import("@langchain/core/utils/types")]);
    if (!isZodSchemaV4(schema) && !isZodSchemaV3(schema)) return null;
    return asSchema(toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]));
  } catch {
    return null;
  }
}

/**
 * The JSON schemas of a compiled graph, read at runtime in LangGraph's server's order: a
 * `StateSchema` state (its own JSON schemas); a Zod state through LangGraph's schema registry
 * (with `withLangGraph`'s `jsonSchemaExtra`; the state schema is the update schema, as there);
 * a Zod state converted directly. The config (context) schema is the StateGraph's Zod context
 * schema (`new StateGraph(state, contextSchema)`), with any kind of state. LangGraph's server reads
 * the rest from the TypeScript source with the TypeScript compiler, which devmind does not
 * carry: an `Annotation.Root` state has no types at runtime, so its schemas name its channels with
 * no types, and an `Annotation.Root` context gives no config schema (null). Null where the graph has
 * none (e.g. a graph that is not a StateGraph).
 */
export async function graphSchemas(graph: CompiledGraphLike): Promise<GraphSchemas> {
  return (await readGraphSchemas(graph)).schemas;
}

/**
 * `graphSchemas`, telling whether the runtime read found the value types (`typed`): false for an
 * `Annotation.Root` state (channel names only) or a graph that is no StateGraph, where LangGraph's
 * server reads the TypeScript source instead (`StaticSchemas`).
 */
export async function readGraphSchemas(graph: CompiledGraphLike): Promise<{ schemas: GraphSchemas; typed: boolean }> {
  const builder = (graph as CompiledGraphLike & { builder?: BuilderLike }).builder;
  if (builder === undefined) return { schemas: { input: null, output: null, state: null, config: null }, typed: false };
  const config = await zodConfigSchema(graph, builder);
  const state = builder._schemaRuntimeDefinition;
  if (isSchemaSource(state) || isSchemaSource(builder._inputRuntimeDefinition) || isSchemaSource(builder._outputRuntimeDefinition)) {
    const input = builder._inputRuntimeDefinition;
    const output = builder._outputRuntimeDefinition;
    const schemas = {
      state: isSchemaSource(state) ? asSchema(state.getJsonSchema()) : null,
      input: asSchema(isSchemaSource(input) ? input.getInputJsonSchema() : isSchemaSource(state) ? state.getInputJsonSchema() : null),
      output: asSchema(isSchemaSource(output) ? output.getJsonSchema() : isSchemaSource(state) ? state.getJsonSchema() : null),
      config,
    };
    return { schemas, typed: true };
  }
  try {
    const zod = await import("@langchain/langgraph/zod/schema");
    const compiled = graph as unknown as Parameters<typeof zod.getInputTypeSchema>[0];
    const fromZod: GraphSchemas = {
      state: asSchema(zod.getUpdateTypeSchema(compiled)),
      input: asSchema(zod.getInputTypeSchema(compiled)),
      output: asSchema(zod.getOutputTypeSchema(compiled)),
      config,
    };
    if (fromZod.state !== null || fromZod.input !== null || fromZod.output !== null) return { schemas: fromZod, typed: true };
  } catch {
    // not registered with LangGraph's Zod registry: converted directly below
  }
  const direct = await directZodSchema(state);
  if (direct !== null) {
    const { required: _required, ...optional } = direct;
    const schemas = {
      state: direct,
      input: (await directZodSchema(builder._inputRuntimeDefinition)) ?? optional,
      output: (await directZodSchema(builder._outputRuntimeDefinition)) ?? direct,
      config,
    };
    return { schemas, typed: true };
  }
  const schemas = {
    state: channelSchema(builder._schemaDefinition, "state"),
    input: channelSchema(builder._inputDefinition, "input"),
    output: channelSchema(builder._outputDefinition, "output"),
    config,
  };
  return { schemas, typed: config !== null };
}

interface SubgraphSource {
  getSubgraphsAsync?: (namespace?: string, recurse?: boolean) => AsyncIterable<[string, CompiledGraphLike]>;
  getSubgraphs?: (namespace?: string, recurse?: boolean) => Iterable<[string, CompiledGraphLike]>;
}

/**
 * The subgraphs of a compiled graph by namespace, each with `graphSchemas` (what LangGraph
 * Platform's `/assistants/{id}/subgraphs[/{namespace}]?recurse` answers). Empty for a graph
 * without subgraphs or one that is not a Pregel graph.
 */
export async function subgraphSchemas(graph: CompiledGraphLike, options: { namespace?: string | undefined; recurse?: boolean | undefined } = {}): Promise<Record<string, GraphSchemas>> {
  return Object.fromEntries(Object.entries(await readSubgraphSchemas(graph, options)).map(([namespace, read]) => [namespace, read.schemas]));
}

/** `subgraphSchemas`, with each subgraph's `typed` (see `readGraphSchemas`). */
export async function readSubgraphSchemas(graph: CompiledGraphLike, options: { namespace?: string | undefined; recurse?: boolean | undefined } = {}): Promise<Record<string, { schemas: GraphSchemas; typed: boolean }>> {
  const source = graph as CompiledGraphLike & SubgraphSource;
  const found: [string, CompiledGraphLike][] = [];
  if (typeof source.getSubgraphsAsync === "function") {
    for await (const entry of source.getSubgraphsAsync(options.namespace, options.recurse)) found.push(entry);
  } else if (typeof source.getSubgraphs === "function") {
    found.push(...source.getSubgraphs(options.namespace, options.recurse));
  }
  const result: Record<string, { schemas: GraphSchemas; typed: boolean }> = {};
  for (const [namespace, subgraph] of found) result[namespace] = await readGraphSchemas(subgraph);
  return result;
}
