import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { configSecrets, describeModelRequirement, loadConfig, type DevmindConfig, type ModelSpec } from "../config.js";
import { ENV_SCHEMA } from "../config-schema.js";
import type { MigrateResult } from "../db/migrate.js";
import type { DataDirProgress } from "../db/open-database.js";
import type { Database } from "../db/types.js";
import { ConfigError } from "../errors.js";
import { createLogger, type Logger } from "../logger.js";
import type { Runtime } from "../runtime/runtime.js";
import { createRedactor, type Redactor } from "../secret-redaction.js";
import type { GraphEntry } from "../graphs/graph-kinds.js";
import type { Operations } from "../operations/operations.js";

/**
 * What a command needs to work on runs: the config, where the migrated database is, and the
 * runtime — the only way commands reach runs (no store, SQL or channel of src/runtime).
 */
export interface OpenedRuntime {
  config: DevmindConfig;
  /** Where the database is (a URL without its password, or the data directory) and its schema, for messages. */
  database: { location: string; schema: string };
  runtime: Runtime;
  /** JSON lines on stderr at LOG_LEVEL, through `redactor`. */
  logger: Logger;
  /** Hides the configured secret values (and secret-looking text) in anything printed. */
  redactor: Redactor;
  /** Metrics, traces and LangSmith tracing of a service (`operations: true`); null otherwise. */
  operations: Operations | null;
  /** Closes the runtime (stopping its workers) and then the database; safe to call twice. */
  close(): Promise<void>;
  /**
   * `serve` / `dev` once listening: records the server's URL in the embedded database's lock file,
   * so CLI commands beside it go through its API (remote/local-server.ts). Nothing on PostgreSQL.
   */
  announceServer?(url: string, ownerKey?: string): void;
  /** The local server this command goes through (remote/local-server.ts), or undefined: the runtime is in this process. */
  server?: string | undefined;
}

/** Where a command's runs execute, for its messages: `in process PID`, or `on the devmind server at URL` when it goes through one. */
export function executedWhere(opened: Pick<OpenedRuntime, "server">): string {
  return opened.server === undefined ? `in process ${process.pid}` : `on the devmind server at ${opened.server}`;
}

/** Options of `openRuntime`. */
export interface OpenRuntimeOptions {
  /** Default: `loadConfig()` (environment + `.env`). */
  config?: DevmindConfig;
  /**
   * The graphs whose runs this command will execute (`"all"`: every graph of the runtime, for a
   * worker): each must be ready (`checkGraphsReady`, e.g. the agent's model builds) before the
   * database is opened, else its error (a ConfigError naming what to set, exit 2). Commands that
   * only read or decide (show, runs, events, approve --detach) name none, and those that learn the
   * graph from a run (approve, resume) ask `runtime.graphs.ready` themselves once they know it.
   */
  readyGraphs?: readonly string[] | "all";
  /** Overrides the configured model (a test's). */
  model?: BaseChatModel;
  /**
   * The command never calls the model (show, events, runs, cancel, crons): the runtime gets a
   * stand-in that is never called, and the configured model is not built, so LangChain's OpenAI
   * client (about 0.4 s of CPU per start) is not loaded.
   */
  callsNoModel?: boolean;
  /** `--model SPEC`: parsed like DEVMIND_MODEL and put in place of the configured model. */
  modelSpec?: string;
  /**
   * On the embedded database, hand runs left `running` by a dead process to the reaper first
   * (`runtime.runs.recoverOrphans`). Commands that change runs set it; read-only ones do not.
   */
  recoverOrphans?: boolean;
  /**
   * A long-running service (`serve`, `worker`): migrations applied at start are logged at info.
   * One-shot commands log them at debug, so a first `devmind run` keeps its stderr for the user.
   */
  service?: boolean;
  /** Told before and after a new embedded database is created (the demo shows it). */
  onDatabaseProgress?: ((progress: DataDirProgress) => void) | undefined;
  /** The project's graphs (`loadProjectGraphs`); default: the built-in agent alone. */
  graphs?: Record<string, GraphEntry | false> | undefined;
  /** A service (`serve`, `worker`): start metrics, traces and LangSmith tracing as configured (`startOperations`). */
  operations?: boolean;
}

/**
 * `config` with the model of `--model SPEC`, validated by the same rule as DEVMIND_MODEL; a bad
 * spec is a ConfigError naming the flag (exit 2).
 */
export function withModelSpec(config: DevmindConfig, spec: string | undefined): DevmindConfig {
  return spec === undefined ? config : { ...config, model: parseModelFlag(spec) };
}

/** Parses `--model SPEC` by the rule of DEVMIND_MODEL; ConfigError naming the flag otherwise. */
export function parseModelFlag(spec: string): ModelSpec {
  const parsed = ENV_SCHEMA.shape.DEVMIND_MODEL.safeParse(spec.trim());
  if (!parsed.success || parsed.data === undefined) {
    const expected = parsed.success ? "expected a model spec" : (parsed.error.issues[0]?.message ?? "expected a model spec");
    throw new ConfigError(`--model: ${expected}, got ${JSON.stringify(spec)}`, { variables: ["--model"] });
  }
  return parsed.data;
}

/** A stand-in model whose only answer is an error saying `message`. */
async function standInModel(message: string, name: string): Promise<BaseChatModel> {
  const { ScriptedChatModel } = await import("../model/scripted-model.js");
  return new ScriptedChatModel([{ error: message }], { name });
}

/**
 * The model options a command's runtime gets: the test's model; for a command that never calls
 * one, a stand-in (so LangChain's OpenAI client, about 0.4 s of CPU per start, is not loaded);
 * otherwise none, so the configured model loads when a graph first needs it, with a stand-in to
 * build the agent's graph from when it cannot be built (reading a thread needs no model), whose
 * only answer is the error saying what to set. Whether a run can execute is `graphs.ready`.
 */
async function commandModel(options: OpenRuntimeOptions, config: DevmindConfig): Promise<{ model: BaseChatModel } | { modelStandIn: (error: unknown) => Promise<BaseChatModel> }> {
  if (options.model !== undefined) return { model: options.model };
  if (options.callsNoModel === true) return { model: await standInModel("this command does not call the model", "not-called") };
  return { modelStandIn: (error) => standInModel(error instanceof Error && config.model !== null ? error.message : describeModelRequirement(), "unconfigured") };
}

/**
 * What every command says when it must make a new embedded database with initdb (5-20 s, once):
 * one line on stderr, so the wait is never silent. A copy of the template (well under a second)
 * says nothing.
 */
function initdbNotice(progress: DataDirProgress): void {
  if (progress.phase === "creating" && progress.source === "initdb") {
    process.stderr.write(`devmind: creating the embedded database in ${progress.pgdata} with initdb (no usable prebuilt template: ${progress.reason ?? "unknown"}); this takes 5-20 s, once\n`);
  } else if (progress.phase === "created" && progress.source === "initdb") {
    process.stderr.write(`devmind: created the embedded database in ${(progress.ms / 1000).toFixed(1)} s\n`);
  }
}

/**
 * Opens the configured database (PostgreSQL for DATABASE_URL, else embedded PGlite under the data
 * directory, which a second process cannot open), applies pending migrations and creates the
 * runtime. Every CLI command and `devmind serve` start here, so they agree on what they open.
 * The database, model and runtime modules load here, not when the CLI starts: a usage error,
 * `--version` or a refused option costs no LangChain or PGlite load.
 */
export async function openRuntime(options: OpenRuntimeOptions = {}): Promise<OpenedRuntime> {
  const [{ migrate }, { openDatabase }, { createRuntime }] = await Promise.all([import("../db/migrate.js"), import("../db/open-database.js"), import("../runtime/runtime.js")]);
  const config = withModelSpec(options.config ?? loadConfig(), options.modelSpec);
  // before the database: a command that cannot execute its runs creates no data directory
  if (options.readyGraphs !== undefined) {
    const { checkGraphsReady } = await import("../graphs/graphs-ready.js");
    await checkGraphsReady({ config, model: options.model, graphs: options.graphs }, options.readyGraphs);
  }
  const models = await commandModel(options, config);
  const redactor = createRedactor(configSecrets(config));
  const logger = createLogger({ level: config.logLevel, redact: redactor.text });
  // graph code's getLogger() lines (registered when the graphs loaded) follow LOG_LEVEL from here on
  if (options.graphs !== undefined) (await import("../graphs/sdk-logger.js")).attachSdkLogger(logger);
  const operations = options.operations === true ? await (await import("../operations/operations.js")).startOperations(config, logger) : null;
  const openedDb = await openDatabase({ url: config.databaseUrl, directUrl: config.databaseDirectUrl, logger, dataDir: config.dataDir, schema: config.dbSchema, onProgress: options.onDatabaseProgress ?? initdbNotice });
  const db = operations === null ? openedDb : operations.observeDatabase(openedDb);
  let runtime: Runtime | undefined;
  try {
    logger.debug({ event: "database.opened", location: db.location, schema: db.schema }, "database opened");
    logMigrations(logger, db, await migrate(db), options.service === true ? "info" : "debug");
    runtime = createRuntime({ db, config, logger, redactor, ...models, ...(options.graphs === undefined ? {} : { graphs: options.graphs }), ...(operations === null ? {} : { traceParent: operations.traceParent }), ...(operations?.observer === undefined ? {} : { observer: operations.observer }) });
    const graphIds = runtime.graphs.ids;
    operations?.attach(db, () => graphIds());
    if (options.recoverOrphans === true) await runtime.runs.recoverOrphans();
  } catch (error) {
    await runtime?.close().catch(() => undefined);
    await db.close();
    await operations?.close();
    throw error;
  }
  const opened = runtime;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await opened.close();
      } finally {
        await db.close();
        // spans and LangSmith runs still queued go out (bounded) once the runs stopped
        await operations?.close();
      }
    })();
    return closing;
  };
  return { config, database: { location: db.location, schema: db.schema }, runtime: opened, logger, redactor, operations, close, ...(db.announceServer === undefined ? {} : { announceServer: (url: string, ownerKey?: string) => db.announceServer?.(url, ownerKey) }) };
}

/** One line per migration applied now, at `level` (none when the schema was up to date: a debug line). */
export function logMigrations(logger: Logger, db: Database, result: MigrateResult, level: "info" | "debug" = "info"): void {
  for (const version of result.applied) logger[level]({ event: "migration.applied", schema: db.schema, version }, `migration ${String(version).padStart(4, "0")} applied`);
  if (result.applied.length === 0) logger.debug({ event: "migrations.current", schema: db.schema, version: result.current }, "schema up to date");
}
