import { createHash } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ATTACHMENT_LIMITS } from "../../src/constants.js";
import type { Database } from "../../src/db/types.js";
import { DevmindError } from "../../src/errors.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { AttachmentStore } from "../../src/runtime/attachments/attachment-store.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ensureWorkspace } from "../../src/tools/workspace.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe.each(BACKENDS)("attachments on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let base: string;
  let ws: string;
  let store: AttachmentStore;
  const runtimes: Runtime[] = [];

  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    store = new AttachmentStore(db);
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "devmind-att-")));
    ws = await ensureWorkspace(join(base, "workspace"));
    await mkdir(join(base, "outside"));
    await writeFile(join(base, "outside", "secret.txt"), "top secret");
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    await rm(base, { recursive: true, force: true });
  });

  function runtimeWith(turns: ScriptedTurn[]): { runtime: Runtime; model: ScriptedChatModel } {
    const model = new ScriptedChatModel(turns);
    const runtime = createRuntime({ db, model, config: loadConfig({ DEVMIND_WORKSPACE: ws, DEVMIND_MODEL_MAX_RETRIES: "0" }) });
    runtimes.push(runtime);
    return { runtime, model };
  }

  function registryWith(attachments: AttachmentStore | undefined = store): ToolRegistry {
    return new ToolRegistry(builtinTools({ workspace: ws, attachments }), { workspace: ws, defaultTimeoutMs: 5_000, maxOutputChars: 12_000 });
  }

  async function rowCount(): Promise<number> {
    return Number((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${db.schema}".attachments`)).rows[0]?.n);
  }

  it("send_file through the runtime stores the file durably and answers with its url", async () => {
    const content = "city,population\nLyon,522000\n";
    await writeFile(join(ws, "report.csv"), content);
    const { runtime, model } = runtimeWith([{ tool_calls: [{ id: "s1", name: "send_file", args: { path: "report.csv" } }] }, { content: "sent" }]);
    const created = await runtime.runs.create({ input: { messages: ["send me the report"] } });
    const run = await runtime.runs.execute(created.run_id);
    expect(run).toMatchObject({ status: "success", stop_reason: "completed", answer: "sent", tool_calls: 1 });

    const listed = await store.listForRun(created.run_id);
    expect(listed).toHaveLength(1);
    const info = listed[0]!;
    expect(info).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      run_id: created.run_id,
      thread_id: created.thread_id,
      tool_call_id: "s1",
      part: 0,
      name: "report.csv",
      mime_type: "text/csv; charset=utf-8",
      size: Buffer.byteLength(content),
      sha256: sha256(Buffer.from(content)),
      url: `/files/${info.id}`,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    // the row itself, as stored
    const row = (await db.query<{ size: string; len: number; sha256: string; digest: string }>(
      `SELECT size::text, octet_length(bytes) AS len, sha256, encode(sha256(bytes), 'hex') AS digest FROM "${db.schema}".attachments WHERE id = $1::uuid`,
      [info.id],
    )).rows[0];
    expect(row).toEqual({ size: String(Buffer.byteLength(content)), len: Buffer.byteLength(content), sha256: info.sha256, digest: info.sha256 });

    // what the model saw: the envelope with the attachment and its url
    const toolMessage = model.calls[1]?.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(JSON.parse(String(toolMessage.content))).toEqual({
      ok: true,
      tool: "send_file",
      data: { id: info.id, name: "report.csv", mime_type: "text/csv; charset=utf-8", size: Buffer.byteLength(content), url: `/files/${info.id}` },
      error: null,
      truncated: false,
    });

    const fetched = await store.get(info.id);
    expect(fetched?.info).toEqual(info);
    expect(fetched?.bytes.toString("utf8")).toBe(content);
    expect(await store.info(info.id)).toEqual(info);
  });

  it("keeps binary bytes exactly, and finds nothing for unknown or malformed ids", async () => {
    await writeFile(join(ws, "blob.bin"), ALL_BYTES);
    const result = await registryWith().execute({ id: "b1", name: "send_file", args: { path: "blob.bin" } }, { runId: "run-binary", threadId: "thread-binary" });
    expect(result).toMatchObject({ ok: true, data: { name: "blob.bin", mime_type: "application/octet-stream", size: 256 } });
    const id = (result.data as { id: string }).id;
    const fetched = await store.get(id);
    expect(Buffer.compare(fetched!.bytes, ALL_BYTES)).toBe(0);
    expect(fetched?.info.sha256).toBe(sha256(ALL_BYTES));
    for (const bad of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", "", "'; DROP TABLE attachments; --", `${id}x`, id.slice(0, -1), "x".repeat(5_000), `${id}\0`]) {
      expect(await store.get(bad)).toBeUndefined();
      expect(await store.info(bad)).toBeUndefined();
    }
    expect(await store.get(undefined as unknown as string)).toBeUndefined();
    expect(await store.listForRun("no-such-run")).toEqual([]);
    expect((await store.get(id.toUpperCase()))?.info.id).toBe(id);
  });

  it("returns the same attachment when the same call of a run runs again", async () => {
    const registry = registryWith();
    await writeFile(join(ws, "notes.md"), "# first");
    const before = await rowCount();
    const context = { runId: "run-again", threadId: "thread-again" };
    const first = await registry.execute({ id: "c1", name: "send_file", args: { path: "notes.md" } }, context);
    await writeFile(join(ws, "notes.md"), "# changed since");
    const second = await registry.execute({ id: "c1", name: "send_file", args: { path: "notes.md" } }, context);
    expect(first.ok && second.ok).toBe(true);
    expect(second.data).toEqual(first.data);
    expect(await rowCount()).toBe(before + 1);
    expect((await store.get((first.data as { id: string }).id))?.bytes.toString()).toBe("# first");
    // another call, or another run, is another attachment
    const other = await registry.execute({ id: "c2", name: "send_file", args: { path: "notes.md" } }, context);
    const elsewhere = await registry.execute({ id: "c1", name: "send_file", args: { path: "notes.md" } }, { runId: "run-other" });
    expect(new Set([first, other, elsewhere].map((r) => (r.data as { id: string }).id)).size).toBe(3);
    expect((await store.listForRun("run-again")).map((a) => a.tool_call_id)).toEqual(["c1", "c2"]);
    // deleting the thread's attachments takes exactly those
    expect(await store.deleteForThread("thread-again")).toBe(2);
    expect(await store.get((first.data as { id: string }).id)).toBeUndefined();
    expect((await store.get((elsewhere.data as { id: string }).id))?.info.run_id).toBe("run-other");
    expect(await store.deleteForThread("thread-again")).toBe(0);
  });

  it("refuses paths outside the workspace, directories and files over the limit, storing nothing", async () => {
    const registry = registryWith();
    const before = await rowCount();
    const send = (path: string) => registry.execute({ id: `p-${path}`, name: "send_file", args: { path } }, { runId: "run-refuse" });
    expect(registry.check({ id: "x", name: "send_file", args: { path: "../outside/secret.txt" } })).toEqual({ kind: "denied", reason: 'path "../outside/secret.txt" is outside the workspace' });
    expect(await send("../outside/secret.txt")).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    expect(await send(join(base, "outside", "secret.txt"))).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    await symlink(join(base, "outside", "secret.txt"), join(ws, "link.txt"));
    expect(await send("link.txt")).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED", message: 'path "link.txt" is outside the workspace' } });
    await mkdir(join(ws, "dir"));
    expect(await send("dir")).toMatchObject({ ok: false, error: { code: "TOOL_FAILED", message: '"dir" is a directory; send_file sends one file' } });
    expect(await send("missing.txt")).toMatchObject({ ok: false, error: { code: "TOOL_FAILED", message: 'no such file: "missing.txt"' } });
    await writeFile(join(ws, "huge.bin"), "");
    await truncate(join(ws, "huge.bin"), ATTACHMENT_LIMITS.maxBytes + 1);
    expect(await send("huge.bin")).toMatchObject({
      ok: false,
      error: { code: "TOOL_FAILED", message: `"huge.bin" is ${ATTACHMENT_LIMITS.maxBytes + 1} bytes; send_file sends files of at most ${ATTACHMENT_LIMITS.maxBytes} bytes (10 MiB)` },
    });
    expect(await rowCount()).toBe(before);
  });

  it("has send_file only with a store, and the store refuses bad attachments", async () => {
    const names = (tools: { name: string }[]) => tools.map((t) => t.name);
    expect(names(builtinTools({ workspace: ws }))).not.toContain("send_file");
    const tool = builtinTools({ workspace: ws, attachments: store }).find((t) => t.name === "send_file");
    expect([tool?.sideEffect, tool?.approval, tool?.idempotent]).toEqual(["none", false, true]);
    const good = { toolCallId: "v", name: "a.txt", mimeType: "text/plain", bytes: Buffer.from("a") };
    for (const bad of [{ ...good, name: "" }, { ...good, name: "n".repeat(256) }, { ...good, mimeType: "" }, { ...good, part: -1 }]) {
      await expect(store.put(bad)).rejects.toSatisfy((error: unknown) => error instanceof DevmindError && error.code === "ATTACHMENT_INVALID");
    }
    // without a run there is no idempotency key: each put is a new attachment
    const one = await store.put(good);
    const two = await store.put(good);
    expect(one.id).not.toBe(two.id);
    expect(one).toMatchObject({ run_id: null, thread_id: null, tool_call_id: "v", size: 1, url: `/files/${one.id}` });
  });
});
