import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { tempWorkspace } from "../helpers/agent.js";
import { runCli } from "../helpers/cli.js";
import { BACKENDS, TEST_DATABASE_URL, describeOn, freshMigratedSchema, itOnPrimary, openBackend } from "../helpers/databases.js";
import { collect, TEST_KEYS } from "../helpers/server.js";
import { spawnServe, type ServeProcess } from "../helpers/server-process.js";
import { seedDataDir } from "../helpers/pglite-template.js";

type Part = { event: string; data: unknown; id?: string };
type Msg = { type: string; content: unknown; id?: string };

const SCRIPT: ScriptedTurn[] = [
  { tool_calls: [{ id: "call_w", name: "write_file", args: { path: "out.txt", content: "from another process" } }] },
  { content: "written by the other process", delay_ms: 400 },
];
const KEYS = Object.entries(TEST_KEYS).map(([name, key]) => `${name}=${key}`).join(",");

describe.each(BACKENDS)("devmind serve as a process on %s", (backend) => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const envFor = (dataDir: string, extra: Record<string, string> = {}): Record<string, string> => ({
    ...(backend === "postgres" ? { DATABASE_URL: TEST_DATABASE_URL as string, DEVMIND_DB_SCHEMA: `serve_${Date.now().toString(36)}_${process.pid}` } : { DEVMIND_DATA_DIR: dataDir }),
    DEVMIND_WORKSPACE: join(dataDir, "ws"),
    ...extra,
  });

  itOnPrimary(backend)("refuses to bind a non-loopback host without API keys (exit 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-serve-"));
    dirs.push(dir);
    const env = envFor(dir);
    const result = await runCli(["serve", "--host", "0.0.0.0", "--port", "0", "--workers", "0"], env, { timeoutMs: 60_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("DEVMIND_API_KEYS");
    expect(result.stdout).not.toContain("listening");
    if (backend === "postgres") {
      const owner = await openBackend("postgres");
      await owner.query(`DROP SCHEMA IF EXISTS "${env["DEVMIND_DB_SCHEMA"]}" CASCADE`);
      await owner.close();
    }
  }, 120_000);

  it("serves the API, runs a scripted run on its worker, and exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-serve-"));
    dirs.push(dir);
    if (backend === "pglite") seedDataDir(dir);
    const script = join(dir, "script.json");
    writeFileSync(script, JSON.stringify([{ content: "hello from serve" }]));
    const env = envFor(dir, { DEVMIND_MODEL: `scripted:${script}`, DEVMIND_API_KEYS: KEYS });
    const serve = await spawnServe(["--port", "0", "--workers", "1"], env);
    try {
      expect((await fetch(`${serve.url}/ok`)).status).toBe(200);
      const client = new Client({ apiUrl: serve.url, apiKey: TEST_KEYS.bob });
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "hi" }] } })) as { messages: Msg[] };
      expect(values.messages.map((m) => [m.type, m.content])).toEqual([
        ["human", "hi"],
        ["ai", "hello from serve"],
      ]);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.stdout()).toContain("devmind serve: stopped");
    expect(serve.stdout() + serve.stderr()).not.toContain(TEST_KEYS.bob);
    if (backend === "postgres") {
      const owner = await openBackend("postgres");
      await owner.query(`DROP SCHEMA IF EXISTS "${env["DEVMIND_DB_SCHEMA"]}" CASCADE`);
      await owner.close();
    }
  }, 120_000);

  describeOn(backend, "postgres")("two server processes on one database", () => {
    let owner: Database;
    beforeAll(async () => {
      owner = await openBackend("postgres");
    });
    afterAll(async () => {
      await owner.close();
    });

    it("a run executed by one process's worker is streamed, approved and resumed through the other", async () => {
      const { db, drop } = await freshMigratedSchema(owner);
      const ws = tempWorkspace();
      const dir = mkdtempSync(join(tmpdir(), "devmind-serve-"));
      dirs.push(dir);
      const script = join(dir, "script.json");
      writeFileSync(script, JSON.stringify(SCRIPT));
      let child: ServeProcess | undefined;
      let local: RunningServer | undefined;
      let runtime: Runtime | undefined;
      try {
        // this process serves without workers; the child executes every run
        const config = loadConfig({ DEVMIND_WORKSPACE: ws.dir, DEVMIND_API_KEYS: KEYS });
        runtime = createRuntime({ db, config, model: new ScriptedChatModel(SCRIPT) });
        local = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 0 });
        child = await spawnServe(["--port", "0", "--workers", "1"], {
          DATABASE_URL: TEST_DATABASE_URL as string,
          DEVMIND_DB_SCHEMA: db.schema,
          DEVMIND_MODEL: `scripted:${script}`,
          DEVMIND_API_KEYS: KEYS,
          DEVMIND_WORKSPACE: ws.dir,
        });
        const client = new Client({ apiUrl: local.url, apiKey: TEST_KEYS.alice });
        const thread = await client.threads.create();
        let runId = "";
        const first = (await collect(
          client.runs.stream(thread.thread_id, "agent", {
            input: { messages: [{ type: "human", content: "write out.txt" }] },
            streamMode: ["values", "custom"],
            onRunCreated: (meta) => (runId = meta.run_id),
          }),
        )) as Part[];
        // the run's lifecycle is in its stored events (devmind's /runs/{id}/events), not in the graph's custom parts
        const stored = async (id = runId) => {
          const list: { type: string; worker?: string; by?: string }[] = [];
          for await (const event of (runtime as NonNullable<typeof runtime>).runs.events(id)) list.push(event as unknown as { type: string; worker?: string; by?: string });
          return list;
        };
        expect((await stored()).find((e) => e.type === "run.started")?.worker).toContain(`:${child.pid}:`);
        expect(first.filter((p) => p.event === "custom").map((p) => (p.data as { type: string }).type)).toEqual(["model.started", "model.finished"]);
        const interrupt = first.find((p) => p.event === "values" && "__interrupt__" in (p.data as object));
        expect((interrupt?.data as { __interrupt__: { value: { actionRequests: { tool_call_id: string }[] } }[] }).__interrupt__[0]?.value.actionRequests[0]?.tool_call_id).toBe("call_w");

        // resumed through this process (a new run, the Platform's model), executed by the child; tokens cross processes too
        let resumedId = "";
        const resumed = (await collect(
          client.runs.stream(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: ["values", "messages-tuple", "custom"], onRunCreated: (meta) => (resumedId = meta.run_id) }),
        )) as Part[];
        expect(resumedId).not.toBe(runId);
        const custom = resumed.filter((p) => p.event === "custom").map((p) => p.data as { type: string });
        expect(custom.map((e) => e.type)).toEqual(["tool.call.started", "tool.call.finished", "model.started", "model.finished"]);
        // the decision is on the run it answered, which ended at the interrupt; the new run resumed on the child
        const waited = await stored();
        expect(waited.find((e) => e.type === "approval.decided")).toMatchObject({ by: "alice" });
        expect(waited.map((e) => e.type)).toContain("run.interrupted");
        const lifecycle = await stored(resumedId);
        expect(lifecycle.find((e) => e.type === "run.resumed")?.worker).toContain(`:${child.pid}:`);
        expect(lifecycle.at(-1)?.type).toBe("run.succeeded");
        const deltas = resumed.filter((p) => p.event === "messages" && (p.data as [Msg])[0].type === "ai").map((p) => (p.data as [Msg])[0].content);
        // tokens are best effort: they start before the complete message, and none comes after it
        expect(deltas.length).toBeGreaterThan(0);
        expect("written by the other process".startsWith(String(deltas.join("")))).toBe(true);
        const finalMessages = ((resumed.filter((p) => p.event === "values").pop()?.data as { messages: Msg[] }).messages ?? []).map((m) => m.type);
        expect(finalMessages).toEqual(["human", "ai", "tool", "ai"]);

        // the same runs, joined through the child, have the same durable parts as through this process
        const viaChild = new Client({ apiUrl: child.url, apiKey: TEST_KEYS.bob });
        const durable = (parts: Part[]) => parts.filter((p) => p.id !== undefined).map((p) => JSON.stringify([p.event, p.data])).sort();
        for (const id of [runId, resumedId]) {
          const a = (await collect(viaChild.runs.joinStream(thread.thread_id, id, { streamMode: ["values", "custom"] }))) as Part[];
          const b = (await collect(client.runs.joinStream(thread.thread_id, id, { streamMode: ["values", "custom"] }))) as Part[];
          expect(durable(a)).toEqual(durable(b));
        }
        expect(await viaChild.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", stop_reason: "interrupt" });
        expect(await viaChild.runs.get(thread.thread_id, resumedId)).toMatchObject({ status: "success", stop_reason: "completed", resumes_run: runId });
      } finally {
        const code = await child?.stop();
        await local?.close();
        await runtime?.close();
        await drop();
        ws.cleanup();
        expect(code).toBe(0);
      }
    }, 120_000);
  });
});
