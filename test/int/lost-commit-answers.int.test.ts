/**
 * Ambiguous commits cost nothing for the writes a caller repeats (issue 37, PostgreSQL): the
 * fault proxy lets the write and its COMMIT reach the server, swallows the answer and drops the
 * connection (test/helpers/pg-proxy.ts `loseAnswer`), as a failover does. Decisions on an
 * approval, a resume value, a run's or a thread's creation and a cancel retry through the fault with the key of
 * their one answer (decisions, resumes: `decision_keys`, migration 0017; a run, a thread: its id,
 * chosen before the first try) or by checking what the first try did (cancel): the call returns what the
 * first try did — no RUN_CONFLICT, nothing stored twice.
 * A caller's own retry with the same key is the same answer; with another request, a conflict.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { lostAnswerDatabase } from "../helpers/lost-answer-database.js";
import type { PgProxy } from "../helpers/pg-proxy.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[lost-commit-answers] cleanup failed: ${String(error)}`);
    }
  }
});

/** A graph that asks once (a generic interrupt, not a HITL request) and then ends with the answer. */
function askingGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => {
      const answer = interrupt({ question: "go on?" }) as string;
      return { messages: [{ role: "ai", content: `answered ${answer}` }] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END);
}

interface Setup {
  db: Database;
  proxy: PgProxy;
  runtime: Runtime;
  workspace: string;
}

/** A fault database behind the proxy, migrated, with a runtime whose agent writes a.txt (approval needed) and the asking graph. */
async function setUp(): Promise<Setup> {
  const { proxy, db, workspace } = await lostAnswerDatabase(cleanups, "devmind-lost-answers-");
  const model = new ScriptedChatModel([{ tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "x" } }] }, { content: "written" }]);
  const config = loadConfig({ DEVMIND_LEASE_MS: "10000", DEVMIND_WORKSPACE: workspace });
  const runtime = createRuntime({ db, model, config, graphs: { asking: askingGraph() } });
  cleanups.push(() => runtime.close());
  return { db, proxy, runtime, workspace };
}

/** A run of the agent that waits for the approval of its write_file call. */
async function waitingForApproval(runtime: Runtime): Promise<string> {
  const created = await runtime.runs.create({ input: { messages: ["write a.txt"] } });
  expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
  return created.run_id;
}

async function count(db: Database, sql: string, values: unknown[]): Promise<number> {
  return (await db.query<{ n: number }>(sql, values)).rows[0]?.n ?? -1;
}

async function eventTypes(runtime: Runtime, runId: string): Promise<string[]> {
  const types: string[] = [];
  for await (const event of runtime.runs.events(runId)) types.push(String(event["type"]));
  return types;
}

describe.runIf(TEST_DATABASE_URL !== undefined)("an answer to a waiting run whose commit's answer is lost costs nothing (PostgreSQL)", () => {
  it("decisions: committed, answer lost: decide retries with its key and returns the run its first try created, claimed for execute here", async () => {
    const { db, proxy, runtime, workspace } = await setUp();
    const waitingId = await waitingForApproval(runtime);
    const lost = proxy.loseAnswer("decisions_record");
    const next = await runtime.runs.decide(waitingId, { decisions: [{ type: "approve" }] }, { principal: "alice" }, { executeHere: true });
    await lost;
    expect(next.resumes_run).toBe(waitingId);
    // one decision, one resume, one run resuming the thread
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.run_decisions WHERE run_id = $1`, [waitingId])).toBe(1);
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.run_resumes WHERE run_id = $1`, [waitingId])).toBe(1);
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.runs WHERE resumes_run = $1`, [waitingId])).toBe(1);
    expect((await eventTypes(runtime, waitingId)).filter((type) => type === "approval.decided")).toHaveLength(1);
    // the lost try claimed the new run for this process: execute() continues it
    const done = await runtime.runs.execute(next.run_id);
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", answer: "written", attempt: 1 });
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("x");
  }, 60_000);

  it("decisions: a caller's retry with the same key is the same answer; with other decisions a conflict; another key the usual conflict", async () => {
    const { runtime } = await setUp();
    const waitingId = await waitingForApproval(runtime);
    const body = { decisions: [{ type: "approve" }] };
    const first = await runtime.runs.decide(waitingId, body, { principal: "alice", key: "answer-1" });
    const again = await runtime.runs.decide(waitingId, body, { principal: "alice", key: "answer-1" });
    expect(again.run_id).toBe(first.run_id);
    await expect(runtime.runs.decide(waitingId, { decisions: [{ type: "reject" }] }, { principal: "alice", key: "answer-1" })).rejects.toMatchObject({
      code: "RUN_CONFLICT",
      message: expect.stringContaining("decision key answer-1 was already used"),
    });
    await expect(runtime.runs.decide(waitingId, body, { principal: "alice", key: "answer-2" })).rejects.toMatchObject({ code: "RUN_CONFLICT" });
    await expect(runtime.runs.decide(waitingId, body, { principal: "alice", key: "" })).rejects.toMatchObject({ code: "RUN_INPUT_INVALID" });
  }, 60_000);

  it("a resume value: committed, answer lost: resume retries with its key and returns the run its first try created", async () => {
    const { db, proxy, runtime } = await setUp();
    const created = await runtime.runs.create({ assistantId: "asking", input: { messages: [{ role: "user", content: "hi" }] } });
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ stop_reason: "interrupt", waiting: true });
    const lost = proxy.loseAnswer("resumes_record");
    const next = await runtime.runs.resume(created.run_id, { value: "yes" }, { principal: "bob" });
    await lost;
    expect(next.resumes_run).toBe(created.run_id);
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.run_resumes WHERE run_id = $1`, [created.run_id])).toBe(1);
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.runs WHERE resumes_run = $1`, [created.run_id])).toBe(1);
    expect((await eventTypes(runtime, created.run_id)).filter((type) => type === "resume.given")).toHaveLength(1);
    expect(await runtime.runs.execute(next.run_id)).toMatchObject({ status: "success", stop_reason: "completed" });
    const state = await runtime.threads.state(created.thread_id);
    const messages = (state.values as { messages: { content: unknown }[] }).messages;
    expect(messages.map((message) => message.content)).toEqual(["hi", "answered yes"]);
  }, 60_000);

  it("a run's creation: committed, answer lost: create retries, finds the run its first try made (claimed for execute here), one run on the thread", async () => {
    const { db, proxy, runtime } = await setUp();
    const lost = proxy.loseAnswer("runs_create");
    const created = await runtime.runs.create({ input: { messages: ["write a.txt"] }, executeHere: true });
    await lost;
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.runs WHERE thread_id = $1`, [created.thread_id])).toBe(1);
    expect(await eventTypes(runtime, created.run_id)).toEqual(["run.created"]);
    // the lost try claimed the run for this process: execute() runs it
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true, attempt: 1 });
  }, 60_000);

  it("a thread's creation: committed, answer lost: create retries and returns the thread its first try made, not 'already exists'", async () => {
    const { db, proxy, runtime } = await setUp();
    const lost = proxy.loseAnswer("threads_create");
    const thread = await runtime.threads.create({ threadId: "6b0e9c1e-4a6f-4c2e-9a51-0c1d2e3f4a5b", metadata: { owner: "alice" } });
    await lost;
    expect(thread).toMatchObject({ thread_id: "6b0e9c1e-4a6f-4c2e-9a51-0c1d2e3f4a5b", metadata: { owner: "alice" } });
    expect(await count(db, `SELECT count(*)::int AS n FROM devmind.threads`, [])).toBe(1);
    // a caller's second create of the id (no fault) is still "already exists"
    await expect(runtime.threads.create({ threadId: thread.thread_id, metadata: { owner: "alice" } })).rejects.toMatchObject({ code: "RUN_CONFLICT" });
  }, 60_000);

  it("a cancel: committed, answer lost: cancel retries, finds the run cancelled by its own first try, and returns it", async () => {
    const { proxy, runtime } = await setUp();
    // no worker runs here: the run stays pending
    const created = await runtime.runs.create({ input: { messages: ["write a.txt"] } });
    const lost = proxy.loseAnswer("runs_request_cancel");
    const cancelled = await runtime.runs.cancel(created.run_id);
    await lost;
    expect(cancelled).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    const types = await eventTypes(runtime, created.run_id);
    expect([types.filter((type) => type === "run.cancel_requested").length, types.filter((type) => type === "run.cancelled").length]).toEqual([1, 1]);
    // a second cancel by a caller (no fault) is still the usual conflict
    await expect(runtime.runs.cancel(created.run_id)).rejects.toMatchObject({ code: "RUN_CONFLICT" });
  }, 60_000);
});
