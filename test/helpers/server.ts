import { loadConfig, type DevmindConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer, type StartServerOptions } from "../../src/server/start-server.js";
import { tempWorkspace } from "./agent.js";
import { freshMigratedSchema } from "./databases.js";

/** API keys every test server accepts: principal name -> key. */
export const TEST_KEYS = { alice: "key-alice-0123456789", bob: "key-bob-0123456789" } as const;

/** A running test server on a fresh schema, with everything needed to inspect and clean up. */
export interface TestServer {
  url: string;
  server: RunningServer;
  runtime: Runtime;
  db: Database;
  config: DevmindConfig;
  model: ScriptedChatModel;
  workspace: string;
  close(): Promise<void>;
}

/**
 * Starts a real server on 127.0.0.1 port 0 over a fresh migrated schema on `owner`'s connections
 * (`openBackend(backend)`, shared by a file's tests), with the scripted model (`turns`, per thread)
 * and `workers` in-process worker slots (default 2); `graphs` are the runtime's graphs (default:
 * the built-in agent alone); `chatModel` replaces the scripted model as the agent's model (`model`
 * stays the unused scripted one). API keys are TEST_KEYS unless `apiKeys` is ""
 * (open server). `close()` stops the server and its workers and drops the schema; the caller
 * closes `owner`.
 */
export async function startTestServer(
  owner: Database,
  turns: ScriptedTurn[],
  options: { workers?: number; apiKeys?: string; env?: Record<string, string>; heartbeatMs?: number; graphs?: RuntimeOptions["graphs"]; chatModel?: RuntimeOptions["model"]; http?: StartServerOptions["http"]; auth?: StartServerOptions["auth"] } = {},
): Promise<TestServer> {
  const { db, drop } = await freshMigratedSchema(owner);
  const ws = tempWorkspace();
  const apiKeys = options.apiKeys ?? Object.entries(TEST_KEYS).map(([name, key]) => `${name}=${key}`).join(",");
  const config = loadConfig({ DEVMIND_WORKSPACE: ws.dir, DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_LEASE_MS: "5000", ...(apiKeys === "" ? {} : { DEVMIND_API_KEYS: apiKeys }), ...options.env });
  const model = new ScriptedChatModel(turns);
  const runtime = createRuntime({ db, model: options.chatModel ?? model, config, ...(options.graphs === undefined ? {} : { graphs: options.graphs }) });
  const server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: options.workers ?? 2, ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }), ...(options.http === undefined ? {} : { http: options.http }), ...(options.auth === undefined ? {} : { auth: options.auth }) });
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    server,
    runtime,
    db,
    config,
    model,
    workspace: ws.dir,
    close() {
      closing ??= (async () => {
        try {
          await server.close();
          await runtime.close();
          await drop();
        } finally {
          ws.cleanup();
        }
      })();
      return closing;
    },
  };
}

/** Collects an async iterable into an array, at most `max` items (a bound, so no test loops forever). */
export async function collect<T>(iterable: AsyncIterable<T>, max = 10_000): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
    if (items.length >= max) throw new Error(`more than ${max} items`);
  }
  return items;
}
