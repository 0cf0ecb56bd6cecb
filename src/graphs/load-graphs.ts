import { existsSync } from "node:fs";
import { extname } from "node:path";
import { pathToFileURL } from "node:url";
import { CLI_BUNDLE, DEV_DEFAULTS } from "../constants.js";
import { GraphDefinitionError } from "../errors.js";
import { graphKind, graphToInspect, type GraphEntry, type GraphKind } from "./graph-kinds.js";
import { reservedNodeNames, reservedNamesMessage } from "./reserved-node-names.js";
import type { GraphSpec } from "./langgraph-config.js";
import { registerSdkLogger } from "./sdk-logger.js";
import { rememberGraphSource } from "./static-schemas.js";

/** One graph of a config, loaded or not. */
export type LoadedGraph =
  | { id: string; source: string; file: string; kind: GraphKind; entry: GraphEntry; error?: undefined }
  | { id: string; source: string; file: string; kind?: undefined; entry?: undefined; error: GraphDefinitionError };

/** Extensions loaded through tsx (no build step), as the LangGraph CLI does. */
const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** tsx's module hooks, registered once per process by the first TypeScript graph. */
let typescriptHooks: Promise<void> | undefined;

/**
 * Registers tsx's ESM hooks for the whole process, once. Not tsx's `tsImport`: that loads the
 * graph file and everything it imports under a namespace of its own, so a project graph got a
 * second copy of `@langchain/langgraph` and `@langchain/core` (about 2 s of CPU per process that
 * loads graphs, and values of one copy failing `instanceof` checks of the other). With the hooks
 * registered, the graph's bare imports resolve to the modules the process already loaded.
 */
export function registerTypeScript(): Promise<void> {
  typescriptHooks ??= import("tsx/esm/api").then(({ register }) => {
    register();
  });
  typescriptHooks.catch(() => (typescriptHooks = undefined));
  return typescriptHooks;
}

/**
 * Imports a graph module (or another module of the project: its http app): TypeScript through
 * tsx's hooks (a runtime dependency, so a project's `.ts` graphs need no build), JavaScript with
 * Node's own `import()`. A module is loaded once per process, as any import. The SDK's global
 * logger is registered first, as LangGraph's server does, for modules calling `getLogger()` at import.
 * `generation` (`devmind dev`, see module-generations.ts): the module and the project modules it
 * imports are loaded afresh under that generation.
 */
export async function importGraphModule(file: string, generation?: number): Promise<Record<string, unknown>> {
  registerSdkLogger();
  const url = pathToFileURL(file).href + (generation === undefined ? "" : `?${DEV_DEFAULTS.generationParam}=${generation}`);
  if (TYPESCRIPT.has(extname(file).toLowerCase())) await registerTypeScript();
  return (await import(url)) as Record<string, unknown>;
}

/**
 * Loads one graph of a config: imports its file and checks that the export is a graph entry (a
 * compiled graph, a StateGraph, a promise — awaited here, so a failing promise is a load error —
 * or a factory, called per run later). Never throws: a failure is returned as a
 * GraphDefinitionError naming the graph id, the file and the cause.
 */
export async function loadGraph(spec: GraphSpec, options: LoadOptions = {}): Promise<LoadedGraph> {
  const base = { id: spec.id, source: spec.source, file: spec.file };
  const fail = (message: string, cause?: unknown): LoadedGraph => ({
    ...base,
    error: new GraphDefinitionError(`graph ${spec.id} (${spec.file}): ${message}`, { graph: spec.id, file: spec.file }, "GRAPH_LOAD_FAILED", cause),
  });
  if (!existsSync(spec.file)) return fail("no such file");
  let module: Record<string, unknown>;
  try {
    module = await importGraphModule(spec.file, options.generation);
  } catch (error) {
    return fail(`the module failed to load: ${firstLine(error)}`, error);
  }
  if (!(spec.exportName in module)) {
    const exported = Object.keys(module).filter((name) => name !== "__esModule");
    return fail(`no export named ${spec.exportName} (it exports ${exported.length === 0 ? "nothing" : exported.slice(0, 10).join(", ")})`);
  }
  let entry: unknown = module[spec.exportName];
  if (graphKind(entry) === "promise") {
    try {
      entry = await (entry as PromiseLike<unknown>);
    } catch (error) {
      return fail(`the exported promise rejected: ${firstLine(error)}`, error);
    }
  }
  const kind = graphKind(entry);
  if (kind === null || kind === "promise") return fail(`the export ${spec.exportName} is not a graph (expected a compiled graph, a StateGraph, a promise of one, or a factory (config) => graph)`);
  rememberGraphSource(entry, { file: spec.file, exportName: spec.exportName });
  return { ...base, kind, entry: entry as GraphEntry };
}

/** Options of `loadGraph` / `loadGraphs`. */
export interface LoadOptions {
  /** Import the modules afresh under this generation (`devmind dev`: `trackModuleGenerations` first). */
  generation?: number | undefined;
}

/** Loads every graph of a config (in order), collecting failures instead of stopping at the first. */
export async function loadGraphs(specs: readonly GraphSpec[], options: LoadOptions = {}): Promise<LoadedGraph[]> {
  // the CLI bundle holds its own LangGraph; a graph would import another (see src/cli/cli-entry.ts)
  if (import.meta.url.endsWith(`/${CLI_BUNDLE.file}`)) {
    throw new GraphDefinitionError(`project graphs cannot load in the bundled CLI (it has its own copy of LangGraph); start it with the devmind bin (dist/src/cli/main.js) or dist/src/cli/cli-program.js`, {}, "GRAPH_LOAD_FAILED");
  }
  const loaded: LoadedGraph[] = [];
  for (const spec of specs) loaded.push(withoutReservedNames(await loadGraph(spec, options)));
  return loaded;
}

/**
 * A loaded graph, or its load error when it has a node named like devmind's own (`__…`, see
 * reserved-node-names.ts); a factory's graph is checked when a run resolves it.
 */
function withoutReservedNames(loaded: LoadedGraph): LoadedGraph {
  if (loaded.entry === undefined) return loaded;
  const inspectable = graphToInspect(loaded.entry);
  const reserved = inspectable === null ? [] : reservedNodeNames(inspectable);
  if (reserved.length === 0) return loaded;
  const { id, source, file } = loaded;
  return { id, source, file, error: new GraphDefinitionError(`graph ${id} (${file}): ${reservedNamesMessage(reserved)}`, { graph: id, file, nodes: reserved.slice(0, 20) }, "GRAPH_LOAD_FAILED") };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n")[0] ?? "").slice(0, 500);
}
