/**
 * The evidence check of the chaos tests (test/int/chaos.int.test.ts, pgbouncer.int.test.ts,
 * pg-failover.int.test.ts): runs whose scripted model appends tagged lines with `append_file`
 * (not idempotent), executed by workers that were killed, or whose database went away. It reads
 * only what is stored — runs, events, tool ledger, checkpoints — and the files, and lists every
 * broken promise: a run that did not end once, a line appended twice, a missing line that is not
 * TOOL_OUTCOME_UNKNOWN, a claim by a worker that was not alive, a forked checkpoint chain.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "../../src/db/types.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";

/** Call id -> the line number it appends (`<tag>:<n>`). */
export const CHAOS_CALLS: Record<string, number> = { c1: 1, c2: 2, c3: 3, c4: 4, c5: 5 };
/** The answer of a run that made all its calls. */
export const CHAOS_ANSWER = "appended 5 lines";

function append(id: string): { id: string; name: string; args: Record<string, unknown> } {
  return { id, name: "append_file", args: { path: "{{tag}}.txt", content: `{{tag}}:${CHAOS_CALLS[id]}\n` } };
}

/** Five append calls over four tool rounds (one round with two calls in parallel), then the answer; `delayMs` scales the model's pauses. */
export function chaosScript(delayMs: { tool: number; answer: number } = { tool: 450, answer: 200 }): ScriptedTurn[] {
  const t = delayMs.tool;
  return [
    { tool_calls: [append("c1")], delay_ms: t - 50 },
    { tool_calls: [append("c2"), append("c3")], delay_ms: t + 50 },
    { tool_calls: [append("c4")], delay_ms: t - 50 },
    { tool_calls: [append("c5")], delay_ms: t + 50 },
    { content: CHAOS_ANSWER, delay_ms: delayMs.answer },
  ];
}

/** What `auditChaos` needs to know besides the database. */
export interface ChaosAuditInput {
  db: Database;
  schema: string;
  workspace: string;
  /** Run id -> its tag (= its thread id), for every run the test created. */
  tags: Map<string, string>;
  runs: number;
  maxAttempts: number;
  /** The life of the worker a `run.started` event names (`host:pid:…`), or undefined when no known worker has that name. */
  lifeOf(worker: unknown): { startedAt: number; killedAt: number | null } | undefined;
}

/** Counts of what happened, for the test's summary line. */
export interface ChaosStats {
  success: number;
  maxAttempts: number;
  recovered: number;
  attempts: Record<number, number>;
  linesMissing: number;
  unknown: number;
  unknownButAppended: number;
  inFlightAtMaxAttempts: number;
  claimEvents: number;
  /** `run.resumed` of the same attempt: a worker that lived on through a database fault continued its run. */
  faultResumes: number;
}

interface RunRow {
  run_id: string;
  thread_id: string;
  status: string;
  stop_reason: string | null;
  attempt: number;
  lease_epoch: number;
  model_rounds: number;
  tool_calls: number;
  answer: string | null;
  error_code: string | null;
  error_message: string | null;
}

interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  at: Date;
  data: Record<string, unknown>;
}

interface LedgerRow {
  run_id: string;
  tool_call_id: string;
  status: "started" | "succeeded" | "failed";
  result: { ok?: boolean; error?: { code?: string } | null } | null;
  attempts: number;
  lease_epoch: number;
}

interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k) ?? [];
    list.push(row);
    out.set(k, list);
  }
  return out;
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter((line) => line !== "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Reads the stored evidence of a chaos run and returns every problem found, with counts. */
export async function auditChaos(input: ChaosAuditInput): Promise<{ problems: string[]; stats: ChaosStats }> {
  const db = input.db;
  const q = <R>(sql: string) => db.query<R>(sql).then((r) => r.rows);
  const runs = await q<RunRow>(
    `SELECT run_id::text AS run_id, thread_id, status, stop_reason, attempt, lease_epoch::int AS lease_epoch,
            model_rounds, tool_calls, answer, error_code, error_message FROM "${input.schema}".runs`,
  );
  const events = groupBy(await q<EventRow>(`SELECT run_id::text AS run_id, seq, type, at, data FROM "${input.schema}".run_events ORDER BY run_id, seq`), (e) => e.run_id);
  const ledger = groupBy(
    await q<LedgerRow>(`SELECT run_id::text AS run_id, tool_call_id, status, result, attempts, lease_epoch::int AS lease_epoch FROM "${input.schema}".tool_ledger`),
    (l) => l.run_id,
  );
  const checkpoints = groupBy(
    await q<CheckpointRow>(`SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM "${input.schema}".checkpoints`),
    (c) => `${c.thread_id}\u0000${c.checkpoint_ns}`,
  );

  const problems: string[] = [];
  const stats = { success: 0, maxAttempts: 0, recovered: 0, attempts: {} as Record<number, number>, linesMissing: 0, unknown: 0, unknownButAppended: 0, inFlightAtMaxAttempts: 0, claimEvents: 0, faultResumes: 0 };
    if (runs.length !== input.runs) problems.push(`${runs.length} runs stored, ${input.runs} created`);

  for (const run of runs) {
    const id = run.run_id.slice(0, 8);
    const problem = (text: string): void => void problems.push(`run ${id}: ${text}`);
    const tag = input.tags.get(run.run_id);
    if (tag === undefined || tag !== run.thread_id) problem("unknown run or thread");
    stats.attempts[run.attempt] = (stats.attempts[run.attempt] ?? 0) + 1;
    if (run.attempt > 1) stats.recovered += 1;

    // 1. terminal, with the outcome it may have
    const ok = run.status === "success" && run.stop_reason === "completed";
    const exhausted = run.status === "error" && run.stop_reason === "max_attempts";
    if (ok) stats.success += 1;
    else if (exhausted) stats.maxAttempts += 1;
    else problem(`ended ${run.status} / ${run.stop_reason} (${run.error_code}: ${run.error_message})`);
    if (ok && (run.model_rounds !== 5 || run.tool_calls !== 5 || run.answer !== CHAOS_ANSWER)) problem(`success with rounds ${run.model_rounds}, calls ${run.tool_calls}, answer ${run.answer}`);
    if (exhausted && run.attempt !== input.maxAttempts) problem(`max_attempts after ${run.attempt} attempts`);
    // a claim bumps attempt and epoch together; nothing else changes either
    if (run.lease_epoch !== run.attempt) problem(`lease epoch ${run.lease_epoch} != attempt ${run.attempt}`);

    // 2. events: contiguous, one claim event per attempt at most, attempts increasing, written by a live worker
    const evs = events.get(run.run_id) ?? [];
    evs.forEach((e, i) => e.seq !== i + 1 && problem(`event seq ${e.seq} at position ${i + 1}`));
    if (evs[0]?.type !== "run.created") problem("first event is not run.created");
    let attempt = 0;
    const started = new Map<string, number>();
    const unknownFinished = new Set<string>();
    for (const e of evs) {
      if (e.type === "run.started" || e.type === "run.resumed") {
        stats.claimEvents += 1;
        const a = Number(e.data["attempt"]);
        // a database fault in a living worker resumes the same attempt (no attempt spent); any other claim is a new one
        const sameAttempt = e.type === "run.resumed" && e.data["reason"] === "recovery" && a === attempt;
        if (sameAttempt) stats.faultResumes += 1;
        if (!(a > attempt) && !sameAttempt) problem(`${e.type} of attempt ${a} after attempt ${attempt} (seq ${e.seq})`);
        if (a > run.attempt) problem(`${e.type} of attempt ${a}, but the run was claimed ${run.attempt} times`);
        attempt = a;
        const worker = input.lifeOf(e.data["worker"]);
        const at = new Date(e.at).getTime();
        if (worker === undefined) problem(`${e.type} by an unknown worker ${String(e.data["worker"])}`);
        else if (at < worker.startedAt - 2_000 || at > (worker.killedAt ?? Date.now()) + 2_000) problem(`${e.type} (attempt ${a}) stamped outside its worker's life`);
      }
      if (e.type === "tool.call.started") {
        const call = String(e.data["tool_call_id"]);
        started.set(call, (started.get(call) ?? 0) + 1);
      }
      if (e.type === "tool.call.finished" && e.data["error_code"] === "TOOL_OUTCOME_UNKNOWN") unknownFinished.add(String(e.data["tool_call_id"]));
    }
    for (const [call, count] of started) if (count > 1) problem(`${call} was started ${count} times`);
    const terminal = evs.filter((e) => e.type === "run.succeeded" || e.type === "run.failed");
    const last = evs[evs.length - 1];
    if (last === undefined || terminal.length !== 1 || last !== terminal[0]) problem(`${run.status}: terminal events ${terminal.map((e) => e.type).join(",") || "none"}; events ${evs.map((e) => e.type).join(" ")}`);
    else if (last.type !== (ok ? "run.succeeded" : "run.failed") || (exhausted && last.data["stop_reason"] !== "max_attempts")) problem(`last event ${last.type} ${JSON.stringify(last.data)}`);

    // 3. the ledger: only our calls, each executed once at most, epochs within the run's and never going back
    const rows = new Map((ledger.get(run.run_id) ?? []).map((l) => [l.tool_call_id, l]));
    for (const l of rows.values()) {
      if (!(l.tool_call_id in CHAOS_CALLS)) problem(`ledger row for unknown call ${l.tool_call_id}`);
      if (l.lease_epoch < 1 || l.lease_epoch > run.lease_epoch) problem(`${l.tool_call_id} written at epoch ${l.lease_epoch} (run epoch ${run.lease_epoch})`);
      if (l.status === "succeeded" && l.attempts !== 1) problem(`${l.tool_call_id} succeeded after ${l.attempts} begins: a non-idempotent call ran again`);
      if (l.status === "failed" && l.result?.error?.code !== "TOOL_OUTCOME_UNKNOWN") problem(`${l.tool_call_id} failed with ${JSON.stringify(l.result)}`);
      if (l.status === "failed" && l.attempts < 2) problem(`${l.tool_call_id} is TOOL_OUTCOME_UNKNOWN on its first begin`);
      // (a succeeded call may lack its tool.call.started event: events go out asynchronously and
      // the tail of them is lost when a worker dies; the ledger, not the event log, is the truth)
    }
    const epoch = (call: string): number => rows.get(call)?.lease_epoch ?? Number.POSITIVE_INFINITY;
    const order = [["c1"], ["c2", "c3"], ["c4"], ["c5"]];
    for (let i = 1; i < order.length; i += 1) {
      for (const before of order[i - 1] ?? []) {
        for (const after of order[i] ?? []) {
          if (rows.has(after) && epoch(before) > epoch(after)) problem(`${after} begun at epoch ${epoch(after)}, before it ${before} at ${epoch(before)}`);
        }
      }
    }

    // 4. the lines: none foreign, none twice, each missing one accounted for
    const lines = readLines(join(input.workspace, `${run.thread_id}.txt`));
    const seen = new Set<string>();
    for (const line of lines) {
      if (seen.has(line)) problem(`line ${line} appears twice`);
      seen.add(line);
      const n = Number(line.slice(run.thread_id.length + 1));
      if (!line.startsWith(`${run.thread_id}:`) || !Object.values(CHAOS_CALLS).includes(n)) problem(`foreign line ${line}`);
    }
    for (const [call, n] of Object.entries(CHAOS_CALLS)) {
      const present = seen.has(`${run.thread_id}:${n}`);
      const row = rows.get(call);
      const isUnknown = row?.status === "failed" && row.result?.error?.code === "TOOL_OUTCOME_UNKNOWN";
      if (isUnknown) stats.unknown += 1;
      if (isUnknown && present) stats.unknownButAppended += 1;
      if (present && row === undefined) problem(`line ${n} appended without a ledger entry`);
      if (row?.status === "succeeded" && !present) problem(`${call} succeeded but line ${n} is missing`);
      if (present) continue;
      stats.linesMissing += 1;
      if (ok) {
        if (!isUnknown) problem(`line ${n} is missing and ${call} is ${row === undefined ? "not in the ledger" : `${row.status} ${JSON.stringify(row.result)}`}, not TOOL_OUTCOME_UNKNOWN`);
        if (!unknownFinished.has(call)) problem(`line ${n} is missing and no tool.call.finished says TOOL_OUTCOME_UNKNOWN for ${call}`);
      } else if (row?.status === "started") {
        stats.inFlightAtMaxAttempts += 1; // the run ran out of attempts with this call in flight: never re-entered
      } else if (row !== undefined && !isUnknown) {
        problem(`line ${n} is missing and ${call} is ${row.status}`);
      }
    }

    // 5. checkpoints never fork: one root, every parent stored, no parent with two children
    const chain = checkpoints.get(`${run.thread_id}\u0000`) ?? [];
    if (ok && chain.length === 0) problem("no checkpoints");
    for (const [key, list] of checkpoints) {
      if (!key.startsWith(`${run.thread_id}\u0000`)) continue;
      const ids = new Set(list.map((c) => c.checkpoint_id));
      const roots = list.filter((c) => c.parent_checkpoint_id === null);
      if (list.length > 0 && roots.length !== 1) problem(`${roots.length} root checkpoints in namespace ${JSON.stringify(key.split("\u0000")[1])}`);
      const children = new Map<string, number>();
      for (const c of list) {
        if (c.parent_checkpoint_id === null) continue;
        if (!ids.has(c.parent_checkpoint_id)) problem(`checkpoint ${c.checkpoint_id} has a parent that was never stored`);
        children.set(c.parent_checkpoint_id, (children.get(c.parent_checkpoint_id) ?? 0) + 1);
      }
      for (const [parent, count] of children) if (count > 1) problem(`checkpoint ${parent} has ${count} children: the thread forked`);
    }
  }

  return { problems, stats };
}
