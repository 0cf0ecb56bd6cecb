import { ConfigError } from "../errors.js";

/** What a `store` section of `langgraph.json` sets, read by `storeSection`. */
export interface StoreSection {
  /**
   * DEVMIND_STORE_* variables the section stands for: applied like the config's `env` (a variable
   * set in the real environment, or in `env`, wins), so devmind reads them as its own settings.
   */
  env: Record<string, string>;
  /** Parts devmind cannot honour or does not know, each naming the key; printed as warnings. */
  warnings: string[];
}

/** LangGraph's `store.ttl` keys and the devmind variables that carry them. */
const TTL_VARIABLES = {
  default_ttl: "DEVMIND_STORE_TTL_MINUTES",
  refresh_on_read: "DEVMIND_STORE_TTL_REFRESH_ON_READ",
  sweep_interval_minutes: "DEVMIND_STORE_SWEEP_MINUTES",
} as const;

const INDEX_KEYS = new Set(["dims", "embed", "fields"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(path: string, key: string, expected: string): ConfigError {
  return new ConfigError(`${path}: ${key}: expected ${expected}`, { path, key });
}

/**
 * Reads LangGraph's `store` key (`{"index": {"dims", "embed", "fields"}, "ttl": {"default_ttl",
 * "refresh_on_read", "sweep_interval_minutes"}}`) as devmind's store settings
 * (DEVMIND_STORE_INDEX_*, DEVMIND_STORE_TTL_*, DEVMIND_STORE_SWEEP_MINUTES). `index.embed` is
 * honoured for OpenAI-compatible models (`openai:NAME`); another provider or an embeddings
 * function (`./file.ts:export`) turns semantic search off with a warning, as does an unknown key
 * of the section. A value of the wrong type, or an index without `dims` or `embed`, is a
 * ConfigError naming the key (exit 2).
 */
export function storeSection(path: string, value: unknown): StoreSection {
  const env: Record<string, string> = {};
  const warnings: string[] = [];
  if (value === undefined || value === null) return { env, warnings };
  if (!isObject(value)) throw invalid(path, "store", 'an object ({"index": {...}, "ttl": {...}})');
  for (const key of Object.keys(value)) {
    if (key !== "index" && key !== "ttl") warnings.push(`${path}: unknown key "store.${key}" ignored`);
  }
  if (value.index !== undefined && value.index !== null) readIndex(path, value.index, env, warnings);
  if (value.ttl !== undefined && value.ttl !== null) readTtl(path, value.ttl, env, warnings);
  return { env, warnings };
}

function readIndex(path: string, index: unknown, env: Record<string, string>, warnings: string[]): void {
  if (!isObject(index)) throw invalid(path, "store.index", 'an object ({"dims": 1536, "embed": "openai:text-embedding-3-small"})');
  for (const key of Object.keys(index)) {
    if (!INDEX_KEYS.has(key)) warnings.push(`${path}: unknown key "store.index.${key}" ignored`);
  }
  const { dims, embed, fields } = index;
  if (dims === undefined || embed === undefined) throw new ConfigError(`${path}: store.index: needs both "dims" and "embed" (semantic search embeds with that model)`, { path, key: "store.index" });
  if (typeof dims !== "number" || !Number.isInteger(dims) || dims <= 0) throw invalid(path, "store.index.dims", "a positive integer");
  if (typeof embed !== "string" || embed.trim() === "") throw invalid(path, "store.index.embed", 'a string such as "openai:text-embedding-3-small"');
  if (fields !== undefined && (!Array.isArray(fields) || fields.length === 0 || !fields.every((field) => typeof field === "string" && /^[^\s,]{1,200}$/.test(field)))) {
    throw invalid(path, "store.index.fields", 'a list of JSON paths such as ["$"] or ["text", "memories[*].text"]');
  }
  const model = embed.startsWith("openai:") ? embed.slice("openai:".length) : null;
  if (model === null || !/^\S+$/.test(model)) {
    warnings.push(`${path}: "store.index.embed": ${JSON.stringify(embed)} not honoured: devmind embeds with OpenAI-compatible models only ("openai:MODEL", on OPENAI_BASE_URL); semantic search is off`);
    return;
  }
  env.DEVMIND_STORE_INDEX_DIMS = String(dims);
  env.DEVMIND_STORE_INDEX_EMBED = `openai:${model}`;
  if (fields !== undefined) env.DEVMIND_STORE_INDEX_FIELDS = (fields as string[]).join(",");
}

function readTtl(path: string, ttl: unknown, env: Record<string, string>, warnings: string[]): void {
  if (!isObject(ttl)) throw invalid(path, "store.ttl", 'an object ({"default_ttl": MINUTES, "refresh_on_read": true, "sweep_interval_minutes": MINUTES})');
  for (const [key, value] of Object.entries(ttl)) {
    if (!(key in TTL_VARIABLES)) {
      warnings.push(`${path}: unknown key "store.ttl.${key}" ignored`);
      continue;
    }
    if (value === undefined || value === null) continue;
    const variable = TTL_VARIABLES[key as keyof typeof TTL_VARIABLES];
    if (key === "refresh_on_read") {
      if (typeof value !== "boolean") throw invalid(path, `store.ttl.${key}`, "true or false");
      env[variable] = String(value);
    } else {
      if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw invalid(path, `store.ttl.${key}`, "a positive number of minutes");
      env[variable] = String(value);
    }
  }
}
