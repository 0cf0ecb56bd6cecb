import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { RunCancelledError } from "../../src/errors.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { AttachmentStore } from "../../src/runtime/attachments/attachment-store.js";
import type { EventRecord } from "../helpers/events.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { builtinTools, type ImageSettings } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolResult } from "../../src/tools/types.js";
import { ensureWorkspace } from "../../src/tools/workspace.js";
import { BACKENDS, freshMigratedSchema, itOnPrimary, openBackend } from "../helpers/databases.js";
import { OpenAiTestServer, TINY_PNG_B64, errorReply, imagesReply, slowReply } from "../helpers/openai-server.js";

const KEY = "sk-image-test-key-0123456789abcdef";
const OPENAI_KEY = "sk-openai-fallback-key-0123456789";

interface ImageData {
  images: { id: string; name: string; mime_type: string; size: number; url: string }[];
  revised_prompt?: string;
}

describe.each(BACKENDS)("gen_image on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let store: AttachmentStore;
  let server: OpenAiTestServer;
  let base: string;
  let ws: string;
  let calls = 0;
  const runtimes: Runtime[] = [];

  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    store = new AttachmentStore(db);
    server = new OpenAiTestServer();
    await server.start();
  });
  afterAll(async () => {
    await server.close();
    await drop();
    await owner.close();
  });
  beforeEach(async () => {
    server.reset();
    base = await realpath(await mkdtemp(join(tmpdir(), "devmind-img-")));
    ws = await ensureWorkspace(join(base, "workspace"));
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    await rm(base, { recursive: true, force: true });
  });

  function registryWith(settings: Partial<ImageSettings> = {}): ToolRegistry {
    const image: ImageSettings = { model: "dall-e-3", baseUrl: server.baseUrl, apiKey: KEY, timeoutMs: 2_000, ...settings };
    return new ToolRegistry(builtinTools({ workspace: ws, attachments: store, image }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 12_000 });
  }

  function generate(args: Record<string, unknown>, options: { registry?: ToolRegistry; signal?: AbortSignal; runId?: string } = {}): Promise<ToolResult> {
    calls += 1;
    return (options.registry ?? registryWith()).execute(
      { id: `img_${calls}`, name: "gen_image", args },
      { runId: options.runId ?? "run-images", threadId: "thread-images", ...(options.signal === undefined ? {} : { signal: options.signal }) },
    );
  }

  async function rowCount(): Promise<number> {
    return Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${db.schema}".attachments`)).rows[0]?.n);
  }

  it("calls the images API with the model, prompt, size and key, and stores the image", async () => {
    server.enqueueImages(imagesReply([TINY_PNG_B64], { revisedPrompt: "a small red fox, watercolour" }));
    const result = await generate({ prompt: "a fox", size: "512x512" });
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, error: null, truncated: false });
    const data = result.data as ImageData;
    const png = Buffer.from(TINY_PNG_B64, "base64");
    expect(data).toEqual({
      images: [{ id: expect.any(String), name: "image-1.png", mime_type: "image/png", size: png.length, url: `/files/${data.images[0]?.id}` }],
      revised_prompt: "a small red fox, watercolour",
    });
    expect(server.imageRequests).toHaveLength(1);
    expect(server.imageRequests[0]?.authorization).toBe(`Bearer ${KEY}`);
    expect(server.imageRequests[0]?.headers["content-type"]).toBe("application/json");
    expect(server.imageRequests[0]?.body).toEqual({ model: "dall-e-3", prompt: "a fox", n: 1, size: "512x512", response_format: "b64_json" });
    const stored = await store.get(data.images[0]!.id);
    expect(Buffer.compare(stored!.bytes, png)).toBe(0);
    expect(stored?.info).toMatchObject({ run_id: "run-images", thread_id: "thread-images", tool_call_id: `img_${calls}`, part: 0, mime_type: "image/png" });
    expect(server.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(0);
  });

  itOnPrimary(backend)("asks for 1024x1024 by default, and leaves response_format out for gpt-image models", async () => {
    server.enqueueImages(imagesReply(), imagesReply([TINY_PNG_B64, TINY_PNG_B64]));
    expect((await generate({ prompt: "a cat" })).ok).toBe(true);
    const two = await generate({ prompt: "two cats", size: "auto" }, { registry: registryWith({ model: "gpt-image-1" }) });
    expect(server.imageRequests.map((r) => r.body)).toEqual([
      { model: "dall-e-3", prompt: "a cat", n: 1, size: "1024x1024", response_format: "b64_json" },
      { model: "gpt-image-1", prompt: "two cats", n: 1, size: "auto" },
    ]);
    // every image of the answer is its own attachment (part 0, 1) with its own id
    const images = (two.data as ImageData).images;
    expect(images.map((i) => i.name)).toEqual(["image-1.png", "image-2.png"]);
    expect(new Set(images.map((i) => i.id)).size).toBe(2);
    expect("revised_prompt" in (two.data as object)).toBe(false);
  });

  itOnPrimary(backend)("maps a 400 to TOOL_FAILED with the server's message and never the key", async () => {
    server.enqueueImages(errorReply(400, "Your request was rejected as a result of our safety system."), errorReply(400, `Invalid request (key ${KEY} / Bearer ${KEY})`));
    const before = await rowCount();
    expect(await generate({ prompt: "something" })).toEqual({
      ok: false,
      tool: "gen_image",
      data: null,
      error: { code: "TOOL_FAILED", message: "the image API refused the request (HTTP 400): Your request was rejected as a result of our safety system." },
    });
    const echoed = await generate({ prompt: "something else" });
    expect(echoed.ok).toBe(false);
    expect(JSON.stringify(echoed)).not.toContain(KEY);
    expect(echoed.error?.message).toBe("the image API refused the request (HTTP 400): Invalid request (key [REDACTED] / Bearer [REDACTED])");
    expect(await rowCount()).toBe(before);
  });

  itOnPrimary(backend)("maps 401, 429 and 500 to TOOL_FAILED with a clear message", async () => {
    server.enqueueImages(errorReply(401, "Incorrect API key provided"), errorReply(429, "Rate limit reached"), errorReply(500, "upstream exploded"), { kind: "status", status: 502, body: "<html>bad gateway</html>" });
    const messages = [];
    for (let i = 0; i < 4; i += 1) messages.push((await generate({ prompt: `p${i}` })).error);
    expect(messages).toEqual([
      { code: "TOOL_FAILED", message: "the image API rejected the credentials (HTTP 401): Incorrect API key provided" },
      { code: "TOOL_FAILED", message: "the image API is rate limiting or out of quota (HTTP 429): Rate limit reached; try again later" },
      { code: "TOOL_FAILED", message: "the image API failed (HTTP 500): upstream exploded; try again later" },
      { code: "TOOL_FAILED", message: 'the image API failed (HTTP 502): "<html>bad gateway</html>"; try again later' },
    ]);
  });

  itOnPrimary(backend)("reports an answer without image data, and refuses sizes the API does not know before calling it", async () => {
    server.enqueueImages({ kind: "images", data: [{ url: "https://example.invalid/x.png" }] });
    expect((await generate({ prompt: "p" })).error).toEqual({ code: "TOOL_FAILED", message: "the image API returned no image data (expected data[].b64_json)" });
    const invalid = await generate({ prompt: "p", size: "999x999" });
    expect(invalid.error?.code).toBe("INVALID_ARGUMENTS");
    expect(invalid.error?.message).toContain("size");
    expect(await generate({ prompt: "" })).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
    expect(server.imageRequests).toHaveLength(1);
  });

  itOnPrimary(backend)("times out a slow API with TOOL_TIMEOUT and stores nothing", async () => {
    server.enqueueImages(slowReply(3_000, imagesReply()));
    const before = await rowCount();
    const result = await generate({ prompt: "slow" }, { registry: registryWith({ timeoutMs: 300 }) });
    expect(result).toMatchObject({ ok: false, error: { code: "TOOL_TIMEOUT" } });
    expect(server.imageRequests).toHaveLength(1);
    expect(await rowCount()).toBe(before);
  });

  itOnPrimary(backend)("stops at the run's cancel signal and stores nothing", async () => {
    server.enqueueImages(slowReply(3_000, imagesReply()));
    const before = await rowCount();
    const cancel = new AbortController();
    const running = generate({ prompt: "cancel me" }, { signal: cancel.signal });
    const deadline = Date.now() + 5_000;
    while (server.imageRequests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    cancel.abort();
    await expect(running).rejects.toBeInstanceOf(RunCancelledError);
    expect(await rowCount()).toBe(before);
  });

  itOnPrimary(backend)("is not registered unless an image model is configured", async () => {
    expect(builtinTools({ workspace: ws, attachments: store }).map((t) => t.name)).not.toContain("gen_image");
    expect(builtinTools({ workspace: ws, attachments: store, image: null }).map((t) => t.name)).not.toContain("gen_image");
    const tool = builtinTools({ workspace: ws, attachments: store, image: { model: "m" } }).find((t) => t.name === "gen_image");
    expect([tool?.sideEffect, tool?.approval, tool?.idempotent]).toEqual(["external", false, false]);
    // through the runtime: without DEVMIND_IMAGE_MODEL the model's call finds no such tool
    const model = new ScriptedChatModel([{ tool_calls: [{ id: "g", name: "gen_image", args: { prompt: "x" } }] }, { content: "no images here" }]);
    const runtime = createRuntime({ db, model, config: loadConfig({ DEVMIND_WORKSPACE: ws, DEVMIND_MODEL_MAX_RETRIES: "0" }) });
    runtimes.push(runtime);
    const created = await runtime.runs.create({ input: { messages: ["draw"] } });
    expect((await runtime.runs.execute(created.run_id)).status).toBe("success");
    const answer = JSON.parse(String((model.calls[1]?.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage).content));
    expect(answer.error.code).toBe("TOOL_NOT_FOUND");
    expect(server.imageRequests).toHaveLength(0);
  });

  it("through the runtime: configured from the environment, the key is sent but never stored", async () => {
    const turns: ScriptedTurn[] = [{ tool_calls: [{ id: "g1", name: "gen_image", args: { prompt: "a lighthouse", size: "256x256" } }] }, { content: "here it is" }];
    const cases = [
      { env: { DEVMIND_IMAGE_MODEL: "dall-e-2", DEVMIND_IMAGE_BASE_URL: server.baseUrl, DEVMIND_IMAGE_API_KEY: KEY }, sent: KEY },
      // base URL and key fall back to the OpenAI ones
      { env: { DEVMIND_IMAGE_MODEL: "dall-e-2", OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: OPENAI_KEY }, sent: OPENAI_KEY },
    ];
    for (const { env, sent } of cases) {
      server.reset();
      server.enqueueImages(imagesReply());
      const model = new ScriptedChatModel(turns);
      const runtime = createRuntime({ db, model, config: loadConfig({ DEVMIND_WORKSPACE: ws, DEVMIND_MODEL_MAX_RETRIES: "0", ...env }) });
      runtimes.push(runtime);
      const created = await runtime.runs.create({ input: { messages: ["draw a lighthouse"] } });
      const run = await runtime.runs.execute(created.run_id);
      expect(run).toMatchObject({ status: "success", answer: "here it is", tool_calls: 1 });
      expect(server.imageRequests.map((r) => [r.authorization, (r.body as { model: string }).model])).toEqual([[`Bearer ${sent}`, "dall-e-2"]]);
      const attachments = await store.listForRun(created.run_id);
      expect(attachments.map((a) => [a.tool_call_id, a.name, a.mime_type])).toEqual([["g1", "image-1.png", "image/png"]]);
      const events: EventRecord[] = [];
      for await (const event of runtime.runs.events(created.run_id)) events.push(event);
      expect(events.filter((e) => e.type.startsWith("tool.call.")).map((e) => [e.type, e["tool"]])).toEqual([
        ["tool.call.started", "gen_image"],
        ["tool.call.finished", "gen_image"],
      ]);
      expect(JSON.stringify(events)).not.toContain(sent);
      // no table of the schema holds the key, in any column
      const tables = (await db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [db.schema])).rows;
      expect(tables.map((t) => t.table_name)).toContain("attachments");
      for (const { table_name } of tables) {
        const hits = await db.query(`SELECT 1 FROM "${db.schema}"."${table_name}" AS t WHERE strpos(t::text, $1) > 0 LIMIT 1`, [sent]);
        expect(hits.rows, `${table_name} holds the key`).toEqual([]);
      }
    }
  });
});
