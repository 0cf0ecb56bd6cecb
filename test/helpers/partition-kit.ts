/**
 * Small parts of the partition test (test/int/partition.int.test.ts): its slow non-idempotent
 * script, the side-effect files it counts, a bounded wait, and a run's stored events and ledger.
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Database } from "../../src/db/types.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";

/** The slow, non-idempotent call: appends one line to `<tag>.effects` after this many seconds. */
export const SLOW_CALL_S = 3;

/** Two slow commands, each appending its line to `<tag>.effects` at its end (a partition falls in one), then the answer. */
export function slowScript(): ScriptedTurn[] {
  const slow = (id: string) => ({ id, name: "run_command", args: { command: `sleep ${SLOW_CALL_S}; echo {{tag}}:${id} >> {{tag}}.effects` } });
  return [
    { tool_calls: [slow("c1")], delay_ms: 50 },
    { tool_calls: [slow("c2")], delay_ms: 50 },
    { content: "done", delay_ms: 50 },
  ];
}

/** The non-empty lines of a file; none when it does not exist. */
export function lines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter((line) => line !== "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** How often each line appears. */
export function counts(list: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of list) out[line] = (out[line] ?? 0) + 1;
  return out;
}

/** Polls `probe` every 100 ms until it gives a value, for at most `withinMs` (then throws naming `what`). */
export async function until<T>(what: string, withinMs: number, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  const end = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > end) throw new Error(`not within ${withinMs} ms: ${what}`);
    await sleep(100);
  }
}

/** A run's events (in order) and its ledger rows (by call id), as stored. */
export async function runEvidence(db: Database, runId: string): Promise<{
  events: { type: string; data: Record<string, unknown> }[];
  ledger: { id: string; status: string; code: string | null; epoch: number }[];
}> {
  const events = await db.query<{ type: string; data: Record<string, unknown> }>(`SELECT type, data FROM "${db.schema}".run_events WHERE run_id = $1 ORDER BY seq`, [runId]);
  const ledger = await db.query<{ id: string; status: string; code: string | null; epoch: number }>(
    `SELECT tool_call_id AS id, status, result->'error'->>'code' AS code, lease_epoch::int AS epoch FROM "${db.schema}".tool_ledger WHERE run_id = $1 ORDER BY tool_call_id`,
    [runId],
  );
  return { events: events.rows, ledger: ledger.rows };
}
