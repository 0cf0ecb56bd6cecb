import type { CompiledGraphLike } from "./graph-kinds.js";
import { readGraphSchemas, readSubgraphSchemas, type GraphSchemas, type JsonSchema } from "./graph-introspection.js";
import { rootOf, StaticSchemas, type GraphSource, type StaticSchemaMap } from "./static-schemas.js";

function fromStatic(entry: StaticSchemaMap[string] | undefined): GraphSchemas | null {
  if (entry === undefined) return null;
  const schema = (value: JsonSchema | undefined): JsonSchema | null => value ?? null;
  return { state: schema(entry.state), input: schema(entry.input), output: schema(entry.output), config: schema(entry.config) };
}

/**
 * The schemas `/assistants/{id}/schemas` and `/subgraphs` answer, in LangGraph's server's order:
 * what the compiled graph tells at runtime (`readGraphSchemas`: StateSchema, Zod) when it tells
 * the types; else the TypeScript source read by LangGraph's static extractor (`StaticSchemas`),
 * for a subgraph its `root|namespace` entry (the root's when the extractor found none); else the
 * runtime read (channel names only).
 */
export class GraphSchemaReader {
  private staticSchemas = new StaticSchemas();

  constructor(
    private readonly compiled: (id: string) => Promise<CompiledGraphLike>,
    private readonly sourceOf: (id: string) => GraphSource | undefined,
  ) {}

  /** Forgets what was read of the sources (they changed: `devmind dev` reloaded the graphs). */
  forget(): void {
    this.staticSchemas = new StaticSchemas();
  }

  async schemas(id: string): Promise<GraphSchemas> {
    const read = await readGraphSchemas(await this.compiled(id));
    if (read.typed) return read.schemas;
    const map = await this.extracted(id);
    const root = map === null ? undefined : rootOf(map);
    return (root === undefined ? null : fromStatic(map?.[root])) ?? read.schemas;
  }

  async subgraphs(id: string, options: { namespace?: string | undefined; recurse?: boolean | undefined } = {}): Promise<Record<string, GraphSchemas>> {
    const found = await readSubgraphSchemas(await this.compiled(id), options);
    const result: Record<string, GraphSchemas> = {};
    let map: StaticSchemaMap | null | undefined;
    for (const [namespace, read] of Object.entries(found)) {
      if (read.typed) {
        result[namespace] = read.schemas;
        continue;
      }
      map ??= await this.extracted(id);
      const root = map === null ? undefined : rootOf(map);
      result[namespace] = (root === undefined ? null : fromStatic(map?.[`${root}|${namespace}`] ?? map?.[root])) ?? read.schemas;
    }
    return result;
  }

  /**
   * Resolves the graphs `ids` loaded from a source file and extracts the sources of those whose runtime schemas are
   * untyped, in one batch. Never throws: a graph that cannot be resolved is returned with its
   * error (its routes answer with it, 422), the others are warmed.
   */
  async warm(ids: readonly string[]): Promise<{ id: string; error: unknown }[]> {
    const untyped: GraphSource[] = [];
    const failed: { id: string; error: unknown }[] = [];
    for (const id of ids) {
      const source = this.sourceOf(id);
      if (source === undefined) continue;
      let graph: CompiledGraphLike;
      try {
        graph = await this.compiled(id);
      } catch (error) {
        failed.push({ id, error });
        continue;
      }
      const read = await readGraphSchemas(graph).catch(() => undefined);
      if (read !== undefined && !read.typed) untyped.push(source);
    }
    if (untyped.length > 0) await this.staticSchemas.of(untyped).catch(() => undefined);
    return failed;
  }

  private async extracted(id: string): Promise<StaticSchemaMap | null> {
    const source = this.sourceOf(id);
    if (source === undefined) return null;
    return (await this.staticSchemas.of([source])).get(`${source.file}:${source.exportName}`) ?? null;
  }
}
