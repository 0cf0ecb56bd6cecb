import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import type { EventRecord } from "../helpers/events.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { tempWorkspace } from "../helpers/agent.js";
import { runCli } from "../helpers/cli.js";
import { cliContexts, ndjson } from "../helpers/cli-env.js";

// How runs end, as their records and events say: the stop reasons CONTRACT section 3 maps to a
// status, the tool budget counted in executed calls, and approvals bound to the approved arguments.

async function allEvents(runtime: Runtime, runId: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for await (const event of runtime.runs.events(runId)) out.push(event);
  return out;
}

/** Waits `ms` milliseconds (its signal ends it early), like a tool that takes its time. */
const slowTool = defineTool({
  name: "slow",
  description: "waits ms milliseconds",
  schema: z.object({ ms: z.number().int().min(0).max(10_000) }),
  sideEffect: "none",
  approval: false,
  idempotent: true,
  async execute({ ms }, ctx) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()));
    });
    return { waited: ms };
  },
});

describe.each(BACKENDS)("how runs stop on %s", (backend) => {
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

  function runtimeWith(turns: ScriptedTurn[], env: Record<string, string> = {}): Runtime {
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "5000", DEVMIND_MODEL_MAX_RETRIES: "0", ...env });
    const runtime = createRuntime({ db, model: new ScriptedChatModel(turns), config, tools: [...builtinTools({ workspace: workspace.dir }), slowTool] });
    runtimes.push(runtime);
    return runtime;
  }

  it("the deadline ends the run as status timeout with its run.timeout event", async () => {
    // the deadline passes while the tool runs (the model's first reply must come before it, also on a busy machine)
    const runtime = runtimeWith([{ tool_calls: [{ id: "s", name: "slow", args: { ms: 5_000 } }] }, { content: "never" }], { DEVMIND_RUN_TIMEOUT_MS: "2500" });
    const created = await runtime.runs.create({ input: { messages: ["wait"] } });
    const run = await runtime.runs.execute(created.run_id);
    expect(run).toMatchObject({ status: "timeout", stop_reason: "deadline", model_rounds: 1, tool_calls: 1, error: { code: "DEADLINE" } });
    const types = (await allEvents(runtime, created.run_id)).map((e) => e.type);
    expect(types[types.length - 1]).toBe("run.timeout");
    expect(types.filter((t) => t === "run.timeout")).toHaveLength(1);
    expect(types).not.toContain("run.failed");
    expect(types.filter((t) => t === "model.started")).toHaveLength(1);
  });

  it("a new run on a thread that waits for approval leaves the call answered TOOL_NOT_RUN: it is not asked again", async () => {
    const runtime = runtimeWith([
      { tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "x" } }] },
      { content: "ok, something else then" },
    ]);
    const created = await runtime.runs.create({ input: { messages: ["write a.txt"] } });
    // the Platform's model: the run ended at the interrupt (nothing left to cancel), its thread waits on it
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    await expect(runtime.runs.cancel(created.run_id)).rejects.toMatchObject({ code: "RUN_CONFLICT" });
    const next = await runtime.runs.create({ threadId: created.thread_id, input: { messages: ["never mind"] } });
    expect((await runtime.runs.get(created.run_id)).waiting).toBe(false);
    const done = await runtime.runs.execute(next.run_id);
    expect(done).toMatchObject({ status: "success", answer: "ok, something else then" });
    const state = await runtime.threads.state(created.thread_id);
    const messages = (state.values as { messages: { getType(): string; content: unknown; tool_call_id?: string }[] }).messages;
    expect(messages.map((message) => message.getType())).toEqual(["human", "ai", "tool", "human", "ai"]);
    const answer = messages[2];
    expect(answer?.tool_call_id).toBe("w1");
    expect(JSON.parse(String(answer?.content))).toMatchObject({ ok: false, tool: "write_file", error: { code: "TOOL_NOT_RUN" } });
    expect(existsSync(join(workspace.dir, "a.txt"))).toBe(false);
    expect((await allEvents(runtime, next.run_id)).map((event) => event.type)).not.toContain("approval.requested");
  });

  it("an unexpected failure ends the run as error with stop reason internal_error and its run.failed event", async () => {
    const runtime = runtimeWith([{ tool_calls: [{ id: "a", name: "add", args: { a: 1, b: 2 } }] }, { content: "never" }]);
    const created = await runtime.runs.create({ input: { messages: ["add"] } });
    // the tool ledger's table goes away under the run: its first write fails with no devmind meaning
    await db.query(`ALTER TABLE "${db.schema}".tool_ledger RENAME TO tool_ledger_gone`);
    try {
      const run = await runtime.runs.execute(created.run_id);
      expect(run).toMatchObject({ status: "error", stop_reason: "internal_error", error: { message: expect.stringContaining("tool_ledger") } });
      const failed = (await allEvents(runtime, created.run_id)).filter((e) => e.type === "run.failed");
      expect(failed).toMatchObject([{ stop_reason: "internal_error", message: expect.stringContaining("tool_ledger") }]);
    } finally {
      await db.query(`ALTER TABLE "${db.schema}".tool_ledger_gone RENAME TO tool_ledger`);
    }
  });

  it("20 calls asked with a budget of 5: 5 run, the record says tool_calls 5, the other 15 are TOOL_NOT_RUN", async () => {
    const calls = Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, name: "add", args: { a: i, b: 1 } }));
    const runtime = runtimeWith([{ tool_calls: calls }, { content: "never" }], { DEVMIND_MAX_TOOL_CALLS: "5" });
    const created = await runtime.runs.create({ input: { messages: ["add a lot"] } });
    const run = await runtime.runs.execute(created.run_id);
    expect(run).toMatchObject({ status: "error", stop_reason: "max_tool_calls", tool_calls: 5, model_rounds: 1, error: { code: "MAX_TOOL_CALLS" } });
    const events = await allEvents(runtime, created.run_id);
    // the five run in parallel, so their events come in any order
    expect(events.filter((e) => e.type === "tool.call.started").map((e) => String(e["tool_call_id"])).sort()).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(events.filter((e) => e.type === "tool.call.finished").every((e) => e["ok"] === true)).toBe(true);
    const state = await runtime.threads.state(created.thread_id);
    const answers = ((state.values as { messages: { type?: string; content?: unknown; tool_call_id?: string }[] }).messages ?? [])
      .filter((m) => typeof m.tool_call_id === "string")
      .map((m) => (JSON.parse(String(m.content)) as { error: { code: string } | null }).error?.code ?? "ok");
    expect(answers).toEqual([...Array(5).fill("ok"), ...Array(15).fill("TOOL_NOT_RUN")]);
  });

  describe("a call that needs approval runs only with arguments whose digest matches the approval", () => {
    const turns: ScriptedTurn[] = [{ tool_calls: [{ id: "w", name: "write_file", args: { path: "w.txt", content: "ORIGINAL-TEXT" } }] }, { content: "done" }];

    /** The waiting run (its decision and the ledger are keyed by it) and the pending run the approval created. */
    async function approved(runtime: Runtime): Promise<{ waitingId: string; runId: string; threadId: string }> {
      const created = await runtime.runs.create({ input: { messages: ["write"] } });
      expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
      const resumed = await runtime.runs.decide(created.run_id, { decisions: [{ type: "approve" }] }, { principal: "alice" });
      expect(resumed).toMatchObject({ status: "pending", resumes_run: created.run_id });
      return { waitingId: created.run_id, runId: resumed.run_id, threadId: created.thread_id };
    }

    async function expectRefused(runtime: Runtime, { waitingId, runId }: { waitingId: string; runId: string }): Promise<void> {
      const run = await runtime.runs.execute(runId);
      // the refusal reaches the model, which goes on: the run itself succeeds, having run nothing
      expect(run).toMatchObject({ status: "success", answer: "done", tool_calls: 0 });
      expect(existsSync(join(workspace.dir, "w.txt"))).toBe(false);
      const events = await allEvents(runtime, runId);
      expect(events.filter((e) => e.type === "tool.call.started")).toEqual([]);
      expect(events.filter((e) => e.type === "tool.call.finished")).toMatchObject([{ tool_call_id: "w", ok: false, error_code: "PERMISSION_DENIED" }]);
      const ledger = await db.query(`SELECT tool_call_id FROM "${db.schema}".tool_ledger WHERE run_id = ANY($1::uuid[])`, [[waitingId, runId]]);
      expect(ledger.rows).toEqual([]);
    }

    it("runs with the approved arguments when nothing was tampered with", async () => {
      const runtime = runtimeWith(turns);
      const { runId } = await approved(runtime);
      expect(await runtime.runs.execute(runId)).toMatchObject({ status: "success", stop_reason: "completed", tool_calls: 1 });
      expect(existsSync(join(workspace.dir, "w.txt"))).toBe(true);
    });

    it("refuses the call when the stored decision's digest was changed", async () => {
      const runtime = runtimeWith(turns);
      const ids = await approved(runtime);
      // the decision is stored on the run it answered
      const changed = await db.query(`UPDATE "${db.schema}".run_decisions SET args_digest = repeat('0', 64) WHERE run_id = $1 AND tool_call_id = 'w'`, [ids.waitingId]);
      expect(changed.rowCount).toBe(1);
      await expectRefused(runtime, ids);
    });

    it("refuses the call when the arguments were changed in the thread's stored state after the approval", async () => {
      const runtime = runtimeWith(turns);
      const ids = await approved(runtime);
      const { threadId } = ids;
      let changed = 0;
      for (const table of ["checkpoint_blobs", "checkpoint_writes"]) {
        const result = await db.query(`UPDATE "${db.schema}".${table} SET json = replace(json, 'ORIGINAL-TEXT', 'TAMPERED-TEXT') WHERE thread_id = $1 AND json LIKE '%ORIGINAL-TEXT%'`, [threadId]);
        changed += result.rowCount;
      }
      expect(changed).toBeGreaterThan(0);
      await expectRefused(runtime, ids);
    });
  });
});

describe("the deadline through the CLI", () => {
  const context = cliContexts();

  it("`devmind run` exits 1 when the run times out, with run.timeout then the result", async () => {
    const ctx = context("pglite");
    const model = ctx.script("late.json", [{ content: "too late", delay_ms: 5_000 }]);
    const result = await runCli(["run", "answer slowly", "--json"], { ...ctx.env, ...model, DEVMIND_RUN_TIMEOUT_MS: "300" }, { cwd: ctx.dir });
    expect(result.code).toBe(1);
    const lines = ndjson(result.stdout);
    expect(lines.map((line) => line["type"]).slice(-2)).toEqual(["run.timeout", "result"]);
    expect(lines[lines.length - 1]).toMatchObject({ status: "timeout", stop_reason: "deadline" });
  }, 120_000);
});
