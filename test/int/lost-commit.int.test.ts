/**
 * Ambiguous commits cost nothing (issue 37, PostgreSQL): the fault proxy lets a write and its
 * COMMIT reach the server, swallows the answer and drops the connection (test/helpers/pg-proxy.ts
 * `loseAnswer`), as a failover does. For each kind of write a retry repeats — an event batch
 * (alone, and riding a checkpoint or ledger write), a ledger begin, a ledger outcome, the run's
 * claim and its finish — the run ends once and `success`, its events have no duplicate and no
 * gap, and its non-idempotent tool ran exactly once (no TOOL_OUTCOME_UNKNOWN, no RUN_CONFLICT).
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { lostAnswerDatabase } from "../helpers/lost-answer-database.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[lost-commit] cleanup failed: ${String(error)}`);
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Tool bodies run, per run. */
const ran = new Map<string, number>();

/** A side effect that must happen once: not idempotent, so a call found `started` would be TOOL_OUTCOME_UNKNOWN. */
const sideEffect = defineTool({
  name: "side_effect",
  description: "Counts its executions.",
  schema: z.object({ label: z.string() }),
  sideEffect: "local",
  approval: false,
  idempotent: false,
  execute: async ({ label }, context) => {
    ran.set(String(context.runId), (ran.get(String(context.runId)) ?? 0) + 1);
    return { wrote: label };
  },
});

const SCRIPT: ScriptedTurn[] = [{ tool_calls: [{ name: "side_effect", args: { label: "a" } }] }, { content: "done" }];

/**
 * Each case: the statement whose answer is lost (its name, sent with every execution) and which
 * of its executions from the run's creation on. Event batches go alone or ride the next
 * checkpoint or ledger write's transaction, whichever comes: the first two appends cover both (how many
 * batches a run makes after them depends on timing, so no case names a later one).
 */
const CASES: { write: string; marker: string; nth: number }[] = [
  { write: "the claim", marker: "runs_claim_next", nth: 1 },
  { write: "event batch 1", marker: "events_append_fenced", nth: 1 },
  { write: "event batch 2", marker: "events_append_fenced", nth: 2 },
  { write: "the ledger begin", marker: "ledger_begin", nth: 1 },
  { write: "the ledger outcome", marker: "ledger_complete", nth: 1 },
  { write: "the run's finish", marker: "runs_finish", nth: 1 },
];

describe.runIf(TEST_DATABASE_URL !== undefined)("a commit whose answer is lost costs nothing (PostgreSQL)", () => {
  it.each(CASES)("$write: committed, answer lost, connection dropped: one run end, no duplicate or missing event, the side effect once", async ({ marker, nth }) => {
    const { proxy, db, workspace } = await lostAnswerDatabase(cleanups, "devmind-lost-commit-");
    const config = loadConfig({ DEVMIND_LEASE_MS: "10000", DEVMIND_MAX_ATTEMPTS: "3", DEVMIND_WORKSPACE: workspace });
    const runtime = createRuntime({ db, model: new ScriptedChatModel(SCRIPT), tools: [sideEffect], config });
    cleanups.push(() => runtime.close());

    const run = await runtime.runs.create({ input: { messages: ["go"] } });
    let lost = false;
    const losing = proxy.loseAnswer(marker, nth).then(() => (lost = true));
    const worker = runtime.worker({ concurrency: 1 });
    await worker.start();
    cleanups.push(() => worker.stop());

    const deadline = Date.now() + 60_000;
    for (;;) {
      const now = await runtime.runs.get(run.run_id).catch(() => null);
      if (now !== null && now.status !== "pending" && now.status !== "running") break;
      if (Date.now() > deadline) throw new Error(`run ${run.run_id} did not end within 60 s (answer lost: ${lost})`);
      await sleep(50);
    }
    await Promise.race([losing, sleep(1_000)]);
    expect(lost, `the answer to ${marker} #${nth} was lost`).toBe(true);

    const ended = await runtime.runs.get(run.run_id);
    expect([ended.status, ended.stop_reason, ended.error]).toEqual(["success", "completed", null]);
    expect(ended.answer).toBe("done");
    // the database was away for a moment, the process lived: no attempt spent
    expect(ended.attempt).toBe(1);
    expect(ran.get(run.run_id)).toBe(1);

    const events: Record<string, unknown>[] = [];
    for await (const event of runtime.runs.events(run.run_id)) events.push(event);
    // no gap: seq 1..n
    expect(events.map((event) => event["seq"])).toEqual(events.map((_, index) => index + 1));
    const count = (type: string): number => events.filter((event) => event["type"] === type).length;
    expect([count("run.created"), count("tool.call.started"), count("tool.call.finished"), count("run.succeeded")]).toEqual([1, 1, 1, 1]);
    // no event stored twice: each (type, fields) once, but for what a fault adds (a resume) or
    // re-executes (the step the fault stopped starts again: its node.started)
    const seen = new Set<string>();
    for (const { seq: _seq, at: _at, ...rest } of events) {
      if (rest["type"] === "run.resumed" || rest["type"] === "node.started") continue;
      const key = JSON.stringify(rest);
      expect(seen.has(key), `event stored twice: ${key}`).toBe(false);
      seen.add(key);
    }
    const finished = events.find((event) => event["type"] === "tool.call.finished");
    expect([finished?.["ok"], finished?.["error_code"] ?? null]).toEqual([true, null]);
    const ledger = (await db.query<{ status: string; result: unknown }>(`SELECT status, result FROM devmind.tool_ledger`)).rows;
    expect(ledger.map((row) => row.status)).toEqual(["succeeded"]);
    expect(JSON.stringify(ledger)).not.toContain("TOOL_OUTCOME_UNKNOWN");
  }, 90_000);
});
