import { loadConfig, type DevmindConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { tempWorkspace } from "./agent.js";
import { freshMigratedSchema } from "./databases.js";

/** A listening devmind server on a fresh schema, with the pieces a test looks into. */
export interface ServerStack {
  url: string;
  port: number;
  db: Database;
  runtime: Runtime;
  model: ScriptedChatModel;
  config: DevmindConfig;
  workspace: string;
  /** Stops the server and workers, closes the runtime, drops the schema, removes the workspace. */
  close(): Promise<void>;
}

/**
 * Starts the real HTTP server (port 0 on 127.0.0.1) over a fresh migrated schema of `owner`, with
 * a ScriptedChatModel playing `turns` and `env` as configuration (e.g. DEVMIND_API_KEYS).
 */
export async function startServerStack(owner: Database, turns: ScriptedTurn[], options: { env?: Record<string, string>; workers?: number } = {}): Promise<ServerStack> {
  const { db, drop } = await freshMigratedSchema(owner);
  const workspace = tempWorkspace();
  const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_LEASE_MS: "5000", ...(options.env ?? {}) });
  const model = new ScriptedChatModel(turns);
  const runtime = createRuntime({ db, model, config });
  let server: RunningServer;
  try {
    server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: options.workers ?? 1 });
  } catch (error) {
    await runtime.close();
    await drop();
    workspace.cleanup();
    throw error;
  }
  return {
    url: server.url,
    port: server.port,
    db,
    runtime,
    model,
    config,
    workspace: workspace.dir,
    async close() {
      await server.close();
      await runtime.close();
      await drop();
      workspace.cleanup();
    },
  };
}
