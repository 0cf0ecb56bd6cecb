/**
 * Example (c): an agent built with LangChain's `createAgent` and its human-in-the-loop
 * middleware, tools wrapped by devmind's ledger, run by the runtime with a scripted model. The
 * approval is LangChain's interrupt shape: decisions are validated before anything is stored
 * (count, allowed types, edit shape), audited, and resume the run.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agent } from "../../examples/hitl-agent/graph.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { rejection } from "../helpers/assertions.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const SCRIPT = [
  {
    tool_calls: [
      { id: "look", name: "lookup", args: { term: "durable" } },
      { id: "note", name: "append_line", args: { line: "durable runs" } },
    ],
  },
  { content: "noted" },
];

describe.each(BACKENDS)("example (c) createAgent with HITL middleware on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  const saved = { model: process.env["DEVMIND_MODEL"], notes: process.env["NOTES_FILE"] };
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-hitl-")));
    writeFileSync(join(dir, "turns.json"), JSON.stringify(SCRIPT));
    // the example builds its model from the environment, as a user's graph would
    process.env["DEVMIND_MODEL"] = `scripted:${join(dir, "turns.json")}`;
  });
  afterAll(async () => {
    for (const [key, value] of [["DEVMIND_MODEL", saved.model], ["NOTES_FILE", saved.notes]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
    await drop();
    await owner.close();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  it("pauses with LangChain's HITL request, validates decisions, resumes on approval and appends once", async () => {
    const notes = join(dir, `notes-${backend}.txt`);
    process.env["NOTES_FILE"] = notes;
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: "3000" }), graphs: { notes: agent } });
    runtimes.push(runtime);
    const created = await runtime.runs.create({ assistantId: "notes", input: { messages: [{ role: "user", content: "note that runs are durable" }] } });
    const paused = await runtime.runs.execute(created.run_id);
    expect(paused).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect(await runtime.runs.pendingApprovals(created.run_id)).toEqual([{ name: "append_line", args: { line: "durable runs" }, description: expect.any(String) }]);
    expect(paused.interrupts?.[0]?.value).toMatchObject({ reviewConfigs: [{ actionName: "append_line", allowedDecisions: ["approve", "edit", "reject"] }] });

    // refused before anything is stored: wrong count, unknown type, an edit without args
    for (const body of [{ decisions: [] }, { decisions: [{ type: "approve" }, { type: "approve" }] }, { decisions: [{ type: "maybe" }] }, { decisions: [{ type: "edit", editedAction: { name: "append_line" } }] }]) {
      expect(await rejection(runtime.runs.decide(created.run_id, body, { principal: "erin" }))).toMatchObject({ code: "RUN_INPUT_INVALID" });
    }
    expect(await runtime.runs.resumes(created.run_id)).toEqual([]);

    const queued = await runtime.runs.decide(created.run_id, { decisions: [{ type: "edit", edited_action: { name: "append_line", args: { line: "durable runs, edited" } } }] }, { principal: "erin", reason: "wording" });
    expect(queued).toMatchObject({ status: "pending", resumes_run: created.run_id });
    const [audit] = await runtime.runs.resumes(created.run_id);
    expect(audit).toMatchObject({ principal: "erin", reason: "wording" });
    expect(Object.values(audit?.command.values ?? {})).toEqual([{ decisions: [{ type: "edit", editedAction: { name: "append_line", args: { line: "durable runs, edited" } } }] }]);

    const done = await runtime.runs.execute(queued.run_id);
    expect(done).toMatchObject({ status: "success", stop_reason: "completed" });
    expect(readFileSync(notes, "utf8")).toBe("durable runs, edited\n");
    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[] } };
    const messages = state.values.messages;
    expect(messages.map((message) => message.getType())).toEqual(["human", "ai", "tool", "tool", "ai"]);
    const toolIds = messages.filter((message) => message.getType() === "tool").map((message) => (message as BaseMessage & { tool_call_id: string }).tool_call_id);
    expect(toolIds.sort()).toEqual(["look", "note"]);
    expect(String(messages.at(-1)?.content)).toBe("noted");
    // both calls went through the run's ledger (effectively-once), with the edited arguments' call finished
    const ledger = await db.query<{ tool_call_id: string; status: string }>(`SELECT tool_call_id, status FROM "${db.schema}".tool_ledger WHERE run_id = $1 ORDER BY tool_call_id`, [created.run_id]);
    expect(ledger.rows).toEqual([
      { tool_call_id: "look", status: "succeeded" },
      { tool_call_id: "note", status: "succeeded" },
    ]);
  });
});
