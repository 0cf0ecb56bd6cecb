/**
 * `devmind serve` with the rest of a project's langgraph.json, judged by LangGraph's server
 * semantics: `http.app` (the project's Hono app: its middleware before devmind's routes, its routes
 * first, both behind the API key), `http.disable_*`, `ui` (bundled and served at /ui), the SDK's
 * global logger for graphs that take it at import, `new Client()` without a URL inside the
 * server, LANGGRAPH_CONFIG (through `env`) on the default assistants, a Zod context schema; and
 * the keys serve refuses at start (exit 2).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantIdFor } from "../../src/graphs/assistant-id.js";
import { runCli } from "../helpers/cli.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { openBackend } from "../helpers/databases.js";
import type { Database } from "../../src/db/types.js";
import { createApp } from "../../src/server/app.js";

const PLATFORM = fileURLToPath(new URL("../fixtures/graphs/platform/", import.meta.url));
const CONFIG = join(PLATFORM, "langgraph.json");

describe("devmind serve --config with http, ui, env LANGGRAPH_CONFIG and a graph taking the SDK logger", () => {
  let dir: string;
  let serve: ServeProcess;
  let client: Client;
  const get = (path: string, headers: Record<string, string> = { "x-api-key": TEST_KEYS.alice }) => fetch(`${serve.url}${path}`, { headers });

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-serve-lgc-")));
    seedDataDir(dir);
    // the fixture's `store.index` embeds with OpenAI: a local server (never called here, the
    // store is not written) so the embedder needs no key
    serve = await spawnServe(["--config", CONFIG, "--port", "0", "--workers", "1"], { DEVMIND_DATA_DIR: dir, DEVMIND_WORKSPACE: join(dir, "ws"), DEVMIND_API_KEYS: `alice=${TEST_KEYS.alice}`, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    client = new Client({ apiUrl: serve.url, apiKey: TEST_KEYS.alice });
  }, 180_000);
  afterAll(async () => {
    expect(await serve?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("the project's routes and middleware sit behind the API key, before devmind's routes: headers, request changes, short-circuits, shadowing, errors, streams", async () => {
    expect((await get("/hello", {})).status).toBe(401);
    const hello = await get("/hello?q=13", { "x-api-key": TEST_KEYS.alice, "x-name": "bob" });
    expect(await hello.json()).toEqual({ hello: "BOB" });
    expect(hello.headers.get("x-echo")).toBe("13");
    expect(hello.headers.get("x-project-middleware")).toBe("seen");
    // devmind's own routes get the middleware too, the open ones without a key
    const info = await get("/info", {});
    expect(info.status).toBe(200);
    expect(info.headers.get("x-project-middleware")).toBe("seen");
    expect(await (await get("/info?halt", {})).json()).toEqual({ halted: true });
    expect((await get("/threads/search?halt", {})).status).toBe(401);
    // a project route wins over devmind's GET /runs/{id}
    expect(await (await get("/runs/shadowed")).json()).toEqual({ mine: true });
    const teapot = await get("/teapot");
    expect([teapot.status, await teapot.text()]).toEqual([418, "short and stout"]);
    const boom = await get("/boom");
    expect([boom.status, ((await boom.json()) as { error: string }).error]).toEqual([500, "INTERNAL_ERROR"]);
    expect((await get("/does/not/exist")).status).toBe(404);
    const lines = await get("/lines");
    expect(await lines.text()).toBe("line 0\nline 1\nline 2\n");
  });

  it("http.disable_store takes devmind's /store away; the project's own route on that path still answers", async () => {
    const search = await fetch(`${serve.url}/store/namespaces`, { method: "POST", headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" }, body: "{}" });
    expect(search.status).toBe(404);
    expect(await (await get("/store/items")).json()).toEqual({ store: "the project's own" });
    expect((await client.assistants.search()).length).toBe(2);
  });

  it("new Client() without a URL in a project route reaches this server as the caller; the default assistant carries LANGGRAPH_CONFIG's config", async () => {
    const response = await get("/via-client");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: { text: "loop", reply: "loop|tone=dry" } });
    const [logged] = await client.assistants.search({ graphId: "logged", metadata: { created_by: "system" } });
    expect(logged).toMatchObject({ assistant_id: assistantIdFor("logged"), config: { configurable: { tone: "dry" } } });
    // the graph's getLogger() at import found devmind's logger; its lines are devmind's JSON log lines
    expect(serve.stderr()).toMatch(/"component":"graph","event":"graph.log","text":"loop","msg":"answering"/);
  });

  it("LANGGRAPH_CONFIG's context is the default assistant's; the Zod context schema is the config and context schema", async () => {
    expect(await client.runs.wait(null, "context_echo", { input: {} })).toEqual({ model: "unknown" });
    expect(await client.runs.wait(null, "context_echo", { input: {}, context: { model: "openai" } })).toEqual({ model: "openai" });
    const schemas = await client.assistants.getSchemas(assistantIdFor("context_echo"));
    const expected = { type: "object", properties: { model: { type: "string", enum: ["anthropic", "openai", "unknown"] } } };
    expect(schemas).toMatchObject({ config_schema: expected, context_schema: expected });
  });

  it("ui: the component's HTML names the bundle on this host; the bundle loads React from the page; one that cannot be built is warned about and absent", async () => {
    const html = await client["~ui"].getComponent("context_echo", "model-card");
    const host = new URL(serve.url).host;
    expect(html).toContain(`<link rel="stylesheet" href="http://${host}/ui/context_echo/entrypoint.css" />`);
    expect(html).toContain(`<script src="http://${host}/ui/context_echo/entrypoint.js" onload='__LGUI_context_echo.render("model-card", "{{shadowRootId}}")'></script>`);
    // the assets need no key (a page's <script> sends none)
    const js = await get("/ui/context_echo/entrypoint.js", {});
    expect(js.headers.get("content-type")).toContain("javascript");
    const source = await js.text();
    expect(source).toContain("var __LGUI_context_echo");
    expect(source).toContain(`globalThis[Symbol.for("LGUI_REQUIRE")]`);
    expect(source).toContain("Model: ");
    expect(await (await get("/ui/context_echo/entrypoint.css", {})).text()).toContain(".card");
    expect((await fetch(`${serve.url}/ui/context_echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"model-card"}' })).status).toBe(401);
    await expect(client["~ui"].getComponent("broken_ui", "broken")).rejects.toMatchObject({ status: 404 });
    expect(serve.stderr()).toMatch(/warning: .*langgraph\.json: ui\.broken_ui: not served: bundling .*broken-card\.jsx failed: Could not resolve "\.\/no-such-module\.js"/);
  });
});

describe("http.cors and http.disable_* on devmind's app", () => {
  let owner: Database;
  let server: TestServer | undefined;
  beforeAll(async () => {
    owner = await openBackend("pglite");
  });
  afterAll(async () => {
    await server?.close();
    await owner.close();
  });

  it("http.cors replaces devmind's CORS rules (an origin regex; the headers clients read stay exposed); a disabled group answers 404", async () => {
    server = await startTestServer(owner, [], { workers: 0 });
    const settings = { app: null, disabled: ["assistants" as const], cors: { allowOriginRegex: "^https://[a-z]+\\.example$", exposeHeaders: ["X-Trace"], allowCredentials: true, maxAge: 42 } };
    const app = createApp({ runtime: server.runtime, config: server.config, http: { settings, app: null } });
    const preflight = await app.request("/threads/search", { method: "OPTIONS", headers: { origin: "https://ui.example", "access-control-request-method": "POST" } });
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://ui.example");
    expect(preflight.headers.get("access-control-allow-credentials")).toBe("true");
    expect(preflight.headers.get("access-control-max-age")).toBe("42");
    const foreign = await app.request("/threads/search", { method: "OPTIONS", headers: { origin: "https://evil.test", "access-control-request-method": "POST" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    const answered = await app.request("/info", { headers: { origin: "https://ui.example" } });
    expect(answered.headers.get("access-control-expose-headers")?.split(",")).toEqual(["x-trace", "content-location", "location", "x-request-id"]);
    const key = { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" };
    expect((await app.request("/assistants/search", { method: "POST", headers: key, body: "{}" })).status).toBe(404);
    expect((await app.request("/assistants/search", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
    expect((await app.request("/threads/search", { method: "POST", headers: key, body: "{}" })).status).toBe(200);
  });
});

describe("devmind serve refuses what it cannot honour, before anything opens", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const project = (config: unknown): { dir: string; path: string } => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-serve-refuse-")));
    dirs.push(dir);
    const path = join(dir, "langgraph.json");
    writeFileSync(path, JSON.stringify(config));
    return { dir, path };
  };
  const graphs = { logged: join(PLATFORM, "logged.ts:graph") };

  it("http keys it does not implement: exit 2 naming each key; other commands still load the graphs", async () => {
    const { dir, path } = project({ graphs, auth: { path: "./auth.ts:auth" }, http: { mount_prefix: "/api" } });
    const result = await runCli(["serve", "--config", path, "--port", "0"], { DEVMIND_DATA_DIR: join(dir, "data") }, { timeoutMs: 120_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"http\.mount_prefix" is not supported by devmind serve/);
    const listed = await runCli(["graphs", "--config", path], {}, { timeoutMs: 120_000 });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^logged\s+.*loaded \(compiled\)$/m);
  }, 180_000);

  it("an auth handler that fails to load: exit 2 naming auth.path and the file", async () => {
    const { dir, path } = project({ graphs, auth: { path: "./auth.mts:auth" } });
    writeFileSync(join(dir, "auth.mts"), "export const auth = { notAnAuth: true };\n");
    const result = await runCli(["serve", "--config", path, "--port", "0"], { DEVMIND_DATA_DIR: join(dir, "data") }, { timeoutMs: 120_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/auth\.path \.\/auth\.mts:auth \(.*auth\.mts\): the export auth is not an Auth/);
  }, 180_000);

  it("an http.app that is not a Hono app: exit 2 naming http.app and the file", async () => {
    const { dir, path } = project({ graphs, http: { app: `${join(PLATFORM, "logged.ts")}:graph` } });
    const result = await runCli(["serve", "--config", path, "--port", "0"], { DEVMIND_DATA_DIR: join(dir, "data") }, { timeoutMs: 120_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/http\.app \(.*logged\.ts\): the export graph is not a Hono app/);
  }, 180_000);
});
