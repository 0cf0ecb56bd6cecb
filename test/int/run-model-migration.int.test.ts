/**
 * Migration 0013 (the Platform's run model) on a database written by the previous release: a run
 * the previous release left waiting for approval (status `interrupted`, one of its two calls
 * already decided) becomes a run that ended at its interrupt, its thread waiting on it; the
 * decision stored before is kept and honoured, the last one starts the run that resumes the
 * thread, and a cancelled run becomes `interrupted`.
 *
 * The previous release's rows are made as it stored them: the run is taken to its approval by
 * this release in a scratch schema, then copied (checkpoints, events, decisions, threads) into a
 * schema migrated only up to 0012, with the run row in the previous release's shape.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { readMigrationFiles } from "../../src/db/migration-files.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, dropSchema, freshMigratedSchema, freshSchemaName, openBackend } from "../helpers/databases.js";

/** Tables migration 0013 leaves as they were: copied as they are, those runs rows refer to first. */
const COPIED_BEFORE_RUNS = ["checkpoints", "checkpoint_blobs", "checkpoint_writes", "threads", "assistants", "assistant_versions"];
const COPIED_AFTER_RUNS = ["run_events", "run_decisions", "tool_ledger", "run_resumes", "run_completions"];

/** The runs columns of the previous release (before 0013 added waiting, resumes_run, ledger_run). */
const OLD_RUN_COLUMNS = [
  "run_id", "thread_id", "status", "stop_reason", "input", "limits", "answer", "model_rounds", "tool_calls", "input_tokens", "output_tokens",
  "error_code", "error_message", "attempt", "lease_owner", "lease_epoch", "lease_expires_at", "active_ms", "cancel_requested_at",
  "created_at", "updated_at", "finished_at", "graph_id", "assistant_id", "config", "context", "interrupts", "interrupt_checkpoint",
  "metadata", "not_before", "interrupt_before", "interrupt_after", "checkpoint_id", "stream_mode", "error_name",
];

describe.each(BACKENDS)("migration 0013 on a database of the previous release (%s)", (backend) => {
  let owner: Database;
  const workspace = tempWorkspace();
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
    workspace.cleanup();
  });

  it("a run waiting for approval keeps its decision and continues in a new run; a cancelled run is interrupted", async () => {
    const turns = [
      { tool_calls: [{ id: "w1", name: "write_file", args: { path: "one.txt", content: "1" } }, { id: "w2", name: "write_file", args: { path: "two.txt", content: "2" } }] },
      { content: "wrote them" },
    ];
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_LEASE_MS: "3000" });

    // the rows as the previous release left them: taken to the approval here, then copied
    const scratch = await freshMigratedSchema(owner);
    const old = withSchema(owner, freshSchemaName("old"));
    try {
      const first = createRuntime({ db: scratch.db, model: new ScriptedChatModel(turns), config });
      const run = await first.runs.create({ input: { messages: ["write two files"] } });
      expect(await first.runs.execute(run.run_id)).toMatchObject({ waiting: true });
      const partial = await first.runs.decide(run.run_id, { decisions: [{ type: "edit", tool_call_id: "w1", editedAction: { name: "write_file", args: { path: "one.txt", content: "edited" } } }] }, { principal: "alice", reason: "better" });
      expect(partial.run_id).toBe(run.run_id);
      const cancelled = await first.runs.create({ input: { messages: ["never mind"] } });
      await first.runs.cancel(cancelled.run_id);
      await first.close();

      await migrate(old, { files: readMigrationFiles().filter((file) => file.version <= 12) });
      const from = `"${scratch.db.schema}"`;
      const to = `"${old.schema}"`;
      for (const table of COPIED_BEFORE_RUNS) await owner.query(`INSERT INTO ${to}.${table} SELECT * FROM ${from}.${table}`);
      const columns = OLD_RUN_COLUMNS.join(", ");
      // the previous release's shape: waiting for approval was status interrupted (not finished); cancelled its own status
      await owner.query(
        `INSERT INTO ${to}.runs (${columns})
         SELECT ${OLD_RUN_COLUMNS.map((column) =>
           column === "status" ? "CASE WHEN waiting THEN 'interrupted' WHEN status = 'interrupted' THEN 'cancelled' ELSE status END"
           : column === "stop_reason" ? "CASE WHEN waiting THEN NULL ELSE stop_reason END"
           : column === "finished_at" ? "CASE WHEN waiting THEN NULL ELSE finished_at END"
           : column,
         ).join(", ")}
           FROM ${from}.runs`,
      );
      // the previous release's columns (a later migration may add some: run_events.batch_key, 0014)
      for (const table of COPIED_AFTER_RUNS) {
        const oldColumns = await owner.query<{ name: string }>(`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, [old.schema, table]);
        const list = oldColumns.rows.map((row) => `"${row.name}"`).join(", ");
        await owner.query(`INSERT INTO ${to}.${table} (${list}) SELECT ${list} FROM ${from}.${table}`);
      }
      const before = await owner.query<{ status: string }>(`SELECT status FROM ${to}.runs ORDER BY created_at`);
      expect(before.rows.map((row) => row.status)).toEqual(["interrupted", "cancelled"]);

      // this release's migration
      const result = await migrate(old);
      expect(result.applied).toEqual(readMigrationFiles().map((file) => file.version).filter((version) => version >= 13));
      const runtime = createRuntime({ db: old, model: new ScriptedChatModel(turns), config });
      try {
        const waiting = await runtime.runs.get(run.run_id);
        expect(waiting).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true, resumes_run: null });
        expect(waiting.interrupts).toHaveLength(1);
        expect((await runtime.threads.get(run.thread_id)).status).toBe("interrupted");
        expect(await runtime.runs.get(cancelled.run_id)).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
        // the decision made before the upgrade is still there: only w2 waits
        expect((await runtime.runs.decisions(run.run_id)).map((d) => [d.tool_call_id, d.decision, d.principal])).toEqual([["w1", "edit", "alice"]]);
        expect((await runtime.runs.interrupted()).find((item) => item.run_id === run.run_id)?.decided_tool_calls).toEqual(["w1"]);

        const next = await runtime.runs.decide(run.run_id, { decisions: [{ type: "approve", tool_call_id: "w2" }] }, { principal: "bob" });
        expect(next).toMatchObject({ status: "pending", resumes_run: run.run_id });
        expect(await runtime.runs.execute(next.run_id)).toMatchObject({ status: "success", stop_reason: "completed", answer: "wrote them" });
        // both decisions held: the edited arguments of the one made before the upgrade, and the approval after it
        expect(readFileSync(join(workspace.dir, "one.txt"), "utf8")).toBe("edited");
        expect(readFileSync(join(workspace.dir, "two.txt"), "utf8")).toBe("2");
        expect(existsSync(join(workspace.dir, "three.txt"))).toBe(false);
        expect((await runtime.threads.get(run.thread_id)).status).toBe("idle");
      } finally {
        await runtime.close();
      }
    } finally {
      await dropSchema(owner, old.schema);
      await scratch.drop();
    }
  });
});
