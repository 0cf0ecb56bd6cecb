import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Database } from "../../src/db/types.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import type { RuntimeOptions } from "../../src/runtime/runtime.js";
import { openBackend } from "./databases.js";
import { startTestServer, TEST_KEYS, type TestServer } from "./server.js";

/**
 * For a `describe` of SDK tests on `backend`: opens the backend once for the block (closed after
 * it), and returns `start(workers, options)`, which starts a test server with `graphs` (default:
 * the built-in agent alone; `options.graphs` overrides them for one server) on a fresh schema, its
 * scripted model answering `options.turns`, and the official SDK `Client` (alice's key) for it.
 * Servers are closed after each test.
 */
export function sdkServers(
  backend: "pglite" | "postgres",
  graphs?: RuntimeOptions["graphs"],
): (workers?: number, options?: { turns?: ScriptedTurn[]; graphs?: RuntimeOptions["graphs"] }) => Promise<{ server: TestServer; client: Client }> {
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (workers = 1, options = {}) => {
    const chosen = options.graphs ?? graphs;
    const server = await startTestServer(owner, options.turns ?? [], { workers, ...(chosen === undefined ? {} : { graphs: chosen }) });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };
}

/** The SDK's HTTP error status and message of a refused call ("(it succeeded)" when it was not refused). */
export async function sdkRefusal(promise: Promise<unknown>): Promise<{ status: number | undefined; message: string }> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught as { status?: number; message?: string },
  );
  return { status: error?.status, message: error?.message ?? "(it succeeded)" };
}
