/**
 * Database faults that cost nothing when no process died (CONTRACT section 3): an outage while
 * slow tool calls run (the agent's tools node and a plain ToolNode in a user graph) records every
 * call's outcome and re-runs none (no TOOL_OUTCOME_UNKNOWN, no failed run); `/health` reports a
 * write refused for want of storage even when its own probe still fits; an SDK stream of a run
 * stays open through an outage, and a reconnect to it during the outage gets the stream, not a 503.
 * One PostgreSQL database of its own behind a TCP proxy (test/helpers/pg-proxy.ts) per test.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { retryDatabaseFaults } from "../../src/runtime/execution/backoff.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer } from "../../src/server/start-server.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { createFaultDatabase, injectDiskFull } from "../helpers/fault-database.js";
import { startPgProxy, type PgProxy } from "../helpers/pg-proxy.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[db-faults-tools] cleanup failed: ${String(error)}`);
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** How long each slow tool call takes; the outage starts once every call is under way and outlasts them. */
const TOOL_MS = 1_200;
const OUTAGE_MS = 2_500;

/** Tool bodies started, per run (the agent's by run id, the graph's by tool call id). */
const started = new Map<string, number>();
const begin = (key: string): void => void started.set(key, (started.get(key) ?? 0) + 1);

/** The built-in agent's side-effecting, non-idempotent slow tool. */
const slowAgentTool = defineTool({
  name: "slow_write",
  description: "A slow side effect.",
  schema: z.object({ label: z.string() }),
  sideEffect: "local",
  approval: false,
  idempotent: false,
  execute: async ({ label }, context) => {
    begin(String(context.runId));
    await sleep(TOOL_MS);
    return { wrote: label };
  },
});

/** A user graph: `plan` asks for one call of a slow LangChain tool, LangGraph's ToolNode runs it. */
const slowLangchainTool = tool(
  async ({ label }: { label: string }, config) => {
    begin(String((config as { toolCall?: { id?: string } }).toolCall?.id));
    await sleep(TOOL_MS);
    return `stored ${label}`;
  },
  { name: "slow_store", description: "A slow side effect.", schema: z.object({ label: z.string() }) },
);
const toolGraph = new StateGraph(MessagesAnnotation)
  .addNode("plan", (state) => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${String(state.messages[0]?.content)}`, name: "slow_store", args: { label: "x" } }] })] }))
  .addNode("tools", new ToolNode([slowLangchainTool]))
  .addEdge(START, "plan")
  .addEdge("plan", "tools")
  .addEdge("tools", END)
  .compile();

const SCRIPT: ScriptedTurn[] = [{ tool_calls: [{ name: "slow_write", args: { label: "a" } }] }, { content: "done" }];

interface Harness {
  proxy: PgProxy;
  db: Database;
  runtime: Runtime;
  config: ReturnType<typeof loadConfig>;
}

/** A database of its own behind a proxy, migrated; a runtime on it with the slow tools. */
async function harness(options: { wrap?: (db: Database) => Database } = {}): Promise<Harness> {
  const fault = await createFaultDatabase();
  cleanups.push(() => fault.drop());
  const target = new URL(TEST_DATABASE_URL as string);
  const proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
  cleanups.push(() => proxy.close());
  const opened = await openDatabase({ url: proxy.urlFor(fault.url), schema: "devmind", maxConnections: 6, connectionTimeoutMs: 1_000 });
  cleanups.push(() => opened.close());
  await migrate(opened);
  const db = options.wrap?.(opened) ?? opened;
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-faults-tools-")));
  cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
  const config = loadConfig({ DEVMIND_LEASE_MS: "3000", DEVMIND_MAX_ATTEMPTS: "3", DEVMIND_WORKSPACE: workspace });
  const runtime = createRuntime({ db, model: new ScriptedChatModel(SCRIPT), tools: [slowAgentTool], graphs: { tools: toolGraph }, config });
  cleanups.push(() => runtime.close());
  return { proxy, db, runtime, config };
}

describe.runIf(TEST_DATABASE_URL !== undefined)("faults that cost no tool outcome (PostgreSQL)", () => {
  it("an outage while slow tool calls run: every call runs once and is recorded, no TOOL_OUTCOME_UNKNOWN, no failed run, no attempt spent", async () => {
    const h = await harness();
    started.clear();
    const agentRuns = [await h.runtime.runs.create({ input: { messages: ["one"] } }), await h.runtime.runs.create({ input: { messages: ["two"] } })];
    const graphRuns = [await h.runtime.runs.create({ assistantId: "tools", input: { messages: [{ role: "user", content: "g1" }] } }), await h.runtime.runs.create({ assistantId: "tools", input: { messages: [{ role: "user", content: "g2" }] } })];
    const runs = [...agentRuns, ...graphRuns];
    const worker = h.runtime.worker({ concurrency: 4 });
    await worker.start();
    cleanups.push(() => worker.stop());
    // every call under way, then the database goes away for longer than the calls take
    await until(() => started.size === runs.length, 60_000, "every tool call to start");
    h.proxy.stall();
    h.proxy.dropAll();
    await sleep(OUTAGE_MS);
    h.proxy.resume();
    await until(async () => (await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)))).every((run) => run.status !== "pending" && run.status !== "running"), 60_000, "every run to end");

    const finals = await Promise.all(runs.map((run) => h.runtime.runs.get(run.run_id)));
    expect(finals.map((run) => [run.status, run.error?.code ?? null])).toEqual(runs.map(() => ["success", null]));
    // the database was away, not the process: no attempt spent, no call run twice
    expect(finals.map((run) => run.attempt)).toEqual(runs.map(() => 1));
    expect([...started.values()]).toEqual(runs.map(() => 1));
    // every call's outcome is in the ledger as it happened
    const ledger = (await h.db.query<{ status: string; result: unknown }>(`SELECT status, result FROM devmind.tool_ledger ORDER BY tool_call_id`)).rows;
    expect(ledger.map((row) => row.status)).toEqual(runs.map(() => "succeeded"));
    expect(JSON.stringify(ledger)).not.toContain("TOOL_OUTCOME_UNKNOWN");
    // and the model / the graph's state saw the real results
    for (const run of agentRuns) {
      const finished = [];
      for await (const event of h.runtime.runs.events(run.run_id)) if (event.type === "tool.call.finished") finished.push(event);
      expect(finished.length).toBeGreaterThan(0);
      expect(finished.map((event) => [event["ok"], event["error_code"]])).toEqual(finished.map(() => [true, null]));
    }
    for (const run of graphRuns) {
      const values = (await h.runtime.threads.state(run.thread_id)).values as { messages: unknown[] };
      const answers = values.messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
      expect(answers.map((message) => [message.content, message.status ?? "success"])).toEqual([["stored x", "success"]]);
    }
  }, 120_000);

  it("/health reports a write refused for want of storage though its own small probe still fits (a full disk)", async () => {
    let injected: ReturnType<typeof injectDiskFull> | undefined;
    const h = await harness({
      wrap: (db) => {
        // a full disk as PostgreSQL has it: writes that need new space fail with 53100, the probe's in-place update does not
        injected = injectDiskFull(db, (text) => !text.includes("health_probes"));
        return injected.db;
      },
    });
    const server = await startServer({ runtime: h.runtime, config: h.config, host: "127.0.0.1", port: 0, workers: 0 });
    cleanups.push(() => server.close());
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ ok: true, status: "ok", database: "ok" });
    injected?.setFull(true);
    // a write of this process meets the full disk (here: a run being created)
    const refused = await fetch(`${server.url}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(refused.status).toBe(503);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: false, status: "degraded", database: "refusing_writes", write_error: { code: "DATABASE_WRITE_FAILED" } });
    expect(typeof body["last_write_failure_at"]).toBe("string");
    expect((await h.runtime.health()).database).toMatchObject({ reachable: true, writable: false });
  }, 60_000);

  it("an SDK stream stays open through an outage (heartbeats, no reconnect); a reconnect to it during the outage gets the stream, not a 503", async () => {
    const h = await harness();
    started.clear();
    const worker = h.runtime.worker({ concurrency: 1 });
    await worker.start();
    cleanups.push(() => worker.stop());
    const server = await startServer({ runtime: h.runtime, config: h.config, host: "127.0.0.1", port: 0, workers: 0, heartbeatMs: 200 });
    cleanups.push(() => server.close());
    const requests: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      requests.push(`${init?.method ?? "GET"} ${new URL(String(input instanceof Request ? input.url : input)).pathname}`);
      return fetch(input, init);
    };
    const client = new Client({ apiUrl: server.url, callerOptions: { fetch: countingFetch } });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "tools", { input: { messages: [{ role: "user", content: "s1" }] } });
    const parts: { event: string; data: unknown }[] = [];
    let outage: Promise<void> | undefined;
    let reconnect: { status: number; type: string | null; bytes: string } | undefined;
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["values"] } as never)) {
      parts.push(part as never);
      if (outage === undefined) {
        outage = (async () => {
          await until(() => started.size === 1, 30_000, "the tool call to start");
          h.proxy.stall();
          h.proxy.dropAll();
          // what the SDK does when its stream closes: GET the stream again with Last-Event-ID
          const controller = new AbortController();
          const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream?stream_mode=values`, { headers: { "last-event-id": "0" }, signal: controller.signal });
          const reader = response.body?.getReader();
          const first = await reader?.read();
          reconnect = { status: response.status, type: response.headers.get("content-type"), bytes: new TextDecoder().decode(first?.value) };
          controller.abort();
          await sleep(OUTAGE_MS);
          h.proxy.resume();
        })();
      }
    }
    await outage;
    expect(reconnect?.status).toBe(200);
    expect(reconnect?.type).toContain("text/event-stream");
    expect(reconnect?.bytes).toContain(": heartbeat");
    expect(parts.map((part) => part.event)).not.toContain("error");
    const last = parts.filter((part) => part.event === "values").at(-1)?.data as { messages?: { type: string; content: unknown }[] } | undefined;
    expect(last?.messages?.at(-1)).toMatchObject({ type: "tool", content: "stored x" });
    // one stream request: the SDK never had to reconnect
    expect(requests.filter((request) => request.endsWith("/stream"))).toHaveLength(1);
    expect((await retryDatabaseFaults(() => h.runtime.runs.get(run.run_id), { maxMs: 30_000 })).status).toBe("success");
  }, 90_000);
});
