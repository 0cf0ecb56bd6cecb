/**
 * How each variable of CONTRACT section 2 is validated and converted: one zod schema per
 * variable, keyed by its canonical name. Each failure message is the "expected ..." half of a
 * config error line; config.ts adds the variable name and the (possibly hidden) value.
 */
import { z } from "zod";
import { parsePgUrl } from "./db/pg-url.js";
import { webhookAllowListProblem } from "./webhooks/webhook-targets.js";
import {
  API_KEY_NAME_PATTERN,
  CONFIG_BOUNDS,
  MEMORY_DATA_DIR,
  SCHEMA_NAME_PATTERN,
  TOOL_NAME_PATTERN,
} from "./constants.js";

/** Log verbosity accepted by LOG_LEVEL. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Which model runs the agent: an OpenAI-compatible server, or a scripted model read from a file (tests, demos). */
export type ModelSpec = { provider: "openai"; name: string } | { provider: "scripted"; path: string };

/** One entry of DEVMIND_API_KEYS; `name` identifies the caller in logs, `key` is the bearer secret. */
export interface ApiKeyEntry {
  name: string;
  key: string;
}

/** The values LOG_LEVEL accepts (case-insensitive). */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** A string schema that fails with `expected` unless `test` passes. */
function checked(test: (value: string) => boolean, expected: string) {
  return z.string().refine(test, { error: expected });
}

/** A schema that maps a string to T, or fails with the message `convert` returns. */
function converted<T>(convert: (value: string) => { ok: T } | { error: string }) {
  return z.string().transform((value, ctx) => {
    const result = convert(value);
    if ("ok" in result) return result.ok;
    ctx.addIssue({ code: "custom", message: result.error });
    return z.NEVER;
  });
}

function integer(bounds: { min: number; max: number }) {
  const inRange = (v: string) => /^\d+$/.test(v) && Number(v) >= bounds.min && Number(v) <= bounds.max;
  return checked(inRange, `expected an integer from ${bounds.min} to ${bounds.max}`).transform(Number);
}

function url(protocols: string[]) {
  const names = protocols.map((p) => `${p}//`).join(" or ");
  return converted((value) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      return { error: `expected a ${names} URL` };
    }
    if (!protocols.includes(parsed.protocol)) return { error: `expected a ${names} URL` };
    if (parsed.hostname === "") return { error: `expected a ${names} URL with a host` };
    return { ok: value };
  });
}

/**
 * A PostgreSQL URL: one host, or several as libpq writes them (`postgres://u@h1:5432,h2:5433/db`,
 * which is no WHATWG URL); a `target_session_attrs` asking for a read-only server is refused.
 */
function postgresUrl() {
  const single = url(["postgres:", "postgresql:"]);
  return converted((value) => {
    let hosts = 0;
    let problem = "";
    try {
      hosts = parsePgUrl(value).hosts.length;
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
    if (problem.includes("target_session_attrs=")) return { error: "expected target_session_attrs=read-write (or primary, or any): devmind writes" };
    if (hosts > 1) return { ok: value };
    const checked = single.safeParse(value);
    return checked.success ? { ok: checked.data } : { error: checked.error.issues[0]?.message ?? "expected a postgres:// or postgresql:// URL" };
  });
}

function toolList() {
  const expected = `expected comma-separated tool names matching ${TOOL_NAME_PATTERN.source}`;
  return converted((value) => {
    const names = splitList(value);
    return names.every((name) => TOOL_NAME_PATTERN.test(name)) ? { ok: [...new Set(names)] } : { error: expected };
  });
}

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function parseModelSpec(value: string): { ok: ModelSpec } | { error: string } {
  const colon = value.indexOf(":");
  const prefix = colon === -1 ? "openai" : value.slice(0, colon);
  const rest = colon === -1 ? value : value.slice(colon + 1).trim();
  if (prefix === "openai") {
    return /^\S+$/.test(rest) ? { ok: { provider: "openai", name: rest } } : { error: 'expected a model name after "openai:"' };
  }
  if (prefix === "scripted") {
    return rest !== "" ? { ok: { provider: "scripted", path: rest } } : { error: 'expected a file path after "scripted:"' };
  }
  return { error: 'expected "openai:NAME", "scripted:PATH" or a bare model name' };
}

function parseApiKeys(value: string): { ok: ApiKeyEntry[] } | { error: string } {
  const form = "expected comma-separated name=key pairs";
  const entries: ApiKeyEntry[] = [];
  for (const [index, item] of splitList(value).entries()) {
    const equals = item.indexOf("=");
    const name = item.slice(0, equals).trim();
    const key = item.slice(equals + 1).trim();
    const position = `entry ${index + 1}`;
    if (equals === -1) return { error: `${form} (${position} has no "=")` };
    if (!API_KEY_NAME_PATTERN.test(name)) return { error: `${form} (${position}: name must match ${API_KEY_NAME_PATTERN.source})` };
    if (key === "" || /\s/.test(key)) return { error: `${form} (${position}: key "${name}" is empty or has spaces)` };
    if (entries.some((entry) => entry.name === name)) return { error: `${form} with unique names ("${name}" repeats)` };
    entries.push({ name, key });
  }
  return entries.length > 0 ? { ok: entries } : { error: form };
}

/** The default config and context of one graph's assistant, from LANGGRAPH_CONFIG. */
export interface GraphAssistantDefaults {
  /** The assistant's config: the graph's entry without `context` (e.g. `{configurable: {...}}`). */
  config: Record<string, unknown>;
  /** The entry's `context`, when it has one. */
  context?: unknown;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** LANGGRAPH_CONFIG (LangGraph's server reads it so): a JSON object of graph id -> `{context?, ...config}`. */
function parseGraphDefaults(value: string): { ok: Record<string, GraphAssistantDefaults> } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    return { error: `expected JSON (${(error as Error).message})` };
  }
  if (!isPlainObject(parsed)) return { error: 'expected a JSON object of graph id -> {"configurable"?: {...}, "context"?: {...}}' };
  const defaults: Record<string, GraphAssistantDefaults> = {};
  for (const [graphId, entry] of Object.entries(parsed)) {
    if (!isPlainObject(entry)) return { error: `graph ${JSON.stringify(graphId.slice(0, 100))}: expected an object` };
    const { context, ...config } = entry;
    defaults[graphId] = context === undefined ? { config } : { config, context };
  }
  return { ok: defaults };
}

function positiveNumber() {
  return checked((v) => /^\d+(\.\d+)?$/.test(v) && Number(v) > 0, "expected a positive number (minutes)").transform(Number);
}

function boolean() {
  return checked((v) => /^(true|false|1|0|yes|no)$/i.test(v), "expected true or false").transform((v) => /^(true|1|yes)$/i.test(v));
}

function webhookAllowList() {
  return converted((value) => {
    const entries = splitList(value);
    if (entries.length === 0) return { error: "expected comma-separated host names, *.domain, *, IP addresses or CIDR ranges" };
    const problem = webhookAllowListProblem(entries);
    return problem === null ? { ok: entries } : { error: `expected host names, *.domain, *, IP addresses or CIDR ranges (${problem})` };
  });
}

/** An embeddings model for the store's index: `openai:NAME` (a bare name means openai). */
export type EmbeddingsSpec = { provider: "openai"; name: string };

function parseEmbeddingsSpec(value: string): { ok: EmbeddingsSpec } | { error: string } {
  const name = value.startsWith("openai:") ? value.slice("openai:".length).trim() : value.includes(":") ? "" : value;
  return /^\S+$/.test(name) ? { ok: { provider: "openai", name } } : { error: 'expected "openai:MODEL" or a bare embeddings model name' };
}

function fieldList() {
  return converted((value) => {
    const fields = splitList(value);
    return fields.length > 0 && fields.every((field) => /^[^\s,]{1,200}$/.test(field)) ? { ok: [...new Set(fields)] } : { error: "expected comma-separated JSON paths such as $, text or memories[*].text" };
  });
}

const secretKey = checked((v) => /^[\x21-\x7e]+$/.test(v), "expected printable ASCII characters without spaces");
const directory = checked((v) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(v) || v === MEMORY_DATA_DIR, `expected a directory path or ${MEMORY_DATA_DIR}`);
const httpUrl = url(["http:", "https:"]);
const b = CONFIG_BOUNDS;

/** One schema per variable of CONTRACT section 2; keys are the canonical variable names. */
export const ENV_SCHEMA = z.object({
  DATABASE_URL: postgresUrl().optional(),
  DEVMIND_DATABASE_DIRECT_URL: postgresUrl().optional(),
  DEVMIND_DATA_DIR: directory.optional(),
  DEVMIND_DB_SCHEMA: checked((v) => SCHEMA_NAME_PATTERN.test(v), `expected a schema name matching ${SCHEMA_NAME_PATTERN.source}`).optional(),
  DEVMIND_MODEL: converted(parseModelSpec).optional(),
  OPENAI_API_KEY: secretKey.optional(),
  OPENAI_BASE_URL: httpUrl.optional(),
  OPENAI_MODEL: checked((v) => /^\S+$/.test(v), "expected a model name without spaces").optional(),
  DEVMIND_MODEL_TIMEOUT_MS: integer(b.modelTimeoutMs).optional(),
  DEVMIND_MODEL_MAX_RETRIES: integer(b.modelMaxRetries).optional(),
  DEVMIND_MAX_MODEL_ROUNDS: integer(b.maxModelRounds).optional(),
  DEVMIND_MAX_TOOL_CALLS: integer(b.maxToolCalls).optional(),
  DEVMIND_MAX_TOKENS: integer(b.maxTokens).optional(),
  DEVMIND_RUN_TIMEOUT_MS: integer(b.runTimeoutMs).optional(),
  DEVMIND_TOOL_TIMEOUT_MS: integer(b.toolTimeoutMs).optional(),
  DEVMIND_MAX_TOOL_OUTPUT_CHARS: integer(b.maxToolOutputChars).optional(),
  DEVMIND_NO_PROGRESS_LIMIT: integer(b.noProgressLimit).optional(),
  DEVMIND_CONTEXT_TOKENS: integer(b.contextTokens).optional(),
  DEVMIND_REQUIRE_APPROVAL: toolList().optional(),
  DEVMIND_AUTO_APPROVE: toolList().optional(),
  DEVMIND_WORKSPACE: directory.optional(),
  DEVMIND_WORKER_CONCURRENCY: integer(b.workerConcurrency).optional(),
  DEVMIND_LEASE_MS: integer(b.leaseMs).optional(),
  DEVMIND_MAX_ATTEMPTS: integer(b.maxAttempts).optional(),
  DEVMIND_HOST: checked((v) => /^[^\s/]+$/.test(v), "expected a host name or IP address").optional(),
  DEVMIND_PORT: integer(b.port).optional(),
  DEVMIND_API_KEYS: converted(parseApiKeys).optional(),
  DEVMIND_ALLOW_TRUNCATE: boolean().optional(),
  DEVMIND_AUTH_TIMEOUT_MS: integer(b.authTimeoutMs).optional(),
  DEVMIND_IMAGE_MODEL: checked((v) => /^\S+$/.test(v), "expected a model name without spaces").optional(),
  DEVMIND_IMAGE_BASE_URL: httpUrl.optional(),
  DEVMIND_IMAGE_API_KEY: secretKey.optional(),
  DEVMIND_WEBHOOK_ALLOW: webhookAllowList().optional(),
  DEVMIND_WEBHOOK_MAX_ATTEMPTS: integer(b.webhookMaxAttempts).optional(),
  DEVMIND_WEBHOOK_RETRY_MS: integer(b.webhookRetryMs).optional(),
  DEVMIND_WEBHOOK_TIMEOUT_MS: integer(b.webhookTimeoutMs).optional(),
  DEVMIND_STORE_INDEX_DIMS: integer(b.storeIndexDims).optional(),
  DEVMIND_STORE_INDEX_EMBED: converted(parseEmbeddingsSpec).optional(),
  DEVMIND_STORE_INDEX_FIELDS: fieldList().optional(),
  DEVMIND_STORE_TTL_MINUTES: positiveNumber().optional(),
  DEVMIND_STORE_TTL_REFRESH_ON_READ: boolean().optional(),
  DEVMIND_STORE_SWEEP_MINUTES: positiveNumber().optional(),
  LANGGRAPH_CONFIG: converted(parseGraphDefaults).optional(),
  DEVMIND_METRICS: boolean().optional(),
  DEVMIND_METRICS_KEY: secretKey.optional(),
  DEVMIND_METRICS_PUBLIC: boolean().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_TRACES_EXPORTER: checked((v) => /^(otlp|console|none)$/i.test(v), "expected otlp, console or none").transform((v) => v.toLowerCase() as "otlp" | "console" | "none").optional(),
  OTEL_SERVICE_NAME: checked((v) => /^\S{1,100}$/.test(v), "expected a service name without spaces").optional(),
  LANGSMITH_TRACING: boolean().optional(),
  LANGSMITH_ENDPOINT: httpUrl.optional(),
  LANGSMITH_API_KEY: secretKey.optional(),
  LANGSMITH_PROJECT: checked((v) => v.length <= 200, "expected a project name").optional(),
  LOG_LEVEL: checked((v) => (LOG_LEVELS as string[]).includes(v.toLowerCase()), `expected one of ${LOG_LEVELS.join(", ")}`)
    .transform((v) => v.toLowerCase() as LogLevel)
    .optional(),
});

/** The converted values of the variables that were set. */
export type EnvValues = z.output<typeof ENV_SCHEMA>;
/** A canonical variable name (aliases such as LLM_API_KEY are mapped before parsing). */
export type Variable = keyof EnvValues;
