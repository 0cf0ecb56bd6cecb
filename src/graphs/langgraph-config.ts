import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { parseDotenv } from "../config-dotenv.js";
import { GRAPHS_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";

/** One graph named in `langgraph.json`: `"id": "./path.ts:exportName"`. */
export interface GraphSpec {
  id: string;
  /** As written in the file, e.g. `./src/agent.ts:graph`. */
  source: string;
  /** Absolute path of the module. */
  file: string;
  /** The export holding the graph (`default` when the spec names none). */
  exportName: string;
}

/** A read and checked `langgraph.json`. */
export interface LanggraphConfig {
  /** Absolute path of the file. */
  path: string;
  graphs: GraphSpec[];
  /** Variables from `env` (a file name relative to the config, or an object), not yet applied. */
  env: Record<string, string>;
  /** Keys present but not honoured by devmind, each with why; printed as warnings, never fatal. */
  warnings: string[];
}

/**
 * Keys of the LangGraph CLI's format that only shape a container build or a platform feature
 * devmind provides its own way; present, they are ignored with a warning saying so.
 */
const IGNORED_KEYS: Record<string, string> = {
  dependencies: "packages are installed by your own package.json",
  node_version: "devmind runs on the Node.js that starts it",
  dockerfile_lines: "devmind builds no image from langgraph.json (see its Dockerfile)",
  image_distro: "devmind builds no image from langgraph.json",
  python_version: "devmind runs JavaScript and TypeScript graphs only",
  pip_config_file: "devmind runs JavaScript and TypeScript graphs only",
  store: "devmind attaches its own store settings",
  checkpointer: "devmind attaches its own PostgreSQL checkpointer to every graph",
  http: "devmind serve has its own HTTP settings (DEVMIND_HOST, DEVMIND_PORT, DEVMIND_API_KEYS)",
  auth: "devmind serve authenticates with DEVMIND_API_KEYS",
  ui: "generative UI components are not served by devmind",
  api_version: "devmind serves its own API version",
};

/** Graph ids: what the SDK sends as `assistant_id` / `graph_id`. */
const GRAPH_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

const CONFIG_SCHEMA = z
  .object({
    graphs: z.record(z.string(), z.string().min(1)),
    env: z.union([z.string().min(1), z.record(z.string(), z.string())]).optional(),
  })
  .passthrough();

/** Where `langgraph.json` is looked for: `--config PATH`, else `./langgraph.json`; null when absent (the built-in agent alone). */
export function findLanggraphConfig(explicit: string | undefined, cwd: string = process.cwd()): string | null {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) throw new ConfigError(`--config: no file ${path}`, { variables: ["--config"], path });
    return path;
  }
  const path = resolve(cwd, GRAPHS_DEFAULTS.configFile);
  return existsSync(path) ? path : null;
}

/**
 * Reads and checks a `langgraph.json` (the LangGraph CLI's format): `graphs` (required, at least
 * one, ids as the SDK uses them, specs `./file:export`), `env` (a .env file name relative to the
 * config, or an object of strings). Keys devmind does not honour are returned as warnings.
 * Anything malformed is a ConfigError naming the file and the key (exit 2).
 */
export function readLanggraphConfig(path: string): LanggraphConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}`, { path });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON: ${(error as Error).message}`, { path });
  }
  const parsed = CONFIG_SCHEMA.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join(".") || "(top level)";
    throw new ConfigError(`${path}: ${where}: ${issue?.message ?? "invalid"} (expected {"graphs": {"ID": "./path.ts:export"}, "env"?: ".env"})`, { path, key: where });
  }
  const dir = dirname(path);
  const graphs = Object.entries(parsed.data.graphs).map(([id, source]) => graphSpec(path, dir, id, source));
  if (graphs.length === 0) throw new ConfigError(`${path}: graphs: name at least one graph ("ID": "./path.ts:export")`, { path, key: "graphs" });
  const warnings: string[] = [];
  for (const key of Object.keys(parsed.data)) {
    if (key === "graphs" || key === "env") continue;
    const why = IGNORED_KEYS[key];
    warnings.push(why === undefined ? `${path}: unknown key "${key}" ignored` : `${path}: "${key}" ignored: ${why}`);
  }
  return { path, graphs, env: readEnv(path, dir, parsed.data.env), warnings };
}

function graphSpec(path: string, dir: string, id: string, source: string): GraphSpec {
  if (!GRAPH_ID.test(id)) throw new ConfigError(`${path}: graphs: invalid graph id ${JSON.stringify(id.slice(0, 100))} (letters, digits, _ . -; at most 100)`, { path, key: `graphs.${id}` });
  // the last colon splits file and export, so a Windows drive letter stays in the path
  const colon = source.lastIndexOf(":");
  const driveLetterOnly = colon === 1 && /^[A-Za-z]$/.test(source.slice(0, 1));
  const hasExport = colon >= 0 && !driveLetterOnly;
  const fileText = hasExport ? source.slice(0, colon) : source;
  const exportName = hasExport ? source.slice(colon + 1) : "default";
  if (fileText === "" || exportName === "" || !/^[A-Za-z_$][\w$]*$/.test(exportName)) {
    throw new ConfigError(`${path}: graphs.${id}: expected "./path.ts:exportName", got ${JSON.stringify(source.slice(0, 200))}`, { path, key: `graphs.${id}` });
  }
  const file = isAbsolute(fileText) ? fileText : resolve(dir, fileText);
  return { id, source, file, exportName };
}

function readEnv(path: string, dir: string, env: string | Record<string, string> | undefined): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== "string") return { ...env };
  const file = resolve(dir, env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`${path}: env: cannot read ${file}: ${(error as Error).message}`, { path, key: "env" });
  }
  return parseDotenv(text, file);
}

/**
 * Applies a config's `env` to `target` (default `process.env`) before its graphs load: a variable
 * already set in the real environment wins, as with devmind's own `.env`. Returns the names set.
 */
export function applyGraphEnv(env: Record<string, string>, target: NodeJS.ProcessEnv = process.env): string[] {
  const applied: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (target[name] !== undefined) continue;
    target[name] = value;
    applied.push(name);
  }
  return applied;
}
