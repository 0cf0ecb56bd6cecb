import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { GRAPHS_DEFAULTS } from "../constants.js";
import type { JsonSchema } from "./graph-introspection.js";

/** Where a loaded graph came from: the module file and the export `langgraph.json` names. */
export interface GraphSource {
  file: string;
  exportName: string;
}

/** One graph's schemas as LangGraph's static extractor gives them, by graph (the root: the export's name) and `root|namespace` for subgraphs. */
export type StaticSchemaMap = Record<string, { state?: JsonSchema; input?: JsonSchema; output?: JsonSchema; config?: JsonSchema }>;

/** LangGraph's static extractor (`@langchain/langgraph-api/schema`), as far as devmind calls it. */
interface StaticExtractor {
  getStaticGraphSchema(specs: Record<string, { sourceFile: string; exportSymbol: string }>, options?: { timeoutMs?: number }): Promise<Record<string, StaticSchemaMap>>;
}

const sources = new WeakMap<object, GraphSource>();

/** Records where a graph entry (what a `langgraph.json` export gave) was loaded from, for `staticSchemas`. */
export function rememberGraphSource(entry: unknown, source: GraphSource): void {
  if ((typeof entry === "object" || typeof entry === "function") && entry !== null) sources.set(entry, source);
}

/** Where a graph entry was loaded from; undefined for a graph given in code. */
export function graphSourceOf(entry: unknown): GraphSource | undefined {
  return (typeof entry === "object" || typeof entry === "function") && entry !== null ? sources.get(entry) : undefined;
}

/** The extractor resolved from the graph module's own directory (the project's install), or null when the project has none. */
async function extractorFor(file: string): Promise<StaticExtractor | null> {
  let resolved: string;
  try {
    resolved = createRequire(file).resolve("@langchain/langgraph-api/schema");
  } catch {
    return null;
  }
  const module = (await import(pathToFileURL(resolved).href)) as Partial<StaticExtractor>;
  return typeof module.getStaticGraphSchema === "function" ? (module as StaticExtractor) : null;
}

/**
 * The TypeScript types of graphs whose state is an `Annotation.Root` (which carries no types at
 * runtime), as LangGraph's own server reads them: its static extractor
 * (`@langchain/langgraph-api/schema`, which the LangGraph CLI installs, with the project's
 * `typescript`) reads the module's source. devmind does not carry a TypeScript compiler; it uses the
 * project's extractor when the project has one and otherwise answers null (the caller keeps the
 * runtime schemas). One extraction per graph, as the official server runs it (a TypeScript
 * program of that module alone: a program holding several graphs names shared types
 * differently), one at a time, cached per source; a failure is cached too (null), so a broken
 * source is not compiled again per request.
 */
export class StaticSchemas {
  private readonly cache = new Map<string, Promise<StaticSchemaMap | null>>();
  /** The extractions queued so far: each starts when the one before it ended (one compiler at a time). */
  private queue: Promise<unknown> = Promise.resolve();

  /** The extracted schemas of each source (by `file:export`), extracting those not yet asked for, one by one. */
  async of(wanted: readonly GraphSource[]): Promise<Map<string, StaticSchemaMap | null>> {
    for (const source of wanted) {
      if (this.cache.has(keyOf(source))) continue;
      const extracted = this.queue.then(() => this.extract([source])).then((all) => all.get(keyOf(source)) ?? null);
      this.queue = extracted.catch(() => null);
      this.cache.set(keyOf(source), extracted);
    }
    const result = new Map<string, StaticSchemaMap | null>();
    for (const source of wanted) result.set(keyOf(source), await (this.cache.get(keyOf(source)) as Promise<StaticSchemaMap | null>));
    return result;
  }

  private async extract(sourcesToRead: readonly GraphSource[]): Promise<Map<string, StaticSchemaMap | null>> {
    const found = new Map<string, StaticSchemaMap | null>();
    const first = sourcesToRead[0];
    const extractor = first === undefined ? null : await extractorFor(first.file).catch(() => null);
    if (extractor === null) return found;
    const specs = Object.fromEntries(sourcesToRead.map((source) => [keyOf(source), { sourceFile: source.file, exportSymbol: source.exportName }]));
    try {
      const all = await extractor.getStaticGraphSchema(specs, { timeoutMs: GRAPHS_DEFAULTS.staticSchemaTimeoutMs });
      for (const source of sourcesToRead) found.set(keyOf(source), all[keyOf(source)] ?? null);
    } catch {
      // a source the extractor cannot read (or a timeout): the runtime schemas stand
    }
    return found;
  }
}

function keyOf(source: GraphSource): string {
  return `${source.file}:${source.exportName}`;
}

/** The root graph's entry of an extracted map (the key without `|`), as LangGraph's server picks it. */
export function rootOf(map: StaticSchemaMap): string | undefined {
  return Object.keys(map).find((key) => !key.includes("|"));
}
