import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { runCli, spawnCli } from "../helpers/cli.js";
import { cliContexts, ndjson, runIdFrom, type CliContext } from "../helpers/cli-env.js";
import { BACKENDS, itOnChildEngine } from "../helpers/databases.js";
import { snapshotTables, type TableSnapshot } from "../helpers/fuzz.js";
import { openDatabase } from "../../src/db/open-database.js";

const RESULT_KEYS = ["answer", "interrupts", "model_rounds", "resumes_run", "run_id", "status", "stop_reason", "thread_id", "tool_calls", "type", "unknown_outcomes", "values"];

/** A run that writes note.txt (which needs approval), then answers. */
const WRITE_SCRIPT: ScriptedTurn[] = [
  { content: "adding first", tool_calls: [{ id: "c_add", name: "add", args: { a: 2, b: 3 } }] },
  { tool_calls: [{ id: "c_write", name: "write_file", args: { path: "note.txt", content: "hello" } }] },
  { content: "all done" },
];

const context = cliContexts();

/** The run's lifecycle, model and tool events, in order (the node.* task events every graph's run also has are left out). */
function types(events: Record<string, unknown>[]): string[] {
  return events.map((event) => String(event["type"])).filter((type) => !type.startsWith("node."));
}

/**
 * Every table of the context's database (row count and digest), read in this process: what a
 * refused command must leave unchanged (a child per read would cost a CLI start each).
 */
async function snapshot(ctx: CliContext): Promise<TableSnapshot> {
  const url = ctx.env["DATABASE_URL"];
  const db = await openDatabase(url === undefined ? { dataDir: ctx.env["DEVMIND_DATA_DIR"] as string } : { url, schema: ctx.env["DEVMIND_DB_SCHEMA"] as string, maxConnections: 1 });
  try {
    return await snapshotTables(db);
  } finally {
    await db.close();
  }
}

describe.each(BACKENDS)("devmind run / approve / reject / resume / cancel on %s", (backend) => {
  itOnChildEngine(backend)("runs a task in-process: --json prints every stored event in seq order, then the result line; exit 0", async () => {
    const ctx = context(backend);
    const model = ctx.script("add.json", [{ tool_calls: [{ id: "c1", name: "add", args: { a: 2, b: 3 } }] }, { content: "2 + 3 = 5" }]);
    const result = await runCli(["run", "add 2 and 3", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = ndjson(result.stdout);
    const final = lines.at(-1) as Record<string, unknown>;
    const events = lines.slice(0, -1);
    expect(types(events)).toEqual([
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
    expect(events.map((event) => event["seq"])).toEqual(events.map((_, index) => index + 1));
    for (const event of events) {
      expect(event["run_id"]).toBe(final["run_id"]);
      expect(event["thread_id"]).toBe(final["thread_id"]);
      expect(typeof event["at"]).toBe("string");
    }
    expect(events.find((e) => e["type"] === "tool.call.started")).toMatchObject({ tool_call_id: "c1", tool: "add", args: { a: 2, b: 3 } });
    expect(events.find((e) => e["type"] === "tool.call.finished")).toMatchObject({ tool_call_id: "c1", tool: "add", ok: true, error_code: null });
    expect(events.at(-1)).toMatchObject({ type: "run.succeeded", answer: "2 + 3 = 5" });
    // the agent's nodes are tasks of LangGraph's stream, stored as every graph's are
    expect(events.filter((e) => e["type"] === "node.finished").map((e) => e["node"])).toEqual(["guard", "model", "guard", "tools", "guard", "model", "guard"]);
    expect(Object.keys(final).sort()).toEqual(RESULT_KEYS);
    expect(final).toMatchObject({ type: "result", status: "success", stop_reason: "completed", answer: "2 + 3 = 5", model_rounds: 2, tool_calls: 1, interrupts: [] });
    // the thread's values as the LangGraph API sends them: messages as message dicts
    const values = final["values"] as { messages: { type: string; content: unknown }[]; answer: unknown };
    expect(values.answer).toBe("2 + 3 = 5");
    expect(values.messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(values.messages.at(-1)?.content).toBe("2 + 3 = 5");
  }, 300_000);

  it("pauses at an approval (exit 3, the command to continue), then `approve` in a fresh process finishes it (exit 0)", async () => {
    const ctx = context(backend);
    const model = ctx.script("write.json", WRITE_SCRIPT);
    const first = await runCli(["run", "write a note", "--verbose"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(first.code).toBe(3);
    const runId = runIdFrom(first.stdout);
    expect(first.stdout).toMatch(/✓ add\(a=2, b=3\)  \d+ ms\n    args \{"a":2,"b":3\}\n/);
    expect(first.stdout).toMatch(/· model round 1: tool_calls, 1 tool call\(s\)/);
    expect(first.stdout).toContain('⏸ write_file(path="note.txt", content="hello") needs approval');
    expect(first.stdout).toContain(`  npx devmind approve ${runId}\n`);
    expect(first.stdout).toContain(`devmind reject ${runId} --reason`);
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);
    // the agent says its answer: neither its values nor a node count are printed, its counters are
    expect(first.stdout).not.toContain("values:");
    // the Platform's model: the run ended at the interrupt
    expect(first.stdout).toMatch(new RegExp(`run ${runId}: success \\(interrupt\\) · 2 model rounds · 1 tool call · \\d+ tokens\n`));

    const second = await runCli(["approve", runId, "--by", "alice", "--reason", "fine", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const lines = ndjson(second.stdout);
    const events = lines.slice(0, -1);
    // the approval created the run that resumes the thread (the Platform's model): its timeline is printed
    const result = lines.at(-1) as Record<string, unknown>;
    const resumedId = String(result["run_id"]);
    expect(resumedId).not.toBe(runId);
    expect(result).toMatchObject({ type: "result", status: "success", stop_reason: "completed", answer: "all done", model_rounds: 3, tool_calls: 2 });
    expect(events.map((event) => event["seq"])).toEqual(events.map((_, index) => index + 1));
    expect(types(events)).toEqual(["run.created", "resume.given", "run.started", "run.resumed", "tool.call.started", "tool.call.finished", "model.started", "model.finished", "run.succeeded"]);
    expect(events.find((e) => e["type"] === "run.resumed")).toMatchObject({ reason: "approval" });
    // the decision is on the run it answered, whose events end with it
    const waited = ndjson((await runCli(["events", runId, "--json"], ctx.env, { cwd: ctx.dir })).stdout);
    expect(types(waited).slice(-4)).toEqual(["approval.requested", "run.interrupted", "approval.decided", "resume.given"]);
    expect(waited.find((e) => e["type"] === "approval.decided")).toMatchObject({ tool_call_id: "c_write", decision: "approve", by: "alice", reason: "fine" });
    // a different process resumed it
    const started = waited.find((e) => e["type"] === "run.started")?.["worker"];
    const resumed = events.find((e) => e["type"] === "run.resumed")?.["worker"];
    expect(String(started).split(":")[1]).not.toBe(String(resumed).split(":")[1]);
    expect(events.filter((e) => e["type"] === "tool.call.finished" && e["tool"] === "write_file")).toHaveLength(1);
    expect(readFileSync(join(ctx.workspace, "note.txt"), "utf8")).toBe("hello");
    const shownWaiting = await runCli(["show", runId], ctx.env, { cwd: ctx.dir });
    const show = await runCli(["show", resumedId], ctx.env, { cwd: ctx.dir });
    expect(shownWaiting.code).toBe(0);
    expect(shownWaiting.stdout).toContain(`run ${runId}: success (interrupt) · 2 model rounds · 1 tool call`);
    expect(shownWaiting.stdout).toMatch(/\n  ✓ approved write_file by alice: fine\n/);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`run ${resumedId}: success (completed) · 3 model rounds · 2 tool calls`);
    expect(show.stdout).toMatch(/\n  ↻ resumed \(approval\) in process \d+/);
    expect(show.stdout).toMatch(/\n  ✓ write_file\(path="note.txt", content="hello"\)  \d+ ms\n  all done\n  ✓ succeeded\n/);
  }, 300_000);

  itOnChildEngine(backend)("reject --reason: the call never runs, the model is told, the run goes on; approve --args runs edited arguments", async () => {
    const ctx = context(backend);
    const model = ctx.script("write.json", WRITE_SCRIPT);
    const first = await runCli(["run", "write a note", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(first.code).toBe(3);
    const runId = String(ndjson(first.stdout).at(-1)?.["run_id"]);
    expect(ndjson(first.stdout).at(-1)).toMatchObject({
      type: "result",
      status: "success",
      stop_reason: "interrupt",
      interrupts: [{ id: expect.any(String), value: { actionRequests: [expect.objectContaining({ name: "write_file", args: { path: "note.txt", content: "hello" } })] } }],
    });
    expect(first.stderr).toContain(`devmind approve ${runId}`);
    const rejected = await runCli(["reject", runId, "--reason", "not now", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(rejected.code).toBe(0);
    const events = ndjson(rejected.stdout).slice(0, -1);
    // the rejection is on the run it answered; the new run that resumes the thread goes on
    const waited = ndjson((await runCli(["events", runId, "--json"], ctx.env, { cwd: ctx.dir })).stdout);
    expect(waited.find((e) => e["type"] === "approval.decided")).toMatchObject({ decision: "reject", reason: "not now" });
    expect(events.filter((e) => e["type"] === "tool.call.started" && e["tool"] === "write_file")).toHaveLength(0);
    expect(ndjson(rejected.stdout).at(-1)).toMatchObject({ status: "success", answer: "all done" });
    expect(ndjson(rejected.stdout).at(-1)?.["run_id"]).not.toBe(runId);
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);

    const again = await runCli(["run", "write a note", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    const againId = String(ndjson(again.stdout).at(-1)?.["run_id"]);
    const edited = await runCli(["approve", againId, "--args", '{"path":"other.txt","content":"edited"}'], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain('edited and approved write_file(path="other.txt", content="edited")');
    expect(edited.stdout).toContain('✓ write_file(path="other.txt", content="edited")');
    expect(readFileSync(join(ctx.workspace, "other.txt"), "utf8")).toBe("edited");
    expect(existsSync(join(ctx.workspace, "note.txt"))).toBe(false);
  }, 300_000);

  itOnChildEngine(backend)("refuses to decide or resume a finished run (before asking for a model) or an unknown run: exit 2, one line and a hint with the real id; cancel says it finished (exit 0); the database unchanged", async () => {
    const ctx = context(backend);
    const model = ctx.script("answer.json", [{ content: "hi" }]);
    const run = await runCli(["run", "say hi", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    expect(run.code).toBe(0);
    const runId = String(ndjson(run.stdout).at(-1)?.["run_id"]);
    const before = await snapshot(ctx);
    expect(before["runs"]?.count).toBe(1);
    // no model configured: the run is checked first, so the answer is about the run, not the model
    for (const args of [["approve", runId], ["reject", runId, "--reason", "no"], ["resume", runId]]) {
      const refused = await runCli(args, ctx.env, { cwd: ctx.dir });
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stderr.split("\n")[0]).toMatch(/^devmind: .*\[RUN_CONFLICT\]$/);
      expect(refused.stderr).toContain(`hint: \`npx devmind show ${runId}\` shows where the run is`);
      expect(refused.stdout).toBe("");
    }
    const cancel = await runCli(["cancel", runId], ctx.env, { cwd: ctx.dir });
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`run ${runId} already finished (success); nothing to cancel\n`);
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const args of [["approve", unknown, "--detach"], ["events", unknown], ["show", "not-a-run-id"]]) {
      const refused = await runCli(args, { ...ctx.env, ...model }, { cwd: ctx.dir });
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stderr.split("\n")[0]).toMatch(/^devmind: no run with id .*\[RUN_NOT_FOUND\]$/);
    }
    expect(await snapshot(ctx)).toEqual(before);
  }, 300_000);

  itOnChildEngine(backend)("Ctrl-C cancels the run cleanly: exit 4, status cancelled, the cancel events stored", async () => {
    const ctx = context(backend);
    const model = ctx.script("slow.json", [{ content: "never", delay_ms: 60_000 }]);
    const child = spawnCli(["run", "think slowly", "--json"], { ...ctx.env, ...model }, { cwd: ctx.dir });
    await child.waitFor((out) => out.includes('"type":"model.started"'));
    child.kill("SIGINT");
    const result = await child.exited;
    expect(result.code).toBe(4);
    const lines = ndjson(result.stdout);
    expect(types(lines.slice(0, -1))).toEqual(["run.created", "run.started", "model.started", "run.cancel_requested", "run.cancelled"]);
    expect(lines.at(-1)).toMatchObject({ type: "result", status: "interrupted", stop_reason: "cancelled" });
  }, 300_000);

  itOnChildEngine(backend)("`devmind cancel` ends a run whose process died while running it, as cancelled", async () => {
    const ctx = context(backend);
    const env = { ...ctx.env, DEVMIND_LEASE_MS: "1000", ...ctx.script("slow.json", [{ content: "never", delay_ms: 60_000 }]) };
    const child = spawnCli(["run", "think slowly", "--json"], env, { cwd: ctx.dir });
    await child.waitFor((out) => out.includes('"type":"model.started"'));
    child.kill("SIGKILL");
    const result = await child.exited;
    const runId = String(ndjson(result.stdout)[0]?.["run_id"]);
    const cancel = await runCli(["cancel", runId, "--json"], env, { cwd: ctx.dir });
    expect(cancel.code).toBe(0);
    expect(ndjson(cancel.stdout)).toEqual([expect.objectContaining({ type: "result", run_id: runId, status: "interrupted", stop_reason: "cancelled" })]);
    const events = ndjson((await runCli(["events", runId, "--json"], env, { cwd: ctx.dir })).stdout);
    expect(types(events).slice(-2)).toEqual(["run.cancel_requested", "run.cancelled"]);
  }, 300_000);

  itOnChildEngine(backend)("resume continues a run whose process was killed, without running a finished tool call again", async () => {
    const ctx = context(backend);
    const env = { ...ctx.env, DEVMIND_LEASE_MS: "1500" };
    const call = { id: "c_append", name: "append_file", args: { path: "log.txt", content: "once\n" } };
    // the first process hangs in the second model call; the second process's script answers at once
    const slow = ctx.script("slow.json", [{ tool_calls: [call] }, { content: "never", delay_ms: 60_000 }]);
    const quick = ctx.script("quick.json", [{ tool_calls: [call] }, { content: "appended" }]);
    const child = spawnCli(["run", "append a line", "--json"], { ...env, ...slow }, { cwd: ctx.dir });
    await child.waitFor((out) => out.split('"type":"model.started"').length === 3);
    child.kill("SIGKILL");
    const killed = await child.exited;
    const runId = String(ndjson(killed.stdout)[0]?.["run_id"]);
    expect(readFileSync(join(ctx.workspace, "log.txt"), "utf8")).toBe("once\n");

    const resumed = await runCli(["resume", runId, "--json"], { ...env, ...quick }, { cwd: ctx.dir });
    expect(resumed.code).toBe(0);
    const lines = ndjson(resumed.stdout);
    const events = lines.slice(0, -1);
    expect(events.filter((e) => e["type"] === "tool.call.started")).toHaveLength(1);
    expect(events.filter((e) => e["type"] === "run.resumed")).toHaveLength(1);
    expect(lines.at(-1)).toMatchObject({ status: "success", answer: "appended", tool_calls: 1 });
    expect(readFileSync(join(ctx.workspace, "log.txt"), "utf8")).toBe("once\n");
  }, 300_000);
});
