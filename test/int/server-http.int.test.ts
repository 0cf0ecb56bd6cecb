import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { hasErrorCode } from "../../src/errors.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { AttachmentStore } from "../../src/runtime/attachments/attachment-store.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { startServer } from "../../src/server/start-server.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { readSse } from "../helpers/server-sse.js";

const WRITE_SCRIPT: ScriptedTurn[] = [
  { tool_calls: [{ id: "call_write", name: "write_file", args: { path: "notes.txt", content: "n" } }] },
  { content: "done" },
];

type Json = Record<string, unknown>;

describe.each(BACKENDS)("HTTP API on %s: auth, errors, devmind routes", (backend) => {
  let owner: Database;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const start = async (turns: ScriptedTurn[] = WRITE_SCRIPT, options: { workers?: number; apiKeys?: string; heartbeatMs?: number } = {}): Promise<TestServer> => {
    const server = await startTestServer(owner, turns, options);
    servers.push(server);
    return server;
  };
  // `body` is the JSON answer ({} for none or for text: the LangGraph routes' refusals are plain text, in `text`)
  const call = async (server: TestServer, path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}): Promise<{ status: number; body: Json; text: string; headers: Headers }> => {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set("x-api-key", init.key ?? TEST_KEYS.alice);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    const response = await fetch(`${server.url}${path}`, { ...init, headers, ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }) });
    const text = await response.text();
    const json = (response.headers.get("content-type") ?? "").includes("application/json");
    return { status: response.status, body: text === "" || !json ? {} : (JSON.parse(text) as Json), text, headers: response.headers };
  };
  const waitForStatus = async (server: TestServer, runId: string, status: string, stopReason?: string): Promise<Json> => {
    // bounded by time, not by a count of polls: a loaded machine makes each poll slow
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      const run = await call(server, `/runs/${runId}`);
      if (run.body["status"] === status && (stopReason === undefined || run.body["stop_reason"] === stopReason)) return run.body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${runId} never reached ${status}`);
  };

  itOnPrimary(backend)("GET /ok, /info and the page need no key; the API answers 401 without one, 403 with a wrong one", async () => {
    const server = await start(WRITE_SCRIPT, { workers: 0 });
    expect(await call(server, "/ok", { key: null })).toMatchObject({ status: 200, body: { ok: true } });
    const info = await call(server, "/info", { key: null });
    expect(info).toMatchObject({ status: 200, body: { name: "devmind", graphs: ["agent"], auth: "api_key" } });
    expect(JSON.stringify(info.body)).not.toContain(TEST_KEYS.alice);
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect(await call(server, "/threads/search", { method: "POST", json: {}, key: null })).toMatchObject({ status: 401, body: { error: "UNAUTHORIZED" } });
    expect(await call(server, "/health", { key: "not-a-key" })).toMatchObject({ status: 403, body: { error: "FORBIDDEN" } });
    expect(await call(server, "/approvals", { key: null, headers: { authorization: `Bearer ${TEST_KEYS.alice}x` } })).toMatchObject({ status: 403 });
    expect(await call(server, "/health", { key: null, headers: { authorization: `Bearer ${TEST_KEYS.bob}` } })).toMatchObject({ status: 200, body: { ok: true, database: "ok" } });
    const missing = await call(server, "/nope");
    expect(missing).toMatchObject({ status: 404, body: { error: "NOT_FOUND" } });
    expect(missing.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  itOnPrimary(backend)("CORS: a preflight allows the headers the SDK sends; responses expose Content-Location and Location", async () => {
    const server = await start([{ content: "hi" }]);
    const preflight = await fetch(`${server.url}/threads/abc/runs/stream`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key,content-type,last-event-id" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["x-api-key", "authorization", "content-type", "last-event-id"]));
    const thread = await call(server, "/threads", { method: "POST", json: {}, headers: { origin: "http://localhost:3000" } });
    const created = await call(server, `/threads/${String(thread.body["thread_id"])}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["hi"] } }, headers: { origin: "http://localhost:3000" } });
    expect(created.status).toBe(200);
    expect(created.headers.get("content-location")).toBe(`/threads/${String(thread.body["thread_id"])}/runs/${String(created.body["run_id"])}`);
    const exposed = (created.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    expect(exposed).toContain("content-location");
    expect(exposed).toContain("location");
  });

  itOnPrimary(backend)("bad input on the LangGraph routes, as the official server answers it: 400 malformed JSON and schema failures, 422 refused input, 404 unknown ids, 413 oversized bodies; nothing is created", async () => {
    const server = await start([{ content: "hi" }], { workers: 0 });
    const thread = await call(server, "/threads", { method: "POST", json: {} });
    const tid = String(thread.body["thread_id"]);
    const zod = (path: (string | number)[]) => ({ status: 400, body: { success: false, error: { name: "ZodError", issues: expect.arrayContaining([expect.objectContaining({ path, message: expect.any(String) })]) } } });
    const text = (status: number, message: string | ReturnType<typeof expect.stringContaining>) => ({ status, text: message, body: {} });
    const bad = await fetch(`${server.url}/threads/${tid}/runs`, { method: "POST", headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" }, body: "{not json" });
    expect([bad.status, await bad.text()]).toEqual([400, "Malformed JSON in request body"]);
    // the agent's own input check (its run hooks): a refused input, 422, naming what it takes
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: "hi" } } })).toMatchObject(text(422, expect.stringContaining('{ "messages": [...] }')));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent" } })).toMatchObject(text(422, expect.stringContaining("input is required: the thread has no checkpoint to continue from")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: [{ role: "wizard", content: "x" }] } } })).toMatchObject(text(422, expect.stringContaining("message 0")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["x"] }, checkpoint_id: "1f0c0000-0000-6000-8000-000000000000" } })).toMatchObject(text(404, expect.stringContaining("no checkpoint")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["x"] }, limits: { maxModelRounds: 0 } } })).toMatchObject(text(422, expect.stringContaining("maxModelRounds")));
    expect(await call(server, `/threads/${tid}/runs/stream`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["x"] }, stream_mode: ["bogus"] } })).toMatchObject(text(422, expect.stringContaining("bogus")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "someone-else", input: { messages: ["x"] } } })).toMatchObject(
      text(404, 'No assistant found for "someone-else". Make sure the assistant ID is for a valid assistant or a valid graph ID.'),
    );
    expect(await call(server, `/threads/no-such-thread/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["x"] } } })).toMatchObject(text(404, "Thread with ID no-such-thread not found"));
    // devmind's own routes keep {error, message}
    expect(await call(server, `/runs/00000000-0000-4000-8000-000000000000`)).toMatchObject({ status: 404, body: { error: "RUN_NOT_FOUND" } });
    expect(await call(server, `/runs/not-a-uuid/events`)).toMatchObject({ status: 404, body: { error: "RUN_NOT_FOUND" } });
    expect(await call(server, `/threads/${tid}/history`, { method: "POST", json: { limit: 0 } })).toMatchObject(zod(["limit"]));
    expect(await call(server, `/threads/${tid}/history`, { method: "POST", json: { before: "a\u0000b" } })).toMatchObject({ status: 400, body: { success: false, error: { name: "ZodError" } } });
    expect(await call(server, `/threads/${tid}/state/%00`)).toMatchObject({ status: 400, body: { success: false, error: { name: "ZodError" } } });
    expect(await call(server, `/threads/${tid}/state/no-such-checkpoint`)).toMatchObject({ status: 404 });
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: [{ type: "tool", content: "x" }] } } })).toMatchObject(text(422, expect.stringContaining("tool_call_id")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: [{ type: "human", content: { a: 1 } }] } } })).toMatchObject(text(422, expect.stringContaining("content")));
    expect(await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", command: { resume: { decisions: [{ type: "approve" }] } } } })).toMatchObject(text(409, expect.stringContaining("has no interrupted run to resume")));
    expect(await call(server, "/threads/search", { method: "POST", json: { limit: "ten" } })).toMatchObject(zod(["limit"]));
    expect(await call(server, "/approvals?status=done")).toMatchObject({ status: 422, body: { error: "REQUEST_INVALID" } });
    const huge = await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["x".repeat(1_100_000)] } } });
    expect(huge).toMatchObject(text(413, expect.stringContaining("larger than")));
    expect(await server.runtime.runs.list()).toEqual([]);
  });

  it("decisions record the key's name; /approvals lists waiting calls; /runs/{id} is the full record", async () => {
    const server = await start();
    const thread = await call(server, "/threads", { method: "POST", json: { metadata: { by: "test" } }, key: TEST_KEYS.bob });
    const tid = String(thread.body["thread_id"]);
    const created = await call(server, `/threads/${tid}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: [{ role: "user", content: "write notes" }] } }, key: TEST_KEYS.bob });
    const runId = String(created.body["run_id"]);
    // the Platform's model: the run ends at the interrupt, its thread waits on it
    expect(await waitForStatus(server, runId, "success", "interrupt")).toMatchObject({ waiting: true });
    const approvals = await call(server, "/approvals?status=pending");
    expect(approvals.body).toEqual({
      approvals: [
        {
          run_id: runId,
          thread_id: tid,
          graph_id: "agent",
          created_at: expect.any(String),
          updated_at: expect.any(String),
          requests: [expect.objectContaining({ name: "write_file", tool_call_id: "call_write", args: { path: "notes.txt", content: "n" } })],
          interrupts: [],
        },
      ],
    });
    expect(await call(server, `/runs/${runId}/decisions`, { method: "POST", json: { decisions: [{ type: "maybe" }] }, key: TEST_KEYS.bob })).toMatchObject({ status: 422, body: { error: "RUN_INPUT_INVALID" } });
    const decided = await call(server, `/runs/${runId}/decisions`, { method: "POST", json: { decisions: [{ type: "approve", tool_call_id: "call_write" }], reason: "looks fine" }, key: TEST_KEYS.bob });
    expect(decided.status).toBe(200);
    // every call decided: the answer is the new run that resumes the thread
    const resumedId = String(decided.body["run_id"]);
    expect(resumedId).not.toBe(runId);
    expect(decided.body).toMatchObject({ resumes_run: runId, thread_id: tid });
    const record = await waitForStatus(server, resumedId, "success", "completed");
    expect(record).toMatchObject({ run_id: resumedId, resumes_run: runId, waiting: false, thread_id: tid, status: "success", stop_reason: "completed", answer: "done", model_rounds: 2, tool_calls: 1, usage: { input_tokens: 0, output_tokens: 0 }, error: null });
    expect(Object.keys(record)).toEqual(expect.arrayContaining(["attempt", "created_at", "updated_at"]));
    // the run keeps its input as the client sent it (the agent reads it when it runs), as LangGraph Platform does
    expect((await call(server, `/runs/${runId}`)).body["input"]).toEqual({ messages: [{ role: "user", content: "write notes" }] });
    const listed = await call(server, "/runs?limit=10&status=success");
    expect((listed.body as unknown as Json[]).map((r) => [r["run_id"], r["status"], r["stop_reason"]])).toEqual([
      [resumedId, "success", "completed"],
      [runId, "success", "interrupt"],
    ]);
    expect(await call(server, "/runs?status=odd")).toMatchObject({ status: 422 });
    const rows = await server.db.query<{ principal: string; reason: string | null; decision: string }>(`SELECT principal, reason, decision FROM "${server.db.schema}".run_decisions WHERE run_id = $1`, [runId]);
    expect(rows.rows).toEqual([{ principal: "bob", reason: "looks fine", decision: "approve" }]);
    expect(await call(server, `/runs/${runId}/decisions`, { method: "POST", json: { decisions: [{ type: "approve" }] } })).toMatchObject({ status: 409, body: { error: "RUN_CONFLICT" } });
    expect((await call(server, "/approvals")).body).toEqual({ approvals: [] });
  });

  itOnPrimary(backend)("GET /runs/{id}/events: SSE of the run's events with seq ids, resumable with Last-Event-ID", async () => {
    const server = await start([{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 2 } }] }, { content: "four" }]);
    const thread = await call(server, "/threads", { method: "POST", json: {} });
    const created = await call(server, `/threads/${String(thread.body["thread_id"])}/runs`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["2+2"] } } });
    const runId = String(created.body["run_id"]);
    const live = await fetch(`${server.url}/runs/${runId}/events`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(live.headers.get("content-type")).toContain("text/event-stream");
    const all = (await readSse(live)).filter((e) => e.id !== undefined);
    const steps = all.filter((e) => !String(e.event).startsWith("node."));
    expect(steps.map((e) => e.event)).toEqual(["run.created", "run.started", "model.started", "model.finished", "tool.call.started", "tool.call.finished", "model.started", "model.finished", "run.succeeded"]);
    expect(all.map((e) => e.id)).toEqual(all.map((_e, i) => String(i + 1)));
    expect(all.every((e) => (e.data as { seq: number; type: string }).type === e.event)).toBe(true);
    const total = all.length;
    const resumed = await readSse(await fetch(`${server.url}/runs/${runId}/events`, { headers: { "x-api-key": TEST_KEYS.alice, "last-event-id": "4" } }));
    expect(resumed.map((e) => e.id)).toEqual(all.slice(4).map((e) => e.id));
    const stored = await readSse(await fetch(`${server.url}/runs/${runId}/events?after=${total - 2}&follow=0`, { headers: { "x-api-key": TEST_KEYS.alice } }));
    expect(stored.map((e) => e.event)).toEqual(all.slice(-2).map((e) => e.event));
    expect(stored.at(-1)?.event).toBe("run.succeeded");
  });

  itOnPrimary(backend)("open streams send heartbeat comments while the run is quiet", async () => {
    const server = await start([{ content: "late", delay_ms: 700 }], { heartbeatMs: 100 });
    const thread = await call(server, "/threads", { method: "POST", json: {} });
    const response = await fetch(`${server.url}/threads/${String(thread.body["thread_id"])}/runs/stream`, {
      method: "POST",
      headers: { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "agent", input: { messages: ["hi"] }, stream_mode: ["values"] }),
    });
    expect(response.headers.get("location")).toMatch(/\/stream\?stream_mode=values$/);
    const text = await response.text();
    expect(text.split("\n").filter((line) => line === ": heartbeat").length).toBeGreaterThan(0);
    expect(text).toContain('"late"');
  });

  itOnPrimary(backend)("GET /files/{id}: the bytes with their type, a safe disposition and nosniff; 404 for unknown ids", async () => {
    const server = await start([{ content: "x" }], { workers: 0 });
    const store = new AttachmentStore(server.db);
    const png = await store.put({ toolCallId: "t1", name: "chart one.png", mimeType: "image/png", bytes: new Uint8Array([137, 80, 78, 71, 1, 2, 3]) });
    const html = await store.put({ toolCallId: "t2", name: "page.html", mimeType: "text/html", bytes: new TextEncoder().encode("<script>alert(1)</script>") });
    const image = await fetch(`${server.url}/files/${png.id}`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("content-disposition")).toBe(`inline; filename="chart one.png"; filename*=UTF-8''chart%20one.png`);
    expect([...new Uint8Array(await image.arrayBuffer())]).toEqual([137, 80, 78, 71, 1, 2, 3]);
    const page = await fetch(`${server.url}/files/${html.id}`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(page.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(page.headers.get("content-security-policy")).toContain("sandbox");
    expect((await fetch(`${server.url}/files/${png.id}`)).status).toBe(401);
    expect(await call(server, "/files/00000000-0000-4000-8000-000000000000")).toMatchObject({ status: 404, body: { error: "NOT_FOUND" } });
    expect(await call(server, "/files/..%2F..%2Fetc%2Fpasswd")).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("without keys: open on loopback with the anonymous principal; a non-loopback host is refused", async () => {
    const server = await start(WRITE_SCRIPT, { apiKeys: "" });
    const thread = await call(server, "/threads", { method: "POST", json: {}, key: null });
    const created = await call(server, `/threads/${String(thread.body["thread_id"])}/runs/wait`, { method: "POST", json: { assistant_id: "agent", input: { messages: ["write"] } }, key: null });
    expect(created.status).toBe(200);
    const [run] = await server.runtime.runs.list();
    expect(run).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect(await call(server, `/runs/${run?.run_id}/decisions`, { method: "POST", json: { decisions: [{ type: "reject", message: "no" }] }, key: null })).toMatchObject({ status: 200 });
    const rows = await server.db.query<{ principal: string }>(`SELECT principal FROM "${server.db.schema}".run_decisions`);
    expect(rows.rows.map((r) => r.principal)).toEqual(["anonymous"]);

    const config = loadConfig({ DEVMIND_WORKSPACE: server.workspace });
    const runtime = createRuntime({ db: server.db, config });
    const refused = await startServer({ runtime, config, host: "0.0.0.0", port: 0, workers: 0 }).catch((error: unknown) => error);
    expect(hasErrorCode(refused, "CONFIG_INVALID")).toBe(true);
    expect(String((refused as Error).message)).toContain("DEVMIND_API_KEYS");
    const taken = await startServer({ runtime, config, host: "127.0.0.1", port: server.server.port, workers: 0 }).catch((error: unknown) => error);
    expect(hasErrorCode(taken, "CONFIG_INVALID")).toBe(true);
    expect(String((taken as Error).message)).toContain("EADDRINUSE");
    await runtime.close();
  });
});
