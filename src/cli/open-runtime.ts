import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { loadConfig, type DevmindConfig } from "../config.js";
import { migrate } from "../db/migrate.js";
import { openDatabase } from "../db/open-database.js";
import type { Database } from "../db/types.js";
import { createChatModel } from "../model/create-chat-model.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";

/** What a command needs to work on runs: the config, the migrated database and the runtime. */
export interface OpenedRuntime {
  config: DevmindConfig;
  db: Database;
  runtime: Runtime;
  /** Closes the runtime (stopping its workers) and then the database; safe to call twice. */
  close(): Promise<void>;
}

/** Options of `openRuntime`. */
export interface OpenRuntimeOptions {
  /** Default: `loadConfig()` (environment + `.env`). */
  config?: DevmindConfig;
  /**
   * Build the chat model now, so a command that will call it fails before touching any run when
   * no model is configured (ConfigError naming OPENAI_API_KEY, exit 2). Commands that only read
   * or decide (show, runs, events, approve --detach) leave it false.
   */
  requireModel?: boolean;
  /** Overrides the configured model (`--model SPEC` already folded into config, or a test's). */
  model?: BaseChatModel;
}

/**
 * Opens the configured database (PostgreSQL for DATABASE_URL, else embedded PGlite under the data
 * directory, which a second process cannot open), applies pending migrations and creates the
 * runtime. Every CLI command and `devmind serve` start here, so they agree on what they open.
 */
export async function openRuntime(options: OpenRuntimeOptions = {}): Promise<OpenedRuntime> {
  const config = options.config ?? loadConfig();
  const model = options.model ?? (options.requireModel === true ? createChatModel(config) : undefined);
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, schema: config.dbSchema });
  let runtime: Runtime;
  try {
    await migrate(db);
    runtime = createRuntime({ db, config, ...(model === undefined ? {} : { model }) });
  } catch (error) {
    await db.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await runtime.close();
      } finally {
        await db.close();
      }
    })();
    return closing;
  };
  return { config, db, runtime, close };
}
