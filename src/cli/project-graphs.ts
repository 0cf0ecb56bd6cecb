import { GRAPHS_DEFAULTS } from "../constants.js";
import type { GraphEntry } from "../graphs/graph-kinds.js";
import { ConfigError } from "../errors.js";
import { secondCopies, secondCopyWarning } from "../graphs/package-copies.js";
import { applyProjectEnv, findLanggraphConfig, readLanggraphConfig, type LanggraphConfig } from "../graphs/langgraph-config.js";

/** The graphs a command runs: those of the project's `langgraph.json`, or the built-in agent alone. */
export interface ProjectGraphs {
  /** For `createRuntime({ graphs })`; undefined: the built-in agent alone (no config file). */
  graphs: Record<string, GraphEntry | false> | undefined;
  /** The config file read, or null. */
  path: string | null;
  /** What the file says (its `http`, `ui`, …), or null without one. */
  config: LanggraphConfig | null;
}

/**
 * Reads `./langgraph.json` (or `--config PATH`), applies its `env` (before the caller loads
 * devmind's own configuration, so the file may set DATABASE_URL and the like), and loads every
 * graph it names. Warnings about keys devmind does not use go to stderr. A graph that fails to
 * load throws its GraphDefinitionError (exit 2), naming the graph id, the file and the cause —
 * a service never starts with a graph missing. The built-in agent is left out unless the file
 * names a graph `agent`; without a file it is the one graph. `--config` naming a missing file is
 * a ConfigError (exit 2). `options.serve`: keys `devmind serve` cannot honour (`auth`, some of
 * `http`) are a ConfigError naming them (exit 2), before any graph loads. `options.generation`:
 * the graph modules load under that module generation (`devmind dev`, see module-generations.ts).
 */
export async function loadProjectGraphs(explicitPath: string | undefined, options: { serve?: boolean; generation?: number } = {}): Promise<ProjectGraphs> {
  const path = findLanggraphConfig(explicitPath);
  if (path === null) return { graphs: undefined, path: null, config: null };
  const config = readLanggraphConfig(path);
  if (options.serve === true && config.serveRefusals.length > 0) {
    throw new ConfigError(config.serveRefusals.join("; "), { path, keys: config.serveRefusals.length });
  }
  for (const warning of config.warnings) process.stderr.write(`devmind: warning: ${warning}\n`);
  for (const warning of applyProjectEnv(config)) process.stderr.write(`devmind: warning: ${warning}\n`);
  const graphs: Record<string, GraphEntry | false> = { [GRAPHS_DEFAULTS.builtinId]: false };
  // loaded only when there are graphs to load: LangGraph and the TypeScript loader are heavy
  const { loadGraphs } = await import("../graphs/load-graphs.js");
  for (const loaded of await loadGraphs(config.graphs, { generation: options.generation })) {
    if (loaded.error !== undefined) throw loaded.error;
    graphs[loaded.id] = loaded.entry;
  }
  warnSecondCopies([config.dir, ...config.graphs.map((spec) => spec.file)]);
  return { graphs, path, config };
}

/**
 * Warns once per package (stderr) when the project's graphs (`files`: their files and the config's
 * folder) resolve LangGraph or LangChain core to a copy other than devmind's. Every command that
 * loads a project's graphs calls it.
 */
export function warnSecondCopies(files: string[]): void {
  for (const copy of secondCopies(files)) process.stderr.write(`devmind: warning: ${secondCopyWarning(copy)}\n`);
}
