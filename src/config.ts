/**
 * The configuration of devmind (CONTRACT section 2), and the only module that reads
 * `process.env`. Everything else receives a `DevmindConfig`, so tests pass plain objects and
 * no code path depends on ambient state. Every variable is validated with zod; all problems are
 * reported together in one `ConfigError` (a user error, exit 2) that names each variable and
 * its expected form without echoing secrets.
 */
import { readDotenvFile } from "./config-dotenv.js";
import { ENV_SCHEMA, type ApiKeyEntry, type EmbeddingsSpec, type EnvValues, type GraphAssistantDefaults, type LogLevel, type ModelSpec, type Variable } from "./config-schema.js";
import { AUTH_DEFAULTS, CONFIG_DEFAULTS, STORE_DEFAULTS, WEBHOOK_DEFAULTS } from "./constants.js";
import { parsePgUrl } from "./db/pg-url.js";
import { operationsSettings, type OperationsSettings } from "./config-operations.js";
export type { OperationsSettings } from "./config-operations.js";
import { ConfigError } from "./errors.js";

export { parseDotenv } from "./config-dotenv.js";
export type { ApiKeyEntry, EmbeddingsSpec, LogLevel, ModelSpec } from "./config-schema.js";

/** The per-run limits of CONTRACT section 2 (the graph adds the model timeout and retries). */
export interface RunLimitSettings {
  maxModelRounds: number;
  maxToolCalls: number;
  /** Input + output tokens, as reported by the model. */
  maxTokens: number;
  runTimeoutMs: number;
  toolTimeoutMs: number;
  maxToolOutputChars: number;
  /** The same failing call (tool + canonical args) this many times stops the run. */
  noProgressLimit: number;
  /** Prompt budget; older tool outputs are elided to fit. */
  contextTokens: number;
}

/**
 * The validated, typed configuration. Build it with `loadConfig()` at the edge (CLI, server)
 * and pass it down; log it only through `redactConfig()`.
 */
export interface DevmindConfig {
  /** Unset means the embedded PGlite database under `dataDir`. May name several hosts (failover). */
  databaseUrl?: string;
  /**
   * DEVMIND_DATABASE_DIRECT_URL: a connection to PostgreSQL that keeps its session, for LISTEN,
   * when `databaseUrl` goes through a transaction pooler (PgBouncer). Unset: polling stands in there.
   */
  databaseDirectUrl?: string;
  /** A directory path, or `memory://` for an in-memory embedded database. */
  dataDir: string;
  dbSchema: string;
  /** Null when no model is configured; see `describeModelRequirement()`. */
  model: ModelSpec | null;
  openai: { apiKey?: string; baseUrl?: string; model: string };
  modelTimeoutMs: number;
  modelMaxRetries: number;
  limits: RunLimitSettings;
  requireApproval: string[];
  autoApprove: string[];
  workspace: string;
  worker: { concurrency: number; leaseMs: number; maxAttempts: number };
  /**
   * `allowTruncate` (DEVMIND_ALLOW_TRUNCATE, default false) serves the official server's
   * `POST /internal/truncate`, which deletes every run, thread, assistant, checkpoint or store item
   * it is asked to: for test servers only (the official API tests call it between tests).
   */
  server: { host: string; port: number; apiKeys: ApiKeyEntry[]; allowTruncate: boolean; /** How long a custom auth handler may take per call (DEVMIND_AUTH_TIMEOUT_MS). */ authTimeoutMs: number };
  /** Non-null only when DEVMIND_IMAGE_MODEL is set. */
  image: { model: string; baseUrl?: string; apiKey?: string } | null;
  /** Webhooks of runs and crons: allowed targets (DEVMIND_WEBHOOK_ALLOW) and delivery retries. */
  webhooks: { allow: string[]; maxAttempts: number; retryBaseMs: number; timeoutMs: number };
  /**
   * `runtime.store`: semantic search index (null: none; DEVMIND_STORE_INDEX_*) and TTL
   * (DEVMIND_STORE_TTL_MINUTES default TTL, refresh on read, sweep interval; minutes).
   */
  store: {
    index: { dims: number; embed: EmbeddingsSpec; fields: string[] } | null;
    ttl: { defaultTtl?: number; refreshOnRead: boolean; sweepIntervalMinutes: number };
  };
  /**
   * LANGGRAPH_CONFIG, as LangGraph's server reads it: per graph id, the config and context its
   * default assistant is created with (`{"agent": {"configurable": {...}, "context": {...}}}`).
   */
  graphDefaults: Record<string, GraphAssistantDefaults>;
  logLevel: LogLevel;
  /** Metrics, OpenTelemetry traces and LangSmith tracing (docs/operations.md); absent: the defaults (metrics on, no tracing). */
  operations?: OperationsSettings;
}

/** Options of `loadConfig`. */
export interface LoadConfigOptions {
  /** Directory whose `.env` is loaded; defaults to `process.cwd()`. */
  cwd?: string;
  /** Load `.env`; defaults to true when `env` is omitted, false when it is passed. */
  dotenv?: boolean;
}

type Env = Record<string, string | undefined>;

const REDACTED = "***";
const SECRET_VARIABLES = new Set(["OPENAI_API_KEY", "LLM_API_KEY", "DEVMIND_IMAGE_API_KEY", "DEVMIND_API_KEYS", "DEVMIND_METRICS_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"]);
/** Canonical variable -> accepted alias, used only when the canonical one is unset (CONTRACT section 2). */
export const VARIABLE_ALIASES: Readonly<Record<string, string>> = {
  OPENAI_API_KEY: "LLM_API_KEY",
  OPENAI_BASE_URL: "LLM_BASE_URL",
  OPENAI_MODEL: "LLM_MODEL",
  LANGSMITH_TRACING: "LANGCHAIN_TRACING_V2",
  LANGSMITH_ENDPOINT: "LANGCHAIN_ENDPOINT",
  LANGSMITH_API_KEY: "LANGCHAIN_API_KEY",
  LANGSMITH_PROJECT: "LANGCHAIN_PROJECT",
};

/**
 * Reads, validates and types the configuration.
 *
 * Call it once at startup. With no arguments it reads `process.env` plus `.env` in
 * `options.cwd ?? process.cwd()`; a non-empty real variable wins over the file. Pass `env`
 * explicitly in tests (then `.env` is read only with `options.dotenv === true`). Empty values
 * count as unset. Throws one `ConfigError` listing every bad variable (`details.variables`).
 *
 * @example const config = loadConfig(); // CLI
 * @example const config = loadConfig({ DEVMIND_PORT: "9000" }); // tests
 */
export function loadConfig(env?: Env, options: LoadConfigOptions = {}): DevmindConfig {
  const useDotenv = options.dotenv ?? env === undefined;
  const real = env ?? process.env;
  const merged = useDotenv ? { ...readDotenvFile(options.cwd ?? process.cwd()), ...nonEmpty(real) } : real;
  const { input, sources } = canonicalInput(merged);
  const parsed = ENV_SCHEMA.safeParse(input);
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => {
    const variable = issue.path[0] as Variable;
    return { variable: sources[variable], line: describeProblem(sources[variable], input[variable] ?? "", issue.message) };
  });
  const hostProblem = checkHostNeedsKeys(input, problems.some((p) => p.variable === "DEVMIND_HOST"));
  if (hostProblem) problems.push(hostProblem);
  const indexProblem = checkIndexComplete(input);
  if (indexProblem) problems.push(indexProblem);
  if (!parsed.success || problems.length > 0) throw invalidConfig(problems);
  return buildConfig(parsed.data);
}

/**
 * The message for commands that need a model when `config.model` is null: it says which
 * variables to set. Use it as the text of the `ConfigError` such commands raise (exit 2).
 */
export function describeModelRequirement(): string {
  return (
    "No model is configured. Set DEVMIND_MODEL (openai:NAME, scripted:PATH, or a bare model name), " +
    "or set OPENAI_API_KEY and/or OPENAI_BASE_URL (aliases LLM_API_KEY, LLM_BASE_URL) to use " +
    `openai:$OPENAI_MODEL (default ${CONFIG_DEFAULTS.openaiModel}).`
  );
}

/**
 * A deep copy of `config` that is safe to log or show: API keys become "***" and the
 * password in `databaseUrl` is masked. The input is not modified.
 */
export function redactConfig(config: DevmindConfig): DevmindConfig {
  const copy = structuredClone(config);
  if (copy.databaseUrl !== undefined) copy.databaseUrl = maskUrlPassword(copy.databaseUrl);
  if (copy.databaseDirectUrl !== undefined) copy.databaseDirectUrl = maskUrlPassword(copy.databaseDirectUrl);
  if (copy.openai.apiKey !== undefined) copy.openai.apiKey = REDACTED;
  if (copy.image?.apiKey !== undefined) copy.image.apiKey = REDACTED;
  copy.server.apiKeys = copy.server.apiKeys.map(({ name }) => ({ name, key: REDACTED }));
  if (copy.operations?.metrics.key !== undefined) copy.operations.metrics.key = REDACTED;
  if (copy.operations?.langsmith?.apiKey !== undefined) copy.operations.langsmith.apiKey = REDACTED;
  return copy;
}

/**
 * The configured secret values — model and image API keys, the server's API keys, the database
 * password (as written and URL-decoded) — for `createRedactor`, so they are hidden verbatim from
 * events, run errors, logs and CLI errors even when no secret pattern matches their shape.
 */
export function configSecrets(config: DevmindConfig): string[] {
  const secrets = [config.openai.apiKey, config.image?.apiKey, ...config.server.apiKeys.map((entry) => entry.key), config.operations?.metrics.key, config.operations?.langsmith?.apiKey];
  for (const url of [config.databaseUrl, config.databaseDirectUrl]) {
    if (url === undefined) continue;
    try {
      const password = parsePgUrl(url).password;
      if (password !== "") secrets.push(password, decodeURIComponent(password));
    } catch {
      // a URL that does not parse was refused by loadConfig
    }
  }
  return [...new Set(secrets.filter((s): s is string => s !== undefined && s !== ""))];
}

/** One error for all problems; `details.variables` names the bad variables, `details.problems` has the lines. */
function invalidConfig(problems: { variable: string; line: string }[]): ConfigError {
  const variables = [...new Set(problems.map((p) => p.variable))];
  const lines = problems.map((p) => p.line);
  const heading = `Invalid configuration (${variables.length} variable${variables.length === 1 ? "" : "s"}):`;
  return new ConfigError([heading, ...lines].join("\n"), { variables, problems: lines });
}

function nonEmpty(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => clean(e[1]) !== undefined));
}

function clean(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === "" ? undefined : trimmed;
}

/** Picks each canonical variable (or its alias) and remembers which name the value came from. */
function canonicalInput(env: Env): { input: Partial<Record<Variable, string>>; sources: Record<Variable, string> } {
  const input: Partial<Record<Variable, string>> = {};
  const sources = {} as Record<Variable, string>;
  for (const variable of Object.keys(ENV_SCHEMA.shape) as Variable[]) {
    const alias = VARIABLE_ALIASES[variable];
    const own = clean(env[variable]);
    const fromAlias = own === undefined && alias !== undefined ? clean(env[alias]) : undefined;
    sources[variable] = fromAlias === undefined ? variable : (alias as string);
    const value = own ?? fromAlias;
    if (value !== undefined) input[variable] = value;
  }
  return { input, sources };
}

function checkHostNeedsKeys(input: Partial<Record<Variable, string>>, hostAlreadyBad: boolean) {
  const host = input.DEVMIND_HOST;
  if (host === undefined || hostAlreadyBad || input.DEVMIND_API_KEYS !== undefined || isLoopback(host)) return undefined;
  const expected = "expected a loopback host (127.0.0.1, ::1, localhost) unless DEVMIND_API_KEYS is set";
  return { variable: "DEVMIND_HOST", line: describeProblem("DEVMIND_HOST", host, expected) };
}

/** The store's index needs both its dimensions and its embeddings model (fields are optional). */
function checkIndexComplete(input: Partial<Record<Variable, string>>) {
  const dims = input.DEVMIND_STORE_INDEX_DIMS !== undefined;
  const embed = input.DEVMIND_STORE_INDEX_EMBED !== undefined;
  if (dims === embed && (dims || input.DEVMIND_STORE_INDEX_FIELDS === undefined)) return undefined;
  const variable = dims ? "DEVMIND_STORE_INDEX_EMBED" : "DEVMIND_STORE_INDEX_DIMS";
  return { variable, line: `${variable}: expected to be set with ${dims ? "DEVMIND_STORE_INDEX_DIMS" : embed ? "DEVMIND_STORE_INDEX_EMBED" : "DEVMIND_STORE_INDEX_FIELDS"} (the store's index needs dimensions and an embeddings model)` };
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

function describeProblem(variable: string, value: string, expected: string): string {
  return `${variable}: ${expected}, got ${displayValue(variable, value)}`;
}

/** The value as it may appear in an error: secrets hidden, URL passwords masked. */
function displayValue(variable: string, value: string): string {
  if (SECRET_VARIABLES.has(variable)) return "(hidden)";
  if (variable !== "DATABASE_URL" && variable !== "DEVMIND_DATABASE_DIRECT_URL") return JSON.stringify(value);
  const masked = maskUrlPassword(value);
  // an unparseable URL may still hold a password we cannot locate
  return masked === value && value.includes("@") && !hasHost(value) ? "(hidden)" : JSON.stringify(masked);
}

function hasHost(value: string): boolean {
  try {
    return new URL(value).hostname !== "";
  } catch {
    return isMultiHost(value);
  }
}

function maskUrlPassword(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password === "") return value;
    parsed.password = REDACTED;
    return parsed.href;
  } catch {
    // a multi-host URL (`postgres://u:p@h1,h2/db`) is not a WHATWG URL
    if (!isMultiHost(value)) return value;
    return parsePgUrl(value).printable;
  }
}

function isMultiHost(value: string): boolean {
  try {
    return parsePgUrl(value).hosts.length > 1;
  } catch {
    return false;
  }
}

function buildConfig(v: EnvValues): DevmindConfig {
  const d = CONFIG_DEFAULTS;
  const openai = { apiKey: v.OPENAI_API_KEY, baseUrl: v.OPENAI_BASE_URL, model: v.OPENAI_MODEL ?? d.openaiModel };
  const hasOpenAi = openai.apiKey !== undefined || openai.baseUrl !== undefined;
  return {
    databaseUrl: v.DATABASE_URL,
    databaseDirectUrl: v.DEVMIND_DATABASE_DIRECT_URL,
    dataDir: v.DEVMIND_DATA_DIR ?? d.dataDir,
    dbSchema: v.DEVMIND_DB_SCHEMA ?? d.dbSchema,
    model: v.DEVMIND_MODEL ?? (hasOpenAi ? { provider: "openai", name: openai.model } : null),
    openai,
    modelTimeoutMs: v.DEVMIND_MODEL_TIMEOUT_MS ?? d.modelTimeoutMs,
    modelMaxRetries: v.DEVMIND_MODEL_MAX_RETRIES ?? d.modelMaxRetries,
    limits: {
      maxModelRounds: v.DEVMIND_MAX_MODEL_ROUNDS ?? d.maxModelRounds,
      maxToolCalls: v.DEVMIND_MAX_TOOL_CALLS ?? d.maxToolCalls,
      maxTokens: v.DEVMIND_MAX_TOKENS ?? d.maxTokens,
      runTimeoutMs: v.DEVMIND_RUN_TIMEOUT_MS ?? d.runTimeoutMs,
      toolTimeoutMs: v.DEVMIND_TOOL_TIMEOUT_MS ?? d.toolTimeoutMs,
      maxToolOutputChars: v.DEVMIND_MAX_TOOL_OUTPUT_CHARS ?? d.maxToolOutputChars,
      noProgressLimit: v.DEVMIND_NO_PROGRESS_LIMIT ?? d.noProgressLimit,
      contextTokens: v.DEVMIND_CONTEXT_TOKENS ?? d.contextTokens,
    },
    requireApproval: v.DEVMIND_REQUIRE_APPROVAL ?? [],
    autoApprove: v.DEVMIND_AUTO_APPROVE ?? [],
    workspace: v.DEVMIND_WORKSPACE ?? d.workspace,
    worker: {
      concurrency: v.DEVMIND_WORKER_CONCURRENCY ?? d.workerConcurrency,
      leaseMs: v.DEVMIND_LEASE_MS ?? d.leaseMs,
      maxAttempts: v.DEVMIND_MAX_ATTEMPTS ?? d.maxAttempts,
    },
    server: { host: v.DEVMIND_HOST ?? d.host, port: v.DEVMIND_PORT ?? d.port, apiKeys: v.DEVMIND_API_KEYS ?? [], allowTruncate: v.DEVMIND_ALLOW_TRUNCATE ?? d.allowTruncate, authTimeoutMs: v.DEVMIND_AUTH_TIMEOUT_MS ?? AUTH_DEFAULTS.handlerTimeoutMs },
    image: v.DEVMIND_IMAGE_MODEL === undefined ? null : {
      model: v.DEVMIND_IMAGE_MODEL,
      baseUrl: v.DEVMIND_IMAGE_BASE_URL ?? openai.baseUrl,
      apiKey: v.DEVMIND_IMAGE_API_KEY ?? openai.apiKey,
    },
    webhooks: {
      allow: v.DEVMIND_WEBHOOK_ALLOW ?? [...WEBHOOK_DEFAULTS.allow],
      maxAttempts: v.DEVMIND_WEBHOOK_MAX_ATTEMPTS ?? WEBHOOK_DEFAULTS.maxAttempts,
      retryBaseMs: v.DEVMIND_WEBHOOK_RETRY_MS ?? WEBHOOK_DEFAULTS.retryBaseMs,
      timeoutMs: v.DEVMIND_WEBHOOK_TIMEOUT_MS ?? WEBHOOK_DEFAULTS.timeoutMs,
    },
    store: {
      index:
        v.DEVMIND_STORE_INDEX_DIMS === undefined || v.DEVMIND_STORE_INDEX_EMBED === undefined
          ? null
          : { dims: v.DEVMIND_STORE_INDEX_DIMS, embed: v.DEVMIND_STORE_INDEX_EMBED, fields: v.DEVMIND_STORE_INDEX_FIELDS ?? ["$"] },
      ttl: {
        ...(v.DEVMIND_STORE_TTL_MINUTES === undefined ? {} : { defaultTtl: v.DEVMIND_STORE_TTL_MINUTES }),
        refreshOnRead: v.DEVMIND_STORE_TTL_REFRESH_ON_READ ?? STORE_DEFAULTS.refreshOnRead,
        sweepIntervalMinutes: v.DEVMIND_STORE_SWEEP_MINUTES ?? STORE_DEFAULTS.sweepIntervalMinutes,
      },
    },
    graphDefaults: v.LANGGRAPH_CONFIG ?? {},
    logLevel: v.LOG_LEVEL ?? d.logLevel,
    operations: operationsSettings(v),
  };
}
