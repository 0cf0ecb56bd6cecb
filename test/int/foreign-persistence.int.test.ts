/**
 * A graph compiled with a checkpointer or a store of its own (`compile({ checkpointer: new
 * MemorySaver() })`, as tutorials write it) runs durably on devmind's saver and store, which take
 * their place as on the LangGraph Platform; `devmind graphs` and the log say so once (issue 37
 * item 4). No graph problem ends a server that is listening: a graph that cannot be resolved when
 * the server warms the schemas is logged and its routes answer 422 with the cause, as a throwing
 * factory's do.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { rememberGraphSource } from "../../src/graphs/static-schemas.js";
import { createLogger } from "../../src/logger.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { runCli } from "../helpers/cli.js";
import { freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { waitUntil } from "../helpers/waits.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/graphs/persistence/", import.meta.url));
const CONFIG = join(FIXTURES, "langgraph.json");

interface Fixtures {
  withSaver: unknown;
  withSaverAndStore: unknown;
  factoryWithSaver: unknown;
  failingFactory: unknown;
  ownSaver: { storage: Record<string, unknown> };
  ownStore: { search(namespace: string[]): Promise<unknown[]> };
}

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Two runs of graph `graph` on one new thread (count 1, then 5 -> 6); the thread id. */
async function twoRuns(url: string, graph: string): Promise<string> {
  const thread = await post(`${url}/threads`, {});
  const threadId = thread.body["thread_id"] as string;
  expect(await post(`${url}/threads/${threadId}/runs/wait`, { assistant_id: graph, input: { count: 0 } })).toMatchObject({ status: 200, body: { count: 1 } });
  expect(await post(`${url}/threads/${threadId}/runs/wait`, { assistant_id: graph, input: { count: 5 } })).toMatchObject({ status: 200, body: { count: 6 } });
  return threadId;
}

describe("in process: graphs with their own persistence run on devmind's; a graph failing at warm-up answers 422", () => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let runtime: Runtime;
  let server: RunningServer;
  let fixtures: Fixtures;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    owner = await openBackend("pglite");
    ({ db, drop } = await freshMigratedSchema(owner));
    fixtures = (await import("../fixtures/graphs/persistence/graphs.js")) as Fixtures;
    // a graph whose promise rejects only once the server warms the schemas (a file's export is
    // awaited at load; a graph given in code is not)
    const broken = Promise.reject(new Error("the index is not built yet"));
    broken.catch(() => undefined);
    rememberGraphSource(broken, { file: join(FIXTURES, "graphs.ts"), exportName: "withSaver" });
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const config = loadConfig({ DEVMIND_MODEL_MAX_RETRIES: "0" });
    runtime = createRuntime({
      db,
      config,
      logger: createLogger({ destination }),
      graphs: { agent: false, saver: fixtures.withSaver as never, stored: fixtures.withSaverAndStore as never, factorySaver: fixtures.factoryWithSaver as never, failing: fixtures.failingFactory as never, broken: broken as never },
    });
    server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 1 });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await runtime?.close();
    await drop?.();
    await owner?.close();
  });

  it("runs each graph durably in devmind's tables: its MemorySaver and InMemoryStore stay empty; the log says so once per graph", async () => {
    const threads = [await twoRuns(server.url, "saver"), await twoRuns(server.url, "stored"), await twoRuns(server.url, "factorySaver")];
    for (const threadId of threads) {
      const stored = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".checkpoints WHERE thread_id = $1`, [threadId]);
      expect(stored.rows[0]?.n).toBeGreaterThanOrEqual(4);
    }
    expect(Object.keys(fixtures.ownSaver.storage)).toEqual([]);
    expect(await fixtures.ownStore.search(["counts"])).toEqual([]);
    // the graphs' `config.store` was devmind's: the items are in its table
    expect((await runtime.store.get(["counts"], "at-5"))?.value).toEqual({ count: 6 });
    const replaced = lines.filter((line) => line["event"] === "graph.persistence_replaced");
    expect(replaced.map((line) => [line["graph"], line["checkpointer"], line["store"]])).toEqual([
      ["saver", "MemorySaver", undefined],
      ["stored", "MemorySaver", "InMemoryStore"],
      ["factorySaver", "MemorySaver", undefined],
    ]);
    expect(replaced[1]?.["msg"]).toBe("graph stored was compiled with its own MemorySaver and InMemoryStore: devmind keeps its runs in its database instead");
  });

  it("a graph that fails at warm-up is logged once and answers 422 with its cause; a throwing factory too; the server stays up", async () => {
    await waitUntil("the warm-up's graph.failed line", () => lines.some((line) => line["event"] === "graph.failed"), 30_000);
    expect(lines.filter((line) => line["event"] === "graph.failed").map((line) => [line["graph"], line["code"]])).toEqual([["broken", "GRAPH_LOAD_FAILED"]]);
    const schemas = await fetch(`${server.url}/assistants/broken/schemas`);
    const text = await schemas.text();
    expect(schemas.status).toBe(422);
    expect(text).toContain("the index is not built yet");
    const thread = await post(`${server.url}/threads`, {});
    const factorySchemas = await fetch(`${server.url}/assistants/failing/schemas`);
    expect([factorySchemas.status, await factorySchemas.text()]).toEqual([422, "graph failing could not be built: cannot build: SEARCH_API_KEY is not set"]);
    // a run of it is created and fails with the cause (the Platform's runs/wait answers 200 with __error__)
    const failing = await post(`${server.url}/threads/${thread.body["thread_id"] as string}/runs/wait`, { assistant_id: "failing", input: { count: 0 } });
    expect(failing.status).toBe(200);
    expect(JSON.stringify(failing.body["__error__"])).toContain("SEARCH_API_KEY is not set");
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);
  });
});

describe("devmind graphs and devmind serve with such a langgraph.json", () => {
  let dir: string;
  let serve: ServeProcess | undefined;

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-persist-")));
    seedDataDir(dir);
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("devmind graphs says which checkpointer and store devmind replaces", async () => {
    const json = await runCli(["graphs", "--json", "--config", CONFIG], {}, { cwd: FIXTURES, timeoutMs: 120_000 });
    expect(json.code).toBe(0);
    const byId = Object.fromEntries(json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { id: string; replaced?: unknown }).map((line) => [line.id, line.replaced]));
    expect(byId).toEqual({ saver: { checkpointer: "MemorySaver" }, stored: { checkpointer: "MemorySaver", store: "InMemoryStore" }, factorySaver: undefined, failing: undefined });
    const text = await runCli(["graphs", "--config", CONFIG], {}, { cwd: FIXTURES, timeoutMs: 120_000 });
    expect(text.stdout).toContain("compiled with its own MemorySaver and InMemoryStore: devmind keeps its runs in its database instead");
  }, 240_000);

  it("serve runs them durably (the checkpoints are in devmind's database after the server stopped), logs each replacement once, stays up", async () => {
    serve = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], { DEVMIND_DATA_DIR: dir, DEVMIND_WORKSPACE: join(dir, "ws") });
    const threads = [await twoRuns(serve.url, "saver"), await twoRuns(serve.url, "stored")];
    const failing = await fetch(`${serve.url}/assistants/failing/schemas`);
    expect(failing.status).toBe(422);
    expect((await fetch(`${serve.url}/ok`)).status).toBe(200);
    const logged = serve
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"graph.persistence_replaced"'))
      .map((line) => (JSON.parse(line) as { graph: string }).graph);
    expect(logged).toEqual(["saver", "stored"]);
    expect(await serve.stop()).toBe(0);
    serve = undefined;
    const reopened = await openDatabase({ dataDir: dir });
    try {
      for (const threadId of threads) {
        const rows = await reopened.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${reopened.schema}".checkpoints WHERE thread_id = $1`, [threadId]);
        expect(rows.rows[0]?.n).toBeGreaterThanOrEqual(4);
      }
    } finally {
      await reopened.close();
    }
  }, 240_000);
});
