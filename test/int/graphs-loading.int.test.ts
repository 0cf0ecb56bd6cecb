/**
 * Graphs from langgraph.json: reading the config, loading TypeScript and JavaScript graph modules
 * of every kind, attaching devmind's checkpointer, refusing what is not a graph, and `devmind
 * graphs` reporting each graph's load error with its id, file and cause (exit 2).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import type { Database } from "../../src/db/types.js";
import { hasErrorCode } from "../../src/errors.js";
import { graphSchemas } from "../../src/graphs/graph-introspection.js";
import { resolveGraph, type CompiledGraphLike, type GraphFactory, type StateGraphLike } from "../../src/graphs/graph-kinds.js";
import { GraphRegistry } from "../../src/graphs/graph-registry.js";
import { applyGraphEnv, readLanggraphConfig } from "../../src/graphs/langgraph-config.js";
import { loadGraphs } from "../../src/graphs/load-graphs.js";
import { runCli } from "../helpers/cli.js";
import { freshMigratedSchema, openBackend } from "../helpers/databases.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/graphs/", import.meta.url));
const CONFIG = join(FIXTURES, "langgraph.json");
const PLATFORM_CONFIG = join(FIXTURES, "platform", "langgraph.json");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A langgraph.json in a fresh temp dir, with `graphs` pointing into the fixtures. */
function configFile(content: unknown): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-lgjson-")));
  dirs.push(dir);
  const path = join(dir, "langgraph.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const errorOf = (fn: () => unknown): { code?: string; message: string } => {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("expected a throw");
};

describe("langgraph.json", () => {
  it("reads graphs (file and export, `default` without one), env, and warns about keys it does not honour", () => {
    const config = readLanggraphConfig(CONFIG);
    expect(config.graphs.map((graph) => [graph.id, graph.file, graph.exportName])).toEqual([
      ["compiled", join(FIXTURES, "graphs.ts"), "compiled"],
      ["uncompiled", join(FIXTURES, "graphs.ts"), "uncompiled"],
      ["promised", join(FIXTURES, "graphs.ts"), "promised"],
      ["factory", join(FIXTURES, "graphs.ts"), "factory"],
      ["asyncFactory", join(FIXTURES, "graphs.ts"), "asyncFactory"],
      ["byDefault", join(FIXTURES, "graphs.ts"), "default"],
      ["plain", join(FIXTURES, "plain.mjs"), "graph"],
    ]);
    expect(config.env).toEqual({ DEVMIND_FIXTURE_GRAPH_ENV: "from-langgraph-json" });
    // node_version and dependencies are LangGraph's (they shape a container build): accepted quietly
    expect(config.warnings).toEqual([`${CONFIG}: unknown key "someFutureKey" ignored (no LangGraph tool knows it)`]);
    expect(config.serveRefusals).toEqual([]);
    expect(config.http).toBeNull();
    expect(config.ui).toEqual([]);
  });

  it("reads every key of LangGraph's format: build keys quietly, graphs as objects, env as a list, http, ui; refuses for serve what serve cannot honour", () => {
    const keys = { node_version: "20", python_version: "3.12", dependencies: ["."], dockerfile_lines: ["RUN true"], docker_compose_file: "x.yml", image_distro: "wolfi", base_image: "img", api_version: "0.4", pip_config_file: "pip.conf", pip_installer: "uv", keep_pkg_tools: true, node_loader: "tsx", store: { index: { dims: 3, embed: "openai:x" } }, checkpointer: { ttl: { strategy: "delete" } }, webhooks: { env_prefix: "LG_" }, _INTERNAL_docker_tag: "t", $schema: "https://langgra.ph/schema.json" };
    const path = configFile({ ...keys, graphs: { a: { path: "./g.ts:graph", description: "the a graph" } }, env: ["OPENAI_API_KEY"], http: { app: "./app.ts:app", disable_store: true, disable_meta: true, disable_mcp: true, cors: { allow_origins: ["https://a.example"], max_age: 60 }, logging_headers: { excludes: ["*"] } }, ui: { a: "./ui.tsx" }, ui_config: { shared: ["nuqs"] }, anotherUnknown: 1 });
    const dir = join(path, "..");
    const config = readLanggraphConfig(path);
    expect(config.graphs).toEqual([{ id: "a", source: "./g.ts:graph", file: join(dir, "g.ts"), exportName: "graph", description: "the a graph" }]);
    // store.index stands for devmind's own store settings (applied as env defaults); checkpointer is accepted quietly
    expect(config.env).toEqual({ DEVMIND_STORE_INDEX_DIMS: "3", DEVMIND_STORE_INDEX_EMBED: "openai:x" });
    expect(config.warnings).toEqual([`${path}: unknown key "anotherUnknown" ignored (no LangGraph tool knows it)`]);
    expect(config.http).toEqual({ app: { source: "./app.ts:app", file: join(dir, "app.ts"), exportName: "app" }, disabled: ["store", "meta"], cors: { allowOrigins: ["https://a.example"], maxAge: 60 } });
    expect(config.ui).toEqual([{ name: "a", source: "./ui.tsx", file: join(dir, "ui.tsx") }]);
    expect(config.uiShared).toEqual(["nuqs"]);
    expect(config.serveRefusals).toEqual([]);

    const refused = readLanggraphConfig(configFile({ graphs: { a: "./g.ts:graph" }, auth: { path: "./auth.ts:auth" }, http: { mount_prefix: "/api", configurable_headers: { includes: ["x-*"] }, middleware_order: "middleware_first", disable_webhooks: true, enable_custom_route_auth: false } }));
    expect(refused.serveRefusals.map((line) => /"([^"]+)"/.exec(line)?.[1])).toEqual(["http.mount_prefix", "http.configurable_headers", "http.disable_webhooks", "http.middleware_order"]);
    expect(refused.auth).toEqual({ source: "./auth.ts:auth", file: expect.stringMatching(/\/auth\.ts$/), exportName: "auth" });
    expect(refused.warnings.join("\n")).toMatch(/"http.enable_custom_route_auth": false ignored/);
  });

  it.each([
    ["not JSON", "{graphs:", /is not valid JSON/],
    ["no graphs", {}, /graphs/],
    ["empty graphs", { graphs: {} }, /name at least one graph/],
    ["a spec without a file", { graphs: { a: ":graph" } }, /graphs\.a: expected "\.\/path\.ts:exportName"/],
    ["a bad export name", { graphs: { a: "./g.ts:not-an-identifier" } }, /graphs\.a: expected/],
    ["a bad graph id", { graphs: { "bad id!": "./g.ts:graph" } }, /invalid graph id/],
    ["env naming a missing file", { graphs: { a: "./g.ts:graph" }, env: ".env.missing" }, /env: cannot read/],
    ["env of the wrong type", { graphs: { a: "./g.ts:graph" }, env: 12 }, /env/],
    ["an http key no LangGraph tool knows", { graphs: { a: "./g.ts:graph" }, http: { app: "./a.ts:app", disable_everything: true } }, /http: .*unknown key "disable_everything"/],
    ["http.cors of the wrong shape", { graphs: { a: "./g.ts:graph" }, http: { cors: { allow_origins: "*" } } }, /http\.cors\.allow_origins/],
    ["an http.cors origin regex that does not compile", { graphs: { a: "./g.ts:graph" }, http: { cors: { allow_origin_regex: "(" } } }, /http\.cors\.allow_origin_regex: not a valid regular expression/],
    ["a bad http.app reference", { graphs: { a: "./g.ts:graph" }, http: { app: "./app.ts:not-an-export" } }, /http\.app: expected/],
    ["encryption (devmind would store the data unencrypted)", { graphs: { a: "./g.ts:graph" }, encryption: { path: "./e.ts:e" } }, /"encryption" is not supported/],
  ])("refuses %s with CONFIG_INVALID naming the file", (_name, content, message) => {
    const path = configFile(content);
    const error = errorOf(() => readLanggraphConfig(path));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(path);
    expect(error.message).toMatch(message);
  });

  it("reads env from a .env file next to the config; variables already set win", () => {
    const path = configFile({ graphs: { a: "./g.ts:graph" }, env: ".env.graphs" });
    writeFileSync(join(path, "..", ".env.graphs"), "GRAPH_KEY=from-file\nALREADY=from-file\n");
    const config = readLanggraphConfig(path);
    expect(config.env).toEqual({ GRAPH_KEY: "from-file", ALREADY: "from-file" });
    const target: NodeJS.ProcessEnv = { ALREADY: "real" };
    expect(applyGraphEnv(config.env, target)).toEqual(["GRAPH_KEY"]);
    expect(target).toEqual({ ALREADY: "real", GRAPH_KEY: "from-file" });
  });
});

describe("loading graph modules", () => {
  it("a graph module calling the SDK's getLogger() at import loads (the logger is registered first, as LangGraph's server does)", async () => {
    const [logged] = await loadGraphs(readLanggraphConfig(PLATFORM_CONFIG).graphs.filter((graph) => graph.id === "logged"));
    expect(logged?.error).toBeUndefined();
    expect(logged?.kind).toBe("compiled");
    const { getLogger } = await import("@langchain/langgraph-sdk/logging");
    const logger = getLogger();
    expect(logger.warn("from a test")).toBe(logger);
    expect(typeof logger.silly).toBe("function");
  });

  it("reads a Zod context schema as the config (and context) schema; an Annotation state names its channels", async () => {
    const [echo] = await loadGraphs(readLanggraphConfig(PLATFORM_CONFIG).graphs.filter((graph) => graph.id === "context_echo"));
    const schemas = await graphSchemas(echo?.entry as CompiledGraphLike);
    expect(schemas.config).toMatchObject({ type: "object", properties: { model: { type: "string", enum: ["anthropic", "openai", "unknown"] } } });
    expect(Object.keys((schemas.state as { properties: object }).properties)).toEqual(["model"]);
  });

  it("loads TypeScript (through tsx) and JavaScript modules and tells each graph's kind", async () => {
    const loaded = await loadGraphs(readLanggraphConfig(CONFIG).graphs);
    expect(loaded.map((graph) => [graph.id, graph.kind ?? graph.error?.message])).toEqual([
      ["compiled", "compiled"],
      ["uncompiled", "state_graph"],
      ["promised", "compiled"],
      ["factory", "factory"],
      ["asyncFactory", "factory"],
      ["byDefault", "compiled"],
      ["plain", "compiled"],
    ]);
  }, 120_000);

  it.each([
    ["a module that throws while loading", "./broken.ts:graph", /the module failed to load: boom while loading the graph module/],
    ["a missing file", "./nowhere.ts:graph", /no such file/],
    ["a missing export", "./graphs.ts:nope", /no export named nope \(it exports .*compiled/],
    ["an export that is not a graph", "./graphs.ts:notAGraph", /the export notAGraph is not a graph/],
    ["an exported promise that rejects", "./graphs.ts:rejected", /the exported promise rejected: the graph could not be built/],
    ["a node named like devmind's own", "./graphs.ts:reservedName", /node "__summary" has a name reserved for LangGraph and devmind \(starting with "__"; their streams leave such nodes out\): rename it/],
  ])("%s is a load error naming the graph id, the file and the cause", async (_name, source, message) => {
    const [spec] = readLanggraphConfig(configFile({ graphs: { mine: source.replace("./", `${FIXTURES}`) } })).graphs;
    const [loaded] = await loadGraphs([spec as NonNullable<typeof spec>]);
    expect(loaded?.error?.code).toBe("GRAPH_LOAD_FAILED");
    expect(loaded?.error?.message).toContain("graph mine");
    expect(loaded?.error?.message).toContain(resolve(FIXTURES, source.split(":")[0] as string));
    expect(loaded?.error?.message).toMatch(message);
  }, 120_000);
});

describe("resolving graphs onto devmind's checkpointer", () => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend("pglite");
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  it("compiles, awaits and calls each kind with the run's config; every graph checkpoints in devmind's database", async () => {
    const checkpointer = new PostgresCheckpointSaver(db);
    const loaded = await loadGraphs(readLanggraphConfig(CONFIG).graphs);
    const results: [string, number][] = [];
    for (const graph of loaded) {
      if (graph.error !== undefined) throw graph.error;
      const config = { configurable: { thread_id: `thread-${graph.id}`, step: 40 } };
      const compiled = await resolveGraph(graph.entry, { checkpointer, config, id: graph.id });
      const output = (await compiled.invoke({ count: 100 }, config)) as { count: number };
      const state = (await compiled.getState(config)) as { values: { count: number } };
      expect(state.values.count).toBe(output.count);
      results.push([graph.id, output.count]);
    }
    // the factory got the run's config (step 40); the others add their own step
    expect(results).toEqual([
      ["compiled", 101],
      ["uncompiled", 102],
      ["promised", 103],
      ["factory", 140],
      ["asyncFactory", 105],
      ["byDefault", 107],
      ["plain", 110],
    ]);
    const stored = await db.query<{ n: number }>(`SELECT count(DISTINCT thread_id)::int AS n FROM "${db.schema}".checkpoints`);
    expect(stored.rows[0]?.n).toBe(7);
  }, 120_000);

  it("puts devmind's saver in place of a graph's own checkpointer (said to onReplaced), and refuses a factory returning something that is not a graph", async () => {
    const checkpointer = new PostgresCheckpointSaver(db);
    const { ownCheckpointer } = (await import("../fixtures/graphs/graphs.js")) as unknown as { ownCheckpointer: { checkpointer: { storage: Record<string, unknown> } } };
    const told: unknown[] = [];
    const graph = await resolveGraph(ownCheckpointer, { checkpointer, id: "mine", onReplaced: (id, replaced) => told.push([id, replaced]) });
    expect(told).toEqual([["mine", { checkpointer: "MemorySaver" }]]);
    expect(await graph.invoke({ count: 1 }, { configurable: { thread_id: "own-saver" } })).toEqual({ count: 7 });
    expect(Object.keys(ownCheckpointer.checkpointer.storage)).toEqual([]);
    const stored = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".checkpoints WHERE thread_id = 'own-saver'`);
    expect(stored.rows[0]?.n).toBeGreaterThan(0);
    const odd = await resolveGraph(() => ({ not: "a graph" }), { checkpointer, id: "odd" }).catch((error: unknown) => error);
    expect(hasErrorCode(odd, "GRAPH_INVALID")).toBe(true);
    expect((odd as Error).message).toMatch(/graph odd: an object with keys not is not a LangGraph graph/);
  });

  it("refuses a graph with a node named like devmind's own: at once when it can be looked at, a factory's when a run resolves it; LangGraph's own error handler nodes pass", async () => {
    const checkpointer = new PostgresCheckpointSaver(db);
    const fixtures = (await import("../fixtures/graphs/graphs.js")) as { reservedName: StateGraphLike; reservedFactory: GraphFactory; withErrorHandler: StateGraphLike };
    const refusal = /graph mine: node "__summary" has a name reserved for LangGraph and devmind/;
    const atOnce = errorOf(() => new GraphRegistry({ mine: fixtures.reservedName }, { checkpointer }));
    expect(atOnce.code).toBe("GRAPH_INVALID");
    expect(atOnce.message).toMatch(refusal);
    const registry = new GraphRegistry({ mine: fixtures.reservedFactory, handled: fixtures.withErrorHandler }, { checkpointer });
    const resolved = await registry.compiled("mine").catch((error: unknown) => error);
    expect(hasErrorCode(resolved, "GRAPH_INVALID")).toBe(true);
    expect((resolved as Error).message).toMatch(refusal);
    const handled = await registry.compiled("handled");
    expect(await handled.invoke({ count: 1 }, { configurable: { thread_id: "handled" } })).toEqual({ count: 2 });
  });
});

describe("devmind graphs", () => {
  it("lists every graph of ./langgraph.json with its source and kind, warnings on stderr, exit 0", async () => {
    const result = await runCli(["graphs", "--json"], {}, { cwd: FIXTURES, timeoutMs: 120_000 });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as { id: string; status: string; kind: string });
    expect(lines.map((line) => [line.id, line.status, line.kind])).toEqual([
      ["compiled", "loaded", "compiled"],
      ["uncompiled", "loaded", "state_graph"],
      ["promised", "loaded", "compiled"],
      ["factory", "loaded", "factory"],
      ["asyncFactory", "loaded", "factory"],
      ["byDefault", "loaded", "compiled"],
      ["plain", "loaded", "compiled"],
    ]);
    expect(result.stderr).toContain('unknown key "someFutureKey" ignored');
    expect(result.stderr).not.toContain("node_version");
  }, 180_000);

  it("a graph that fails to load: exit 2, its line names the id, the file and the cause; the others still listed", async () => {
    const path = configFile({ graphs: { good: `${FIXTURES}graphs.ts:compiled`, bad: `${FIXTURES}broken.ts:graph` } });
    const result = await runCli(["graphs", "--config", path], {}, { timeoutMs: 120_000 });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^good\s+.*loaded \(compiled\)$/m);
    expect(result.stdout).toMatch(/^bad\s+.*error: graph bad \(.*broken\.ts\): the module failed to load: boom while loading the graph module$/m);
  }, 180_000);

  it("shows each graph's tool nodes and how each tool runs (ToolNode, createAgent), and says why a factory's are not listed", async () => {
    const toolGraphs = join(FIXTURES, "..", "tool-node-graphs.ts");
    const path = configFile({ graphs: { tools: `${toolGraphs}:toolNodeGraph`, agent: `${toolGraphs}:agentGraph`, factory: `${FIXTURES}graphs.ts:factory`, compiled: `${FIXTURES}graphs.ts:compiled` } });
    const [json, text] = await Promise.all([runCli(["graphs", "--config", path, "--json"], {}, { timeoutMs: 120_000 }), runCli(["graphs", "--config", path], {}, { timeoutMs: 120_000 })]);
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { id: string; tool_nodes: unknown; tool_nodes_note: string });
    const tools = [
      { name: "append_once", ledger: "ledgered" },
      { name: "idem_append", ledger: "idempotent" },
      { name: "hang_append", ledger: "ledgered" },
    ];
    expect(lines.map(({ id, tool_nodes }) => ({ id, tool_nodes }))).toEqual([
      { id: "tools", tool_nodes: [{ node: "tools", kind: "ToolNode", tools }] },
      { id: "agent", tool_nodes: [{ node: "tools", kind: "createAgent", tools }] },
      { id: "factory", tool_nodes: null },
      { id: "compiled", tool_nodes: [] },
    ]);
    expect(lines[0]?.tool_nodes_note).toContain("from its own code");
    expect(lines[2]?.tool_nodes_note).toMatch(/not listed: a factory graph is built per run/);
    expect(lines[3]?.tool_nodes_note).toMatch(/^no tool nodes/);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^tools\s+.*loaded \(state_graph\)\n  tool node tools \(ToolNode\): append_once \[ledgered\], idem_append \[ledgered, idempotent: runs again after a crash\], hang_append \[ledgered\]$/m);
    expect(text.stdout).toMatch(/^  tool node tools \(createAgent\): append_once \[ledgered\]/m);
    expect(text.stdout).toMatch(/^factory\s+.*loaded \(factory\)\n  tool nodes not listed: a factory graph is built per run/m);
  }, 180_000);

  it("without langgraph.json: the built-in agent; --config naming a missing file: exit 2", async () => {
    const empty = realpathSync(mkdtempSync(join(tmpdir(), "devmind-nolg-")));
    dirs.push(empty);
    const builtin = await runCli(["graphs"], {}, { cwd: empty, timeoutMs: 120_000 });
    expect(builtin.code).toBe(0);
    expect(builtin.stdout).toMatch(/^agent\s+built-in agent\s+loaded/m);
    const missing = await runCli(["graphs", "--config", join(empty, "nope.json")], {}, { cwd: empty, timeoutMs: 120_000 });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--config: no file");
  }, 180_000);
});
