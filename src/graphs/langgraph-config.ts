import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { loadConfig } from "../config.js";
import { parseDotenv } from "../config-dotenv.js";
import { GRAPHS_DEFAULTS } from "../constants.js";
import { ConfigError } from "../errors.js";
import { moduleReference, readHttpSection, type HttpSettings, type ModuleReference } from "./langgraph-http.js";
import { storeSection } from "./langgraph-store.js";

/** One graph named in `langgraph.json`: `"id": "./path.ts:exportName"` (or `{"path": ..., "description": ...}`). */
export interface GraphSpec {
  id: string;
  /** As written in the file, e.g. `./src/agent.ts:graph`. */
  source: string;
  /** Absolute path of the module. */
  file: string;
  /** The export holding the graph (`default` when the spec names none). */
  exportName: string;
  /** `description` of the object form, when given. */
  description?: string | undefined;
}

/** One generative UI module of `ui` in `langgraph.json`: `"graph id": "./path.tsx"`. */
export interface UiSpec {
  /** The name `/ui/{name}` serves it under (LangGraph uses a graph id). */
  name: string;
  source: string;
  /** Absolute path of the module. */
  file: string;
}

/** A read and checked `langgraph.json`. */
export interface LanggraphConfig {
  /** Absolute path of the file. */
  path: string;
  /** The directory of the file: what its relative paths are relative to. */
  dir: string;
  graphs: GraphSpec[];
  /**
   * Variables from `env` (a file name relative to the config, or an object), not yet applied,
   * with the DEVMIND_STORE_* settings `store` stands for underneath (`env` wins over them).
   */
  env: Record<string, string>;
  /** `http` (the user's Hono app, route groups taken away, CORS), or null without the key. */
  http: HttpSettings | null;
  /** `auth.path`: the project's LangGraph `Auth` handler (`./auth.ts:auth`), or null without one. */
  auth: ModuleReference | null;
  /** `ui`: components served under `/ui/{name}`; empty without the key. */
  ui: UiSpec[];
  /** `ui_config.shared`: packages the UI bundles leave to the page (besides React and the SDK). */
  uiShared: string[];
  /**
   * What `devmind serve` cannot honour, each naming the key and why: some `http` keys. `serve` exits 2 with them; other commands (they serve no HTTP) go on.
   */
  serveRefusals: string[];
  /** Keys present but unknown to every LangGraph tool, or known but not applied; printed as warnings, never fatal. */
  warnings: string[];
}

/**
 * Keys of LangGraph's config format (its JS and Python CLIs) that only shape a container build
 * or a setting devmind provides its own way: accepted quietly. A key not here, not read below and
 * not in SERVE_KEYS is one no LangGraph tool knows, and warned about.
 */
const QUIET_KEYS = new Set([
  "$schema",
  "dependencies",
  "node_version",
  "node_loader",
  "python_version",
  "pip_config_file",
  "pip_installer",
  "keep_pkg_tools",
  "dockerfile_lines",
  "docker_compose_file",
  "image_distro",
  "base_image",
  "api_version",
  "_INTERNAL_docker_tag",
  // LangGraph's checkpointer.ttl / serde: devmind keeps every checkpoint and its own value codec
  "checkpointer",
  "webhooks",
]);

/** Graph ids: what the SDK sends as `assistant_id` / `graph_id`. */
const GRAPH_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

const GRAPH_ENTRY = z.union([z.string().min(1), z.object({ path: z.string().min(1), description: z.string().nullish() })]);

const CONFIG_SCHEMA = z
  .object({
    graphs: z.record(z.string(), GRAPH_ENTRY),
    // an array lists variables to pass through from the host: they are in the environment already
    env: z.union([z.string().min(1), z.record(z.string(), z.string()), z.array(z.string())]).optional(),
    http: z.unknown().optional(),
    ui: z.record(z.string(), z.string().min(1)).optional(),
    ui_config: z.object({ shared: z.array(z.string()).optional() }).optional(),
    // LangGraph's auth section: `path` names the handler; the rest (studio, openapi, cache) shapes the Platform's UI and is accepted
    auth: z.object({ path: z.string().min(1).nullish(), disable_studio_auth: z.boolean().nullish() }).passthrough().nullish(),
    encryption: z.unknown().optional(),
    store: z.unknown().optional(),
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
 * Reads and checks a `langgraph.json` (LangGraph's config format): `graphs` (required, at least
 * one, ids as the SDK uses them, specs `./file:export` or `{"path", "description"}`), `env` (a
 * .env file name relative to the config, an object of strings, or a list of names), `http`
 * (see `readHttpSection`), `ui` / `ui_config`, `store` (its index and TTL as devmind's store
 * settings, see `storeSection`). Keys of LangGraph's format that only shape a
 * container build are accepted quietly; `auth.path` names the auth handler (`serve` loads it);
 * `encryption` is refused here (devmind would store the data unencrypted); an unknown key is a
 * warning. Anything malformed is a ConfigError naming the file and the key (exit 2).
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
  const data = parsed.data;
  const dir = dirname(path);
  const graphs = Object.entries(data.graphs).map(([id, entry]) => graphSpec(path, dir, id, entry));
  if (graphs.length === 0) throw new ConfigError(`${path}: graphs: name at least one graph ("ID": "./path.ts:export")`, { path, key: "graphs" });
  if (data.encryption !== undefined) throw new ConfigError(`${path}: "encryption" is not supported by devmind (it would store your data unencrypted); remove the key`, { path, key: "encryption" });
  const warnings: string[] = [];
  const serveRefusals: string[] = [];
  const authPath = data.auth?.path;
  const auth = authPath === undefined || authPath === null ? null : moduleReference(path, dir, "auth.path", authPath);
  let http: HttpSettings | null = null;
  if (data.http !== undefined && data.http !== null) {
    const section = readHttpSection(path, dir, data.http);
    http = section.settings;
    serveRefusals.push(...section.refusals);
    warnings.push(...section.warnings);
  }
  const store = storeSection(path, data.store);
  warnings.push(...store.warnings);
  const read = new Set(Object.keys(CONFIG_SCHEMA.shape));
  for (const key of Object.keys(data)) {
    if (read.has(key) || QUIET_KEYS.has(key)) continue;
    warnings.push(`${path}: unknown key "${key}" ignored (no LangGraph tool knows it)`);
  }
  const ui = Object.entries(data.ui ?? {}).map(([name, source]): UiSpec => ({ name, source, file: isAbsolute(source) ? source : resolve(dir, source) }));
  const env = { ...store.env, ...(Array.isArray(data.env) ? {} : readEnv(path, dir, data.env)) };
  return { path, dir, graphs, env, http, auth, ui, uiShared: data.ui_config?.shared ?? [], serveRefusals, warnings };
}

function graphSpec(path: string, dir: string, id: string, entry: string | { path: string; description?: string | null | undefined }): GraphSpec {
  if (!GRAPH_ID.test(id)) throw new ConfigError(`${path}: graphs: invalid graph id ${JSON.stringify(id.slice(0, 100))} (letters, digits, _ . -; at most 100)`, { path, key: `graphs.${id}` });
  const source = typeof entry === "string" ? entry : entry.path;
  const reference = moduleReference(path, dir, `graphs.${id}`, source);
  const description = typeof entry === "string" ? undefined : (entry.description ?? undefined);
  return { id, ...reference, ...(description === undefined ? {} : { description }) };
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

/** The variables `store.index` stands for (see langgraph-store.ts). */
const INDEX_VARIABLES = ["DEVMIND_STORE_INDEX_DIMS", "DEVMIND_STORE_INDEX_EMBED", "DEVMIND_STORE_INDEX_FIELDS"] as const;

/**
 * Applies a project's `env` (see `applyGraphEnv`) before its graphs load, and returns warnings
 * for stderr. The semantic index a config's `store.index` asks for stays on only where it can
 * embed: with an OpenAI-compatible endpoint configured (OPENAI_API_KEY or OPENAI_BASE_URL, or
 * their LLM_ aliases, in the environment, the config's `env` or `.env`). Without one the index
 * variables it set are taken back and a warning says semantic search is off, so a project that
 * declares an index still serves (LangGraph's `langgraph.json` examples name one by default);
 * DEVMIND_STORE_INDEX_* set by the user are never taken back (the runtime then says what is missing).
 */
export function applyProjectEnv(config: LanggraphConfig, target: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const applied = applyGraphEnv(config.env, target);
  if (!applied.includes("DEVMIND_STORE_INDEX_EMBED")) return [];
  let endpoint: boolean;
  try {
    const settings = loadConfig(target, { dotenv: true, cwd });
    endpoint = settings.openai.apiKey !== undefined || settings.openai.baseUrl !== undefined;
  } catch {
    // a bad setting elsewhere is the command's to report; judge from the environment alone
    endpoint = ["OPENAI_API_KEY", "LLM_API_KEY", "OPENAI_BASE_URL", "LLM_BASE_URL"].some((name) => (target[name] ?? "") !== "");
  }
  if (endpoint) return [];
  for (const name of INDEX_VARIABLES) if (applied.includes(name)) delete target[name];
  return [`${config.path}: "store.index" not honoured: embedding with ${config.env["DEVMIND_STORE_INDEX_EMBED"] ?? "its model"} needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server; semantic search is off`];
}
