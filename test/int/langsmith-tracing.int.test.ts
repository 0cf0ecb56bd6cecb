import { createServer, type Server } from "node:http";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createLogger } from "../../src/logger.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { startOperations } from "../../src/operations/operations.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { PRIMARY_ENGINE, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { freePort } from "../helpers/prometheus.js";
import { waitUntil } from "../helpers/waits.js";

/** What a local LangSmith endpoint received: every request, and the runs posted (created or patched). */
interface Received {
  requests: { method: string; path: string }[];
  posted: { id: string; name?: string; parent_run_id?: string | null; extra?: { metadata?: Record<string, unknown> } }[];
}

/** A stand-in LangSmith API on a free port: `/info` says "use the JSON batch endpoint", `/runs/batch` and `/runs` are recorded. */
async function startLangsmithReceiver(): Promise<{ url: string; received: Received; close: () => Promise<void> }> {
  const received: Received = { requests: [], posted: [] };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = (request.url ?? "/").split("?")[0] as string;
      received.requests.push({ method: request.method ?? "", path });
      const text = Buffer.concat(chunks).toString("utf8");
      if (path === "/info") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ version: "0.10.0", batch_ingest_config: { use_multipart_endpoint: false } }));
        return;
      }
      if (request.method === "POST" && path === "/runs/batch") {
        const body = JSON.parse(text) as { post?: Received["posted"]; patch?: Received["posted"] };
        received.posted.push(...(body.post ?? []), ...(body.patch ?? []));
      } else if (request.method === "POST" && path === "/runs") received.posted.push(JSON.parse(text) as Received["posted"][number]);
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

describe(`LangSmith tracing on ${PRIMARY_ENGINE}`, () => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  const workspace = tempWorkspace();
  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
    workspace.cleanup();
  });

  /** Runs one agent run (a tool call, then an answer) with operations started from `env`; returns its ids and the log lines. */
  async function oneRun(env: Record<string, string>): Promise<{ runId: string; threadId: string; log: string[] }> {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString("utf8")), done()) }) });
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_METRICS: "false", ...env });
    const operations = await startOperations(config, logger);
    const runtime = createRuntime({ db, config, model: new ScriptedChatModel([{ tool_calls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }] }, { content: "3" }]), ...(operations.observer === undefined ? {} : { observer: operations.observer }) });
    try {
      const created = await runtime.runs.create({ input: { messages: ["add 1 and 2"] } });
      const run = await runtime.runs.execute(created.run_id);
      expect(run.status).toBe("success");
      return { runId: run.run_id, threadId: run.thread_id, log: lines };
    } finally {
      await runtime.close();
      await operations.close();
    }
  }

  it("each run is traced by LangChain's tracer with its thread, run, graph and assistant in the metadata", async () => {
    const langsmith = await startLangsmithReceiver();
    try {
      const { runId, threadId } = await oneRun({ LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: langsmith.url, LANGSMITH_API_KEY: "ls-test-key", LANGSMITH_PROJECT: "devmind-test" });
      await waitUntil("the root run posted", () => langsmith.received.posted.some((run) => run.extra?.metadata?.["run_id"] === runId), 20_000);
      const root = langsmith.received.posted.find((run) => run.extra?.metadata?.["run_id"] === runId && (run.parent_run_id ?? null) === null);
      expect(root?.extra?.metadata).toMatchObject({ run_id: runId, thread_id: threadId, graph_id: "agent", assistant_id: expect.any(String) });
      // the graph's nodes and the model call are traced under it
      const names = new Set(langsmith.received.posted.map((run) => run.name));
      expect(names.has("model")).toBe(true);
      expect(names.has("tools")).toBe(true);
      expect(langsmith.received.requests.every((request) => request.path === "/info" || request.path.startsWith("/runs"))).toBe(true);
    } finally {
      await langsmith.close();
    }
  }, 60_000);

  it("nothing is sent when LANGSMITH_TRACING is unset, even with an endpoint and key", async () => {
    const langsmith = await startLangsmithReceiver();
    try {
      await oneRun({ LANGSMITH_ENDPOINT: langsmith.url, LANGSMITH_API_KEY: "ls-test-key" });
      expect(langsmith.received.requests).toEqual([]);
    } finally {
      await langsmith.close();
    }
  }, 60_000);

  it("an unreachable endpoint: the runs go on, one log line for the outage", async () => {
    const closed = await freePort();
    const env = { LANGSMITH_TRACING: "true", LANGSMITH_ENDPOINT: `http://127.0.0.1:${closed}`, LANGSMITH_API_KEY: "ls-test-key" };
    const { log } = await oneRun(env);
    const failures = log.filter((line) => line.includes("langsmith.export_failed"));
    expect(failures).toHaveLength(1);
    expect(log.join("")).not.toContain("ls-test-key");
  }, 60_000);
});
