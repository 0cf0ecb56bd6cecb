/**
 * Durability of user graphs across processes: a worker SIGKILLed in the middle of a ledgered tool
 * node, after both calls' side effects; the next worker re-runs the node from the last checkpoint
 * and the ledger answers for the calls — the finished one from its stored result, the one in
 * flight (not idempotent) as TOOL_OUTCOME_UNKNOWN — so no side effect happens twice. The same holds
 * for a plain LangGraph `ToolNode` and for `createAgent`'s tool node, ledgered when the graph
 * loads, with no `ledgeredTool` in the graph; an idempotent tool in flight runs again. On
 * PostgreSQL the two processes share the database; on PGlite they take the data directory in turn.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { crashy, pausing, type GraphWorkerOptions } from "../fixtures/graph-worker.js";
import { agentGraph, toolNodeGraph } from "../fixtures/tool-node-graphs.js";
import { killLiveChildren, spawnFixture, waitForLine } from "../helpers/child-process.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, freshSchemaName } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { waitUntil } from "../helpers/waits.js";

const FIXTURE = "test/fixtures/graph-worker.ts";
const LEASE_MS = 2_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await killLiveChildren();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A place for a graph worker child: a temp folder (removed after the test) and, on PostgreSQL, a
 * fresh schema (dropped after it) or, on PGlite, a seeded data directory in that folder; `open`
 * opens and migrates it in this process.
 */
function graphPlace(backend: "pglite" | "postgres", prefix: string, schemaPrefix: string): { root: string; place: GraphWorkerOptions; open: () => Promise<Database> } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const schema = freshSchemaName(schemaPrefix);
  const place: GraphWorkerOptions = backend === "postgres" ? { url: TEST_DATABASE_URL, schema, leaseMs: LEASE_MS } : { dataDir: seedDataDir(join(root, "data")), schema, leaseMs: LEASE_MS };
  if (backend === "postgres") {
    cleanups.push(async () => {
      const owner = await openDatabase({ url: TEST_DATABASE_URL, schema, maxConnections: 1 });
      await dropSchema(owner, schema).finally(() => owner.close());
    });
  }
  const open = async (): Promise<Database> => {
    const db = await openDatabase({ url: place.url, dataDir: place.dataDir, schema });
    await migrate(db);
    return db;
  };
  return { root, place, open };
}

describe.each(BACKENDS)("user graph durability on %s", (backend) => {
  it("SIGKILL mid-tool: the node re-runs, the finished call is not repeated and the in-flight one is TOOL_OUTCOME_UNKNOWN", async () => {
    const { root, place, open } = graphPlace(backend, "devmind-graph-crash-", "gd");
    const file = join(root, "notes.txt");

    // the parent queues the run and lets go of the database (an embedded one admits one process)
    let db = await open();
    let runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: String(LEASE_MS) }), graphs: { agent: false, crashy } });
    const created = await runtime.runs.create({ assistantId: "crashy", input: { file } });
    await runtime.close();
    await db.close();

    const child = spawnFixture(FIXTURE, [JSON.stringify(place)], 60_000);
    await waitForLine(child, "ready", 30_000);
    await waitUntil("the hanging call to start", () => existsSync(`${file}.started`), 30_000);
    child.process.kill("SIGKILL");
    await child.exited;
    // both side effects happened (the two calls run concurrently: in either order)
    const lines = (): string[] => readFileSync(file, "utf8").split("\n").filter((line) => line !== "").sort();
    expect(lines()).toEqual(["one", "two"]);

    db = await open();
    cleanups.push(() => db.close());
    runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: String(LEASE_MS) }), graphs: { agent: false, crashy } });
    cleanups.push(() => runtime.close());
    const worker = runtime.worker({ concurrency: 1 });
    await worker.start();
    const done = await runtime.runs.wait(created.run_id, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: "success", stop_reason: "completed" });
    expect(done.attempt).toBe(2);
    // no side effect twice
    expect(lines()).toEqual(["one", "two"]);
    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[] } };
    const answers = state.values.messages.filter((message) => message.getType() === "tool") as (BaseMessage & { tool_call_id: string })[];
    expect(answers.map((message) => message.tool_call_id).sort()).toEqual(["fast", "slow"]);
    expect(String(answers.find((message) => message.tool_call_id === "fast")?.content)).toBe("appended one");
    const slow = JSON.parse(String(answers.find((message) => message.tool_call_id === "slow")?.content)) as { ok: boolean; error: { code: string } };
    expect(slow).toMatchObject({ ok: false, error: { code: "TOOL_OUTCOME_UNKNOWN" } });
    const types: string[] = [];
    for await (const event of runtime.runs.events(created.run_id)) types.push(event.type);
    expect(types.filter((type) => type === "run.started")).toHaveLength(1);
    expect(types).toContain("run.resumed");
    expect(types.at(-1)).toBe("run.succeeded");
  });

  it.each([
    ["toolNode", toolNodeGraph],
    ["createAgent", agentGraph],
  ] as const)("%s graph, no ledgeredTool in it: SIGKILL mid-call; the finished call is not repeated, the in-flight one is TOOL_OUTCOME_UNKNOWN, the idempotent one runs again", async (graphId, graph) => {
    const { root, place, open } = graphPlace(backend, "devmind-toolnode-crash-", "gt");
    const file = join(root, "notes.txt");
    const config = loadConfig({ DEVMIND_LEASE_MS: String(LEASE_MS) });

    let db = await open();
    let runtime = createRuntime({ db, config, graphs: { agent: false, [graphId]: graph } });
    const created = await runtime.runs.create({ assistantId: graphId, input: { file, messages: [{ role: "user", content: "go" }] } });
    await runtime.close();
    await db.close();

    const child = spawnFixture(FIXTURE, [JSON.stringify(place)], 60_000);
    await waitForLine(child, "ready", 30_000);
    // hang_append writes its marker once append_once is finished in the ledger and idem_append is blocking
    await waitUntil("the hanging call to start", () => existsSync(`${file}.started`), 30_000);
    child.process.kill("SIGKILL");
    await child.exited;
    const lines = (): string[] => readFileSync(file, "utf8").split("\n").filter((line) => line !== "").sort();
    expect(lines()).toEqual(["hang", "idem", "once"]);

    db = await open();
    cleanups.push(() => db.close());
    runtime = createRuntime({ db, config, graphs: { agent: false, [graphId]: graph } });
    cleanups.push(() => runtime.close());
    await runtime.worker({ concurrency: 1 }).start();
    const done = await runtime.runs.wait(created.run_id, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", attempt: 2 });
    // once and hang ran once; the idempotent call ran again
    expect(lines()).toEqual(["hang", "idem", "idem", "once"]);
    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[] } };
    const answers = new Map((state.values.messages.filter((message) => message.getType() === "tool") as ToolMessage[]).map((message) => [message.tool_call_id, message]));
    expect([...answers.keys()].sort()).toEqual(["hang", "idem", "once"]);
    expect(answers.get("once")).toMatchObject({ content: "appended once", name: "append_once" });
    expect(answers.get("once")?.status).not.toBe("error");
    expect(answers.get("idem")).toMatchObject({ content: "appended idem", name: "idem_append" });
    expect(answers.get("hang")).toMatchObject({ status: "error", name: "hang_append" });
    expect(JSON.parse(String(answers.get("hang")?.content))).toMatchObject({ ok: false, tool: "hang_append", error: { code: "TOOL_OUTCOME_UNKNOWN" } });
    expect(done.unknown_outcomes).toEqual([{ tool_call_id: "hang", tool: "hang_append" }]);
    expect(state.values.messages.at(-1)).toMatchObject({ content: "done" });
  });

  it("a process killed after taking a resume, before its node's result is stored: the next worker applies the same resume, audited once", async () => {
    const { root, place, open } = graphPlace(backend, "devmind-graph-resume-", "gr");
    const file = join(root, "answer");
    const marker = `${file}.resumed`;
    const config = loadConfig({ DEVMIND_LEASE_MS: String(LEASE_MS) });

    // this process runs the graph to its interrupt and stores the resume, then lets go of the database
    let db = await open();
    let runtime = createRuntime({ db, config, graphs: { agent: false, pausing } });
    const created = await runtime.runs.create({ assistantId: "pausing", input: { file } });
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    // the resume is a new run, queued with its value in one transaction
    const queued = await runtime.runs.resume(created.run_id, { value: "yes, go" }, { principal: "carol", reason: "checked" });
    expect(queued).toMatchObject({ status: "pending", resumes_run: created.run_id });
    await runtime.close();
    await db.close();

    // a worker process takes the resume and is killed inside the resumed node
    const child = spawnFixture(FIXTURE, [JSON.stringify(place)], 60_000);
    await waitForLine(child, "ready", 30_000);
    // the marker's line is whole (appendFileSync creates the file before it writes the line)
    await waitUntil("the resumed node to run", () => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n"), 30_000);
    child.process.kill("SIGKILL");
    await child.exited;
    expect(readFileSync(marker, "utf8")).toBe("yes, go\n");

    db = await open();
    cleanups.push(() => db.close());
    runtime = createRuntime({ db, config, graphs: { agent: false, pausing } });
    cleanups.push(() => runtime.close());
    const worker = runtime.worker({ concurrency: 1 });
    await worker.start();
    const done = await runtime.runs.wait(queued.run_id, { timeoutMs: 60_000 });
    // attempts of the resuming run: the killed one, this one
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", attempt: 2 });
    // the node ran again with the same value: the resume was not lost with the process
    expect(readFileSync(marker, "utf8")).toBe("yes, go\nyes, go\n");
    expect((await runtime.threads.state(created.thread_id)) as { values: Record<string, unknown> }).toMatchObject({ values: { answer: "yes, go" } });
    const audit = await runtime.runs.resumes(created.run_id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ principal: "carol", reason: "checked" });
    const types: string[] = [];
    for await (const event of runtime.runs.events(created.run_id)) types.push(event.type);
    for await (const event of runtime.runs.events(queued.run_id)) types.push(event.type);
    // given once on the run it answered, and once in the stream of the run it started
    expect(types.filter((type) => type === "resume.given")).toHaveLength(2);
    expect(types.at(-1)).toBe("run.succeeded");
  });
});
