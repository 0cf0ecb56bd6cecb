/**
 * Every default devmind uses, in one place. CONTRACT section 2 documents the user-facing ones;
 * config.ts reads the environment and falls back to these.
 */

/** Defaults of the environment variables of CONTRACT section 2. */
export const CONFIG_DEFAULTS = {
  dataDir: ".devmind",
  dbSchema: "devmind",
  openaiModel: "gpt-4o-mini",
  modelTimeoutMs: 60_000,
  modelMaxRetries: 2,
  maxModelRounds: 8,
  maxToolCalls: 16,
  maxTokens: 200_000,
  runTimeoutMs: 900_000,
  toolTimeoutMs: 10_000,
  maxToolOutputChars: 12_000,
  noProgressLimit: 3,
  contextTokens: 64_000,
  workspace: "./workspace",
  workerConcurrency: 4,
  leaseMs: 30_000,
  maxAttempts: 3,
  host: "127.0.0.1",
  port: 8787,
  logLevel: "info",
} as const;

/** The embedded database lives in this sub-directory of DEVMIND_DATA_DIR. */
export const PGLITE_SUBDIR = "pgdata";

/** Lock file taken next to the embedded database so only one process opens it. */
export const PGLITE_LOCK_FILE = "pgdata.lock";

/** `dataDir` value meaning "in-memory embedded database, nothing on disk". */
export const MEMORY_DATA_DIR = "memory://";

/** Schema names must be plain lower-case SQL identifiers of at most 63 bytes. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Pool sizing and timeouts for the PostgreSQL client. */
export const PG_POOL_DEFAULTS = {
  max: 10,
  connectionTimeoutMillis: 10_000,
  idleTimeoutMillis: 30_000,
} as const;

/** Name of the table recording applied migrations (inside the configured schema). */
export const MIGRATIONS_TABLE = "schema_migrations";

/** Prefix of the advisory-lock key taken while migrating one schema. */
export const MIGRATION_LOCK_PREFIX = "devmind:migrate:";

/** Rows fetched per page when `list()` walks checkpoints without a limit. */
export const CHECKPOINT_LIST_PAGE_SIZE = 50;

/**
 * Inclusive bounds of the integer variables of CONTRACT section 2. A value outside them is a
 * config error; the bounds only catch typos (an extra zero, a unit mix-up), not tune anything.
 */
export const CONFIG_BOUNDS = {
  modelTimeoutMs: { min: 1, max: 3_600_000 },
  modelMaxRetries: { min: 0, max: 20 },
  maxModelRounds: { min: 1, max: 1_000 },
  maxToolCalls: { min: 1, max: 10_000 },
  maxTokens: { min: 1, max: 100_000_000 },
  runTimeoutMs: { min: 1, max: 604_800_000 },
  toolTimeoutMs: { min: 1, max: 3_600_000 },
  maxToolOutputChars: { min: 1, max: 10_000_000 },
  noProgressLimit: { min: 1, max: 1_000 },
  contextTokens: { min: 1, max: 10_000_000 },
  workerConcurrency: { min: 0, max: 1_024 },
  leaseMs: { min: 1, max: 3_600_000 },
  maxAttempts: { min: 1, max: 1_000 },
  port: { min: 1, max: 65_535 },
} as const;

/** Tool names in DEVMIND_REQUIRE_APPROVAL / DEVMIND_AUTO_APPROVE must match this. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Names in DEVMIND_API_KEYS (`name=key,...`) must match this; they appear in logs and audits. */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The dotenv file loaded from the working directory (real environment variables win). */
export const DOTENV_FILE = ".env";
