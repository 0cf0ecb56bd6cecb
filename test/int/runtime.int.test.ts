import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { argsDigest } from "../../src/runtime/interrupts/digest.js";
import type { EventRecord } from "../helpers/events.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";
import { tempWorkspace } from "../helpers/agent.js";
import { rejection } from "../helpers/assertions.js";


async function allEvents(runtime: Runtime, runId: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for await (const event of runtime.runs.events(runId)) out.push(event);
  return out;
}

describe.each(BACKENDS)("runtime on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let workspace: { dir: string; cleanup: () => void };
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  beforeEach(() => {
    workspace = tempWorkspace();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    workspace.cleanup();
  });

  function runtimeWith(turns: ScriptedTurn[], env: Record<string, string> = {}): { runtime: Runtime; model: ScriptedChatModel } {
    const model = new ScriptedChatModel(turns);
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "3000", DEVMIND_MODEL_MAX_RETRIES: "0", ...env });
    const runtime = createRuntime({ db, model, config });
    runtimes.push(runtime);
    return { runtime, model };
  }

  it("runs a task to success with its record and events", async () => {
    const { runtime } = runtimeWith([{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }], usage: { input_tokens: 10, output_tokens: 4 } }, { content: "5", usage: { input_tokens: 20, output_tokens: 1 } }]);
    const created = await runtime.runs.create({ input: { messages: ["add 2 and 3"] } });
    expect(created.status).toBe("pending");
    const live: string[] = [];
    runtime.runs.subscribe(created.run_id, (event) => live.push(event.type));
    const run = await runtime.runs.execute(created.run_id);
    expect(run).toMatchObject({ status: "success", stop_reason: "completed", answer: "5", model_rounds: 2, tool_calls: 1, attempt: 1, error: null, usage: { input_tokens: 30, output_tokens: 5 } });
    const events = await allEvents(runtime, created.run_id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // the agent runs through the one executor: its nodes are tasks in LangGraph's stream, as any graph's
    const nodes = events.flatMap((e) => (e.type === "node.finished" ? [(e as unknown as { node: string }).node] : []));
    expect(nodes).toEqual(["guard", "model", "guard", "tools", "guard", "model", "guard"]);
    // each model and tool step event sits inside its node's task
    const inside = (type: string, node: string): boolean => {
      const at = events.findIndex((e) => e.type === type);
      const started = events.slice(0, at).filter((e) => e.type === "node.started").pop() as { node?: string } | undefined;
      return started?.node === node;
    };
    expect(inside("model.started", "model") && inside("tool.call.started", "tools")).toBe(true);
    expect(events.filter((e) => !e.type.startsWith("node.")).map((e) => e.type)).toEqual([
      "run.created",
      "run.started",
      "model.started",
      "model.finished",
      "tool.call.started",
      "tool.call.finished",
      "model.started",
      "model.finished",
      "run.succeeded",
    ]);
    expect(events.every((e) => e.run_id === created.run_id && e.thread_id === created.thread_id)).toBe(true);
    expect(events.find((e) => e.type === "run.succeeded")).toMatchObject({ answer: "5" });
    expect(live).toContain("model.delta");
    expect(live).toContain("run.succeeded");
  });

  it("pauses for approval, records who decided what, and resumes with the approved arguments", async () => {
    const { runtime } = runtimeWith([
      { tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "one" } }, { id: "w2", name: "write_file", args: { path: "b.txt", content: "two" } }] },
      { content: "done" },
    ]);
    const created = await runtime.runs.create({ input: { messages: [{ role: "user", content: "write two files" }] } });
    const paused = await runtime.runs.execute(created.run_id);
    // the Platform's model: the run ends at the interrupt, its thread waits on it
    expect(paused).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await runtime.threads.get(created.thread_id)).status).toBe("interrupted");
    const requests = await runtime.runs.pendingApprovals(created.run_id);
    expect(requests.map((r) => r.tool_call_id)).toEqual(["w1", "w2"]);

    const partial = await runtime.runs.decide(created.run_id, { decisions: [{ type: "edit", tool_call_id: "w1", editedAction: { name: "write_file", args: { path: "a.txt", content: "EDITED" } } }] }, { principal: "alice", reason: "fix text" });
    // one call still undecided: no new run yet, the thread still waits on this one
    expect(partial).toMatchObject({ run_id: created.run_id, waiting: true });
    expect((await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "approve", tool_call_id: "w1" }] }, { principal: "bob" }))).code).toBe("RUN_CONFLICT");
    expect((await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "approve", tool_call_id: "nope" }] }, { principal: "bob" }))).code).toBe("RUN_CONFLICT");
    const invalid = await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "edit", tool_call_id: "w2", editedAction: { args: { path: 5 } } }] }, { principal: "bob" }));
    expect(invalid.code).toBe("RUN_INPUT_INVALID");
    // a decision bound to the arguments its reviewer saw (args_digest) holds only for exactly those
    const changed = await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "approve", tool_call_id: "w2", args_digest: argsDigest({ path: "b.txt", content: "TWO" }) }] }, { principal: "bob" }));
    expect(changed.code).toBe("RUN_CONFLICT");
    expect(changed.message).toContain("write_file (w2) are not the ones reviewed");
    expect((await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "approve", tool_call_id: "w2", args_digest: "not-a-digest" }] }, { principal: "bob" }))).code).toBe("RUN_INPUT_INVALID");
    expect((await runtime.runs.decisions(created.run_id)).map((d) => d.tool_call_id)).toEqual(["w1"]);
    const badReason = await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "reject", tool_call_id: "w2", message: 42 }] }, { principal: "bob" }));
    expect(badReason.code).toBe("RUN_INPUT_INVALID");
    expect(badReason.message).toContain("message must be a string");
    // the digest of the arguments shown: the decision holds
    const ready = await runtime.runs.decide(created.run_id, { decisions: [{ type: "reject", tool_call_id: "w2", message: "no b", args_digest: argsDigest({ path: "b.txt", content: "two" }) }] }, { principal: "bob" });
    // every call decided: a new run resumes the thread
    expect(ready).toMatchObject({ status: "pending", resumes_run: created.run_id, thread_id: created.thread_id });
    expect(ready.run_id).not.toBe(created.run_id);
    expect((await runtime.runs.get(created.run_id)).waiting).toBe(false);

    const done = await runtime.runs.execute(ready.run_id);
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", answer: "done" });
    // the budgets carry across the thread's runs: the resumed run counts both model rounds
    expect(done.model_rounds).toBe(2);
    expect(readFileSync(join(workspace.dir, "a.txt"), "utf8")).toBe("EDITED");
    expect(existsSync(join(workspace.dir, "b.txt"))).toBe(false);
    const rows = await db.query<{ tool_call_id: string; decision: string; principal: string; reason: string; args_digest: string | null }>(
      `SELECT tool_call_id, decision, principal, reason, args_digest FROM "${db.schema}".run_decisions WHERE run_id = $1 ORDER BY tool_call_id`,
      [created.run_id],
    );
    expect(rows.rows).toEqual([
      { tool_call_id: "w1", decision: "edit", principal: "alice", reason: "fix text", args_digest: argsDigest({ path: "a.txt", content: "EDITED" }) },
      { tool_call_id: "w2", decision: "reject", principal: "bob", reason: "no b", args_digest: null },
    ]);
    const types = (await allEvents(runtime, created.run_id)).map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["run.created", "run.started"]);
    expect(types.slice(-5)).toEqual(["approval.requested", "run.interrupted", "approval.decided", "approval.decided", "resume.given"]);
    const resumedTypes = (await allEvents(runtime, ready.run_id)).map((e) => e.type);
    // the new run's stream starts with the resume it was created with (the decisions are the waiting run's events)
    expect(resumedTypes.slice(0, 4)).toEqual(["run.created", "resume.given", "run.started", "run.resumed"]);
    expect(resumedTypes.at(-1)).toBe("run.succeeded");
    expect((await rejection(runtime.runs.decide(created.run_id, { decisions: [{ type: "approve" }] }, { principal: "bob" }))).code).toBe("RUN_CONFLICT");
  });

  it("keeps one active run per thread: a second is refused unless enqueued, and runs after the first", async () => {
    const { runtime } = runtimeWith([{ content: "first" }, { content: "second" }]);
    const first = await runtime.runs.create({ threadId: `t-${Date.now()}`, input: { messages: ["one"] } });
    expect((await rejection(runtime.runs.create({ threadId: first.thread_id, input: { messages: ["two"] } }))).code).toBe("RUN_CONFLICT");
    const second = await runtime.runs.create({ threadId: first.thread_id, input: { messages: ["two"] }, multitask: "enqueue" });
    const worker = runtime.worker({ concurrency: 2 });
    await worker.start();
    const a = await runtime.runs.wait(first.run_id, { timeoutMs: 20_000 });
    const b = await runtime.runs.wait(second.run_id, { timeoutMs: 20_000 });
    await worker.stop();
    expect([a.status, a.answer, b.status, b.answer]).toEqual(["success", "first", "success", "second"]);
  });

  it("drains a worker at a step boundary, and a manual execute resumes the run from there", async () => {
    const { runtime } = runtimeWith([
      { tool_calls: [{ id: "a1", name: "add", args: { a: 1, b: 1 } }], delay_ms: 600 },
      { tool_calls: [{ id: "a2", name: "add", args: { a: 2, b: 2 } }], delay_ms: 600 },
      { content: "four", delay_ms: 100 },
    ]);
    const created = await runtime.runs.create({ input: { messages: ["add twice"] } });
    const worker = runtime.worker({ concurrency: 1 });
    await worker.start();
    const deadline = Date.now() + 10_000;
    while (!(await allEvents(runtime, created.run_id)).some((e) => e.type === "model.started") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await worker.stop();
    const released = await runtime.runs.get(created.run_id);
    expect(released.status).toBe("pending");
    const done = await runtime.runs.execute(created.run_id);
    expect(done).toMatchObject({ status: "success", answer: "four", model_rounds: 3, tool_calls: 2 });
    const resumed = (await allEvents(runtime, created.run_id)).filter((e) => e.type === "run.resumed");
    expect(resumed).toMatchObject([{ reason: "manual", attempt: 2 }]);
  });

  it("cancels a pending run at once and refuses to cancel a finished one", async () => {
    const { runtime } = runtimeWith([{ content: "never" }]);
    const run = await runtime.runs.create({ input: { messages: ["x"] } });
    expect((await runtime.runs.cancel(run.run_id)).status).toBe("interrupted");
    expect((await rejection(runtime.runs.cancel(run.run_id))).code).toBe("RUN_CONFLICT");
    expect((await rejection(runtime.runs.execute(run.run_id))).code).toBe("RUN_CONFLICT");
    expect((await rejection(runtime.runs.get("not-a-run"))).code).toBe("RUN_NOT_FOUND");
  });

  it("cancels a running run through its signal", async () => {
    const { runtime, model } = runtimeWith([{ content: "slow", delay_ms: 5_000 }]);
    const run = await runtime.runs.create({ input: { messages: ["x"] } });
    const executing = runtime.runs.execute(run.run_id);
    await waitUntil("the model call to be in flight", () => model.calls.length > 0, 20_000);
    await runtime.runs.cancel(run.run_id);
    const done = await executing;
    expect(done).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
  });

  it("a cancel aborting a side-effecting call mid-flight: the run is interrupted and its record names the call whose outcome is unknown", async () => {
    const { runtime } = runtimeWith([{ tool_calls: [{ id: "cmd", name: "run_command", args: { command: "echo started > side.txt; sleep 20" } }] }, { content: "never" }], { DEVMIND_AUTO_APPROVE: "run_command" });
    const run = await runtime.runs.create({ input: { messages: ["run it"] } });
    const executing = runtime.runs.execute(run.run_id);
    await waitUntil("the command's side effect", () => existsSync(join(workspace.dir, "side.txt")), 20_000);
    await runtime.runs.cancel(run.run_id);
    const done = await executing;
    expect(done).toMatchObject({ status: "interrupted", stop_reason: "cancelled", unknown_outcomes: [{ tool_call_id: "cmd", tool: "run_command" }] });
  });

  it("re-queues a dead worker's run as soon as its lease lapses, not up to half a lease later", async () => {
    const { runtime } = runtimeWith([{ content: "recovered" }], { DEVMIND_LEASE_MS: "20000" });
    const run = await runtime.runs.create({ input: { messages: ["x"] } });
    // a worker took it on a short lease and died
    const store = new RunStore(db);
    await store.claim(run.run_id, { owner: "dead-worker", leaseMs: 600 });
    const due = await store.nextLeaseExpiry();
    expect(due).toBeGreaterThan(0);
    expect(due).toBeLessThanOrEqual(600);
    const worker = runtime.worker({ concurrency: 1 });
    const started = Date.now();
    await worker.start();
    // this worker's reaper looks every lease / 2 = 10 s, and at the earliest lease expiry
    const done = await runtime.runs.wait(run.run_id, { timeoutMs: 8_000 });
    const tookMs = Date.now() - started;
    await worker.stop();
    expect(done).toMatchObject({ status: "success", answer: "recovered", attempt: 2 });
    expect(tookMs).toBeLessThan(5_000);
    expect(await store.nextLeaseExpiry()).toBeNull();
  });

  it("continues a run whose process died after a step's writes were stored but before the checkpoint after it", async () => {
    // LangGraph saves a step's checkpoint while the next step already runs: a process can die with
    // the model step's writes stored and no checkpoint after them. getState then has no `next`
    // (tasks with stored writes are left out of it), yet the graph is unfinished.
    const { runtime } = runtimeWith([{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] }, { content: "5" }]);
    const run = await runtime.runs.create({ input: { messages: ["add"] } });
    expect((await runtime.runs.execute(run.run_id)).status).toBe("success");
    const s = `"${db.schema}"`;
    // the checkpoint the model step ran from: its stored writes hold the Send to the tools node
    const found = await db.query<{ id: string }>(
      `SELECT min(checkpoint_id) AS id FROM ${s}.checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = '' AND channel = '__pregel_tasks'`,
      [run.thread_id],
    );
    const cut = found.rows[0]?.id;
    expect(cut).toEqual(expect.any(String));
    // back to that moment: nothing stored after it, the run running on a lease that lapsed
    await db.query(`DELETE FROM ${s}.checkpoint_writes WHERE thread_id = $1 AND checkpoint_id > $2`, [run.thread_id, cut]);
    await db.query(`DELETE FROM ${s}.checkpoints WHERE thread_id = $1 AND checkpoint_id > $2`, [run.thread_id, cut]);
    await db.query(
      `UPDATE ${s}.runs SET status = 'pending', stop_reason = NULL, answer = NULL, finished_at = NULL, error_code = NULL, error_message = NULL WHERE run_id = $1`,
      [run.run_id],
    );
    const done = await runtime.runs.execute(run.run_id);
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", answer: "5", attempt: 2, model_rounds: 2, tool_calls: 1 });
    const events = await allEvents(runtime, run.run_id);
    expect(events.filter((e) => e.type === "run.resumed")).toMatchObject([{ reason: "manual", attempt: 2 }]);
    // the add call finished before: its stored result is used, it does not run again
    expect(events.filter((e) => e.type === "tool.call.started")).toHaveLength(1);
    expect(events.filter((e) => e.type === "run.succeeded")).toHaveLength(2);
  });

  it("answers a non-idempotent call found started (its process died) with TOOL_OUTCOME_UNKNOWN, never running it again", async () => {
    const { runtime } = runtimeWith([{ tool_calls: [{ id: "ap", name: "append_file", args: { path: "log.txt", content: "x\n" } }] }, { content: "checked" }]);
    const run = await runtime.runs.create({ input: { messages: ["append"] } });
    await db.query(
      `INSERT INTO "${db.schema}".tool_ledger (run_id, tool_call_id, tool, args_digest, status, lease_epoch) VALUES ($1, 'ap', 'append_file', $2, 'started', 0)`,
      [run.run_id, argsDigest({ path: "log.txt", content: "x\n" })],
    );
    const done = await runtime.runs.execute(run.run_id);
    expect(done.status).toBe("success");
    expect(existsSync(join(workspace.dir, "log.txt"))).toBe(false);
    const ledger = await db.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM "${db.schema}".tool_ledger WHERE run_id = $1`, [run.run_id]);
    expect(ledger.rows).toEqual([{ status: "failed", attempts: 2 }]);
    const events = await allEvents(runtime, run.run_id);
    expect(events.filter((e) => e.type === "tool.call.started")).toHaveLength(0);
    expect(events.filter((e) => e.type === "tool.call.finished")).toMatchObject([{ tool_call_id: "ap", ok: false, error_code: "TOOL_OUTCOME_UNKNOWN" }]);
    // the run record says so, once, whatever re-reads it
    expect(done.unknown_outcomes).toEqual([{ tool_call_id: "ap", tool: "append_file" }]);
    expect((await runtime.runs.get(run.run_id)).unknown_outcomes).toEqual([{ tool_call_id: "ap", tool: "append_file" }]);
  });
});
