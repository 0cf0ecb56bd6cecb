import { appendFile } from "node:fs/promises";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { Client, type ThreadTask } from "@langchain/langgraph-sdk";
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph as reviewGraph } from "../../examples/approval-graph/graph.js";
import { agent as notesAgent } from "../../examples/hitl-agent/graph.js";
import { graph as researchGraph } from "../../examples/parallel-research/graph.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { argsDigest } from "../../src/runtime/interrupts/digest.js";
import { assistantIdFor } from "../../src/graphs/assistant-id.js";
import { BACKENDS, TEST_DATABASE_URL, itOnPrimary, openBackend } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";
import { spawnServe } from "../helpers/server-process.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };
type Interrupt = { id: string; value: unknown };

const REVIEW_QUESTION = { question: "Send this draft?", draft: "A short note about tests." };

async function api(server: { url: string }, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${path}`, { headers: { "x-api-key": TEST_KEYS.alice } });
  return { status: response.status, body: (await response.json()) as unknown };
}

/** A graph whose `messages` channel holds plain strings, not LangChain messages. */
const stringsGraph = new StateGraph(Annotation.Root({ messages: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }) }))
  .addNode("echo", (state) => ({ messages: [`echo ${state.messages.length}`] }))
  .addEdge(START, "echo")
  .addEdge("echo", END);

/** The example's `append_line` tool, appending to `file`. */
function appendLine(file: string) {
  return tool(
    async ({ line }: { line: string }) => {
      await appendFile(file, `${line}\n`);
      return `appended: ${line}`;
    },
    { name: "append_line", description: "Append one line to the notes file.", schema: z.object({ line: z.string() }) },
  );
}

/** Expects `promise` to fail with the SDK's HTTPError of `status` whose text contains `text`. */
async function refused(promise: Promise<unknown>, status: number, text: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught as { status?: number; message?: string },
  );
  expect(error?.status).toBe(status);
  expect(error?.message).toContain(text);
}

/** The parts of a stream without the ids and the metadata part (checked on its own). */
function shape(parts: Part[]): { event: string; data: unknown }[] {
  return parts.filter((part) => part.event !== "metadata").map(({ event, data }) => ({ event, data }));
}

describe.each(BACKENDS)("every loaded graph is an assistant of devmind serve, through the SDK, on %s", (backend) => {
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const start = async (workers = 1): Promise<{ server: TestServer; client: Client }> => {
    const server = await startTestServer(owner, [], { workers, graphs: { agent: false, review: reviewGraph, research: researchGraph } });
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };

  itOnPrimary(backend)("assistants: one per graph with the official ids and shapes; graph and schemas (the rest: server-assistants.int.test.ts)", async () => {
    const { server, client } = await start(0);
    const found = await client.assistants.search();
    expect(found.map((a) => [a.assistant_id, a.graph_id, a.name, a.version, a.config, a.metadata])).toEqual([
      [assistantIdFor("review"), "review", "review", 1, {}, { created_by: "system" }],
      [assistantIdFor("research"), "research", "research", 1, {}, { created_by: "system" }],
    ]);
    expect((await client.assistants.search({ graphId: "research" })).map((a) => a.graph_id)).toEqual(["research"]);
    expect((await client.assistants.search({ limit: 1, offset: 1 })).map((a) => a.graph_id)).toEqual(["research"]);
    expect((await client.assistants.get("review")).assistant_id).toBe(assistantIdFor("review"));
    expect((await client.assistants.get(assistantIdFor("research"))).graph_id).toBe("research");
    await expect(client.assistants.get("agent")).rejects.toMatchObject({ status: 404 });
    expect(await api(server, "/info")).toMatchObject({ status: 200, body: { graphs: ["review", "research"] } });

    const drawing = await client.assistants.getGraph("review");
    expect(drawing.nodes.map((node) => node.id)).toEqual(["__start__", "write", "review", "__end__"]);
    expect(drawing.edges.map((edge) => `${edge.source}->${edge.target}`).sort()).toEqual(["__start__->write", "review->__end__", "write->review"]);
    const schemas = await client.assistants.getSchemas("review");
    expect(schemas.graph_id).toBe("review");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual(["topic", "draft", "outcome"]);
    expect(Object.keys((schemas.input_schema as { properties: object }).properties)).toEqual(["topic", "draft", "outcome"]);

  });

  it("example (a): runs.wait to its interrupt, thread state types the interrupt, command.resume is a new run that finishes the thread", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "review", { input: { topic: "tests" } })) as Record<string, unknown>;
    const [interrupt] = paused["__interrupt__"] as Interrupt[];
    expect(paused).toEqual({ topic: "tests", draft: REVIEW_QUESTION.draft, outcome: null, __interrupt__: [{ id: interrupt?.id, value: REVIEW_QUESTION }] });

    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["review"]);
    expect(state.tasks.map((task) => [task.name, task.interrupts])).toEqual([["review", [{ id: interrupt?.id, value: REVIEW_QUESTION }]]]);
    // the task as the official server types it: its path, no result yet, no subgraph checkpoint
    expect(state.tasks[0]).toMatchObject({ path: ["__pregel_pull", "review"], result: null, checkpoint: null, error: null });
    const threadRecord = await client.threads.get(thread.thread_id);
    expect(threadRecord.status).toBe("interrupted");
    expect(Object.values(threadRecord.interrupts ?? {})).toEqual([[{ id: interrupt?.id, value: REVIEW_QUESTION }]]);
    expect(threadRecord.metadata).toEqual({ graph_id: "review", assistant_id: assistantIdFor("review") });

    const [run] = await client.runs.list(thread.thread_id);
    // the Platform's model: the run ended at the interrupt, its thread waits on it
    expect(run).toMatchObject({ assistant_id: assistantIdFor("review"), status: "success", stop_reason: "interrupt", waiting: true });

    const done = (await client.runs.wait(thread.thread_id, "review", { command: { resume: { approved: true, note: "ok" } } })) as Record<string, unknown>;
    expect(done).toEqual({ topic: "tests", draft: REVIEW_QUESTION.draft, outcome: `sent: ${REVIEW_QUESTION.draft} (ok)` });
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((item) => [item.status, (item as { stop_reason?: string }).stop_reason, (item as { resumes_run?: string | null }).resumes_run])).toEqual([
      ["success", "completed", run?.run_id],
      ["success", "interrupt", null],
    ]);
    expect(runs[1]?.run_id).toBe(run?.run_id);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    // the resume is audited on the run it answered
    const audit = await server.runtime.runs.resumes(run?.run_id as string);
    expect(audit.map((item) => [item.principal, item.interrupt_ids])).toEqual([["alice", [interrupt?.id]]]);
  });

  it("example (a) streamed: custom writes, updates per node, the interrupt as the official server sends it, then the resume", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    const first = (await collect(client.runs.stream(thread.thread_id, "review", { input: { topic: "tests" }, streamMode: ["updates", "custom"] }))) as Part[];
    expect(first[0]).toMatchObject({ event: "metadata", data: { run_id: expect.any(String) } });
    const interruptId = ((first.find((part) => part.event === "updates" && "__interrupt__" in (part.data as object))?.data as { __interrupt__: Interrupt[] }).__interrupt__[0] as Interrupt).id;
    // the custom part is ordered by the time its event was stored, which may follow the node's checkpoint
    expect(shape(first).filter((part) => part.event === "custom")).toEqual([{ event: "custom", data: { progress: "drafting", topic: "tests" } }]);
    expect(shape(first).filter((part) => part.event === "updates")).toEqual([
      { event: "updates", data: { write: { draft: REVIEW_QUESTION.draft } } },
      { event: "updates", data: { __interrupt__: [{ id: interruptId, value: REVIEW_QUESTION }] } },
    ]);
    expect(first[first.length - 1]?.data).toEqual({ __interrupt__: [{ id: interruptId, value: REVIEW_QUESTION }] });

    const second = (await collect(client.runs.stream(thread.thread_id, "review", { command: { resume: { approved: false } }, streamMode: ["updates", "values"] }))) as Part[];
    // the resume is a new run, streamed from its start: the state it resumes from, then its step
    expect(shape(second)).toEqual([
      { event: "values", data: { topic: "tests", draft: REVIEW_QUESTION.draft, outcome: null } },
      { event: "updates", data: { review: { outcome: "dropped" } } },
      { event: "values", data: { topic: "tests", draft: REVIEW_QUESTION.draft, outcome: "dropped" } },
    ]);
    const firstRunId = (first[0]?.data as { run_id: string }).run_id;
    const secondRunId = (second[0]?.data as { run_id: string }).run_id;
    expect(secondRunId).not.toBe(firstRunId);
    expect(await client.runs.get(thread.thread_id, secondRunId)).toMatchObject({ status: "success", stop_reason: "completed", resumes_run: firstRunId });
  });

  it("example (b): two interrupts of parallel subgraph branches, listed by /approvals from one query, resumed by an id map", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "research", { input: { questions: ["abc", "de", "fgh"] } })) as Record<string, unknown>;
    const interrupts = paused["__interrupt__"] as Interrupt[];
    expect(interrupts.map((item) => item.value).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ confirm: "abc -> unsure" }, { confirm: "fgh -> unsure" }]);
    const byQuestion = new Map(interrupts.map((item) => [(item.value as { confirm: string }).confirm, item.id]));
    // each waiting branch is a subgraph task: its checkpoint names the subgraph's namespace, its path the Send
    const waiting = (await client.threads.getState(thread.thread_id)).tasks.filter((task) => task.interrupts.length > 0) as (ThreadTask & { path?: unknown[] })[];
    expect(waiting).toHaveLength(2);
    for (const task of waiting) {
      expect(task.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: expect.stringMatching(new RegExp(`^${task.name}:${task.id}`)) });
      expect(task.path?.[0]).toBe("__pregel_push");
      expect(task.result).toBeNull();
    }

    const [run] = await client.runs.list(thread.thread_id);
    const approvals = (await api(server, "/approvals?status=pending")).body as { approvals: { run_id: string; graph_id: string; requests: unknown[]; interrupts: { id: string }[] }[] };
    expect(approvals.approvals.map((item) => [item.run_id, item.graph_id, item.requests, item.interrupts.map((i) => i.id).sort()])).toEqual([
      [run?.run_id, "research", [], [...byQuestion.values()].sort()],
    ]);

    // one value while two wait is refused naming them; a map by id answers both
    await refused(client.runs.wait(thread.thread_id, "research", { command: { resume: { keep: true } } }), 422, "2 interrupts are waiting");
    const done = (await client.runs.wait(thread.thread_id, "research", {
      command: { resume: { [byQuestion.get("abc -> unsure") as string]: { keep: true }, [byQuestion.get("fgh -> unsure") as string]: { keep: false } } },
    })) as Record<string, unknown>;
    expect(done["report"]).toBe("abc -> unsure (confirmed); de -> sure");
    expect((await api(server, "/approvals?status=pending")).body).toEqual({ approvals: [] });
  });

  itOnPrimary(backend)("example (c): a createAgent HITL interrupt is listed by /approvals and decided through command.resume {decisions}; bad decisions and a resume with nothing waiting are refused, nothing stored", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-serve-hitl-")));
    const saved = { model: process.env["DEVMIND_MODEL"], notes: process.env["NOTES_FILE"] };
    writeFileSync(join(dir, "turns.json"), JSON.stringify([{ tool_calls: [{ id: "note", name: "append_line", args: { line: "durable runs" } }] }, { content: "noted" }]));
    // the example builds its model from the environment, as a user's graph would
    process.env["DEVMIND_MODEL"] = `scripted:${join(dir, "turns.json")}`;
    process.env["NOTES_FILE"] = join(dir, "notes.txt");
    try {
      // the same agent whose reviewers may only approve or reject (no edit)
      const strict = () => createAgent({ model: createChatModel(loadConfig(process.env)), tools: [appendLine(join(dir, "strict.txt"))], middleware: [humanInTheLoopMiddleware({ interruptOn: { append_line: { allowedDecisions: ["approve", "reject"] } } })] });
      const server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, notes: notesAgent, strict } });
      servers.push(server);
      const client = new Client({ apiUrl: server.url, apiKey: TEST_KEYS.bob });
      const thread = await client.threads.create();
      const paused = (await client.runs.wait(thread.thread_id, "notes", { input: { messages: [{ role: "user", content: "note it" }] } })) as Record<string, unknown>;
      const [interrupt] = paused["__interrupt__"] as Interrupt[];
      expect(interrupt?.value).toMatchObject({ actionRequests: [{ name: "append_line", args: { line: "durable runs" } }] });
      // with the snake_case copies Agent Chat UI reads (its approval form), as the agent's have them
      const hitlCopies = {
        action_requests: [{ name: "append_line", args: { line: "durable runs" } }],
        review_configs: [{ action_name: "append_line", allowed_decisions: ["approve", "edit", "reject"] }],
        reviewConfigs: [{ actionName: "append_line", action_name: "append_line", allowedDecisions: ["approve", "edit", "reject"] }],
      };
      expect(interrupt?.value).toMatchObject(hitlCopies);
      const waitingState = await client.threads.getState(thread.thread_id);
      expect(waitingState.tasks.flatMap((task) => task.interrupts.map((item) => item.value))).toMatchObject([hitlCopies]);
      expect(Object.values((await client.threads.get(thread.thread_id)).interrupts ?? {}).flat().map((item) => (item as Interrupt).value)).toMatchObject([hitlCopies]);
      const [run] = await client.runs.list(thread.thread_id);
      const listed = (await api(server, "/approvals?status=pending")).body as { approvals: { run_id: string; requests: { name: string }[]; interrupts: unknown[] }[] };
      expect(listed.approvals.map((item) => [item.run_id, item.requests.map((request) => request.name), item.interrupts])).toEqual([[run?.run_id, ["append_line"], []]]);

      // refused before anything is stored: a wrong number of decisions, an unknown kind, a decision
      // bound to other arguments than those waiting (args_digest)
      const resume = (decisions: unknown[]) => client.runs.wait(thread.thread_id, "notes", { command: { resume: { decisions } } });
      await refused(resume([{ type: "approve" }, { type: "approve" }]), 422, "give exactly one decision for each");
      await refused(resume([]), 422, "give exactly one decision for each");
      await refused(resume([{ type: "maybe" }]), 422, "decision 0: type must be");
      await refused(resume([{ type: "approve", args_digest: argsDigest({ line: "other runs" }) }]), 409, "the arguments of append_line are not the ones reviewed");
      expect(await server.runtime.runs.resumes(run?.run_id as string)).toEqual([]);
      expect(existsSync(join(dir, "notes.txt"))).toBe(false);
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
      // a kind this interrupt does not allow
      const strictThread = await client.threads.create();
      await client.runs.wait(strictThread.thread_id, "strict", { input: { messages: [{ role: "user", content: "note it" }] } });
      await refused(client.runs.wait(strictThread.thread_id, "strict", { command: { resume: { decisions: [{ type: "edit", edited_action: { name: "append_line", args: { line: "x" } } }] } } }), 422, "edit is not allowed for append_line (allowed: approve, reject)");
      expect((await client.threads.get(strictThread.thread_id)).status).toBe("interrupted");
      // ...and one it allows
      await client.runs.wait(strictThread.thread_id, "strict", { command: { resume: { decisions: [{ type: "reject", message: "not now" }] } } });
      expect((await client.threads.get(strictThread.thread_id)).status).toBe("idle");
      expect(existsSync(join(dir, "strict.txt"))).toBe(false);

      const done = (await client.runs.wait(thread.thread_id, "notes", { command: { resume: { decisions: [{ type: "approve" }] } } })) as { messages: { type: string; content: unknown }[] };
      expect(done.messages.at(-1)).toMatchObject({ type: "ai", content: "noted" });
      expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("durable runs\n");
      expect((await server.runtime.runs.resumes(run?.run_id as string)).map((item) => [item.principal, item.interrupt_ids])).toEqual([["bob", [interrupt?.id]]]);
      expect((await api(server, "/approvals?status=pending")).body).toEqual({ approvals: [] });
      // nothing waits any more: a resume is a conflict, and no run is added
      const runs = (await client.runs.list(thread.thread_id)).length;
      await refused(resume([{ type: "approve" }]), 409, "has no interrupt");
      expect(await client.runs.list(thread.thread_id)).toHaveLength(runs);
      expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("durable runs\n");
    } finally {
      for (const [key, value] of [["DEVMIND_MODEL", saved.model], ["NOTES_FILE", saved.notes]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  itOnPrimary(backend)("a graph whose messages channel holds plain values streams values and updates; messages-tuple sends none of them", async () => {
    const server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, strings: stringsGraph } });
    servers.push(server);
    const client = new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice });
    const parts = (await collect(client.runs.stream(null, "strings", { input: { messages: ["hi"] }, streamMode: ["messages-tuple", "updates", "values"] }))) as Part[];
    expect(shape(parts)).toEqual([
      { event: "values", data: { messages: ["hi"] } },
      { event: "updates", data: { echo: { messages: ["echo 1"] } } },
      { event: "values", data: { messages: ["hi", "echo 1"] } },
    ]);
  });

  itOnPrimary(backend)("config and context reach the run; unknown assistants, options not implemented and bad resumes are refused naming them", async () => {
    const { server, client } = await start(0);
    const thread = await client.threads.create();
    const created = await client.runs.create(thread.thread_id, "review", { input: { topic: "t" }, config: { configurable: { team: "blue" }, recursion_limit: 7, tags: ["x"] }, context: { user: "u1" } });
    const stored = (await api(server, `/runs/${created.run_id}`)).body as Record<string, unknown>;
    expect(stored).toMatchObject({ graph_id: "review", assistant_id: assistantIdFor("review"), config: { configurable: { team: "blue" }, recursion_limit: 7, tags: ["x"] }, context: { user: "u1" } });
    await client.runs.cancel(thread.thread_id, created.run_id);

    const other = await client.threads.create();
    await refused(client.runs.create(other.thread_id, "nope", { input: {} }), 404, "nope");
    await refused(client.runs.wait(other.thread_id, "review", { input: { topic: "t" }, config: { run_name: "x" } as never }), 422, "config.run_name");
    await refused(client.runs.wait(other.thread_id, "review", { input: { topic: "t" }, webhook: "http://10.0.0.1/hook" }), 422, "webhook");
    await refused(client.runs.wait(other.thread_id, "review", { input: { topic: "t" }, checkpointId: "nope" }), 404, "no checkpoint");
    await refused(client.runs.create(other.thread_id, "review", { input: { topic: "t" }, streamSubgraphs: true }), 422, "stream_subgraphs");
    await expect(client.runs.wait(other.thread_id, "review", { command: { resume: { approved: true } } })).rejects.toMatchObject({ status: 409 });
    // none of the refused requests left a run behind
    expect(await client.runs.list(other.thread_id)).toEqual([]);
  });
});

describe.each(BACKENDS)("devmind serve --config examples/approval-graph/langgraph.json on %s", (backend) => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("serves the example's graph as its assistant and runs it to its interrupt and on to the end", async () => {
    const dir = mkdtempSync(join(tmpdir(), "devmind-serve-graphs-"));
    dirs.push(dir);
    if (backend === "pglite") seedDataDir(dir);
    const schema = `serve_graphs_${Date.now().toString(36)}_${process.pid}`;
    const env = {
      ...(backend === "postgres" ? { DATABASE_URL: TEST_DATABASE_URL as string, DEVMIND_DB_SCHEMA: schema } : { DEVMIND_DATA_DIR: dir }),
      DEVMIND_WORKSPACE: join(dir, "ws"),
      DEVMIND_API_KEYS: `alice=${TEST_KEYS.alice}`,
    };
    const serve = await spawnServe(["--config", "examples/approval-graph/langgraph.json", "--port", "0", "--workers", "1"], env);
    try {
      const client = new Client({ apiUrl: serve.url, apiKey: TEST_KEYS.alice });
      expect((await client.assistants.search()).map((a) => [a.graph_id, a.assistant_id])).toEqual([["review", assistantIdFor("review")]]);
      const thread = await client.threads.create();
      const paused = (await client.runs.wait(thread.thread_id, "review", { input: { topic: "tests" } })) as Record<string, unknown>;
      expect((paused["__interrupt__"] as Interrupt[]).map((item) => item.value)).toEqual([REVIEW_QUESTION]);
      const done = (await client.runs.wait(thread.thread_id, assistantIdFor("review"), { command: { resume: { approved: true } } })) as Record<string, unknown>;
      expect(done["outcome"]).toBe(`sent: ${REVIEW_QUESTION.draft}`);
      await expect(client.runs.wait(thread.thread_id, "agent", { input: { messages: ["hi"] } })).rejects.toMatchObject({ status: 404 });
    } finally {
      expect(await serve.stop()).toBe(0);
      if (backend === "postgres") {
        const owner = await openBackend("postgres");
        await owner.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await owner.close();
      }
    }
  }, 180_000);
});
