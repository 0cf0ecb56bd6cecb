/**
 * Chaos (PostgreSQL only): several worker processes execute dozens of runs whose scripted model
 * appends lines with `append_file` (not idempotent); workers are SIGKILLed at random and replaced.
 * Afterwards, from what is stored (runs, events, tool ledger, checkpoints) and the files:
 * every run ended (success, or error / max_attempts), no line was appended twice, every missing
 * line has a TOOL_OUTCOME_UNKNOWN, and no two workers ever held one run at once.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import type { Database } from "../../src/db/types.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { chaosTask, type ChaosWorkerOptions } from "../fixtures/chaos-worker.js";
import { killLiveChildren, spawnFixture, waitForLine, type FixtureChild } from "../helpers/child-process.js";
import { dropSchema, freshSchemaName, openBackend, TEST_DATABASE_URL } from "../helpers/databases.js";

const FIXTURE = "test/fixtures/chaos-worker.ts";
const WORKERS = 3;
const CONCURRENCY = 2;
const RUNS = 24;
/** Runs are created one by one over the first ~15 s, so they keep arriving during the chaos. */
const CREATE_EVERY_MS = 600;
const CHAOS_MS = 25_000;
const KILL_EVERY_MS = [1_000, 2_000] as const;
/** How long the surviving workers get to finish every run after the chaos stops. */
const SETTLE_MS = 50_000;
const LEASE_MS = 1_500;
const MAX_ATTEMPTS = 6;
/**
 * At least this many runs must succeed: a run gives up only after MAX_ATTEMPTS claims, and the
 * kills spread over 3 workers rarely hit one run that often. A test where most runs gave up (or
 * never ran) would pass the pairing checks while proving nothing about finishing work.
 */
const MIN_SUCCESS = RUNS / 2;
/** A child that runs longer than this is killed by the helper (the test is far shorter). */
const CHILD_BOUND_MS = 180_000;

/** Call id -> the line number it appends (`<tag>:<n>`). */
const CALLS: Record<string, number> = { c1: 1, c2: 2, c3: 3, c4: 4, c5: 5 };
const ANSWER = "appended 5 lines";

function append(id: string): { id: string; name: string; args: Record<string, unknown> } {
  return { id, name: "append_file", args: { path: "{{tag}}.txt", content: `{{tag}}:${CALLS[id]}\n` } };
}

/** Five append calls over four tool rounds (one round with two calls in parallel), then the answer. */
const SCRIPT: ScriptedTurn[] = [
  { tool_calls: [append("c1")], delay_ms: 400 },
  { tool_calls: [append("c2"), append("c3")], delay_ms: 500 },
  { tool_calls: [append("c4")], delay_ms: 400 },
  { tool_calls: [append("c5")], delay_ms: 500 },
  { content: ANSWER, delay_ms: 200 },
];

interface WorkerProcess {
  child: FixtureChild;
  startedAt: number;
  killedAt: number | null;
  /** Set before we kill it: any other exit is a failure. */
  expectedExit: boolean;
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

describe.runIf(TEST_DATABASE_URL !== undefined)("chaos: worker processes SIGKILLed at random", () => {
  const schema = freshSchemaName("chaos");
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-chaos-")));
  const workers: WorkerProcess[] = [];
  const unexpectedExits: string[] = [];
  let db: Database | undefined;
  let runtime: Runtime | undefined;

  afterAll(async () => {
    for (const worker of workers) worker.expectedExit = true;
    await killLiveChildren();
    await runtime?.close();
    if (db !== undefined) {
      // DEVMIND_CHAOS_KEEP=1 keeps the schema and workspace for a look after a failure
      if (process.env["DEVMIND_CHAOS_KEEP"] === "1") console.log(`chaos: kept schema ${schema} and workspace ${workspace}`);
      else await dropSchema(db, schema);
      await db.close();
    }
    if (process.env["DEVMIND_CHAOS_KEEP"] !== "1") rmSync(workspace, { recursive: true, force: true });
  });

  function startWorker(): WorkerProcess {
    const options: ChaosWorkerOptions = { url: TEST_DATABASE_URL as string, schema, workspace, script: SCRIPT, concurrency: CONCURRENCY, leaseMs: LEASE_MS, maxAttempts: MAX_ATTEMPTS };
    const child = spawnFixture(FIXTURE, [JSON.stringify(options)], CHILD_BOUND_MS);
    const worker: WorkerProcess = { child, startedAt: Date.now(), killedAt: null, expectedExit: false };
    void child.exited.then((exit) => {
      if (!worker.expectedExit) unexpectedExits.push(`worker ${child.pid} exited on its own (${exit.code ?? exit.signal}): ${exit.stderr.slice(-3_000)}`);
    });
    workers.push(worker);
    return worker;
  }

  const live = (): WorkerProcess[] => workers.filter((w) => w.killedAt === null);

  function kill(worker: WorkerProcess): void {
    worker.expectedExit = true;
    worker.killedAt = Date.now();
    worker.child.process.kill("SIGKILL");
  }

  /** A live worker with a tool call in flight right now (its ledger row is `started`), if one shows up within `withinMs`. */
  async function workerInToolCall(withinMs: number): Promise<WorkerProcess | undefined> {
    const until = Date.now() + withinMs;
    while (Date.now() < until) {
      const owners = await (db as Database).query<{ owner: string }>(
        `SELECT r.lease_owner AS owner FROM "${schema}".tool_ledger l JOIN "${schema}".runs r USING (run_id)
          WHERE l.status = 'started' AND r.status = 'running'`,
      );
      for (const { owner } of owners.rows) {
        const found = live().find((w) => owner.split(":").includes(String(w.child.pid)));
        if (found !== undefined) return found;
      }
      await sleep(10);
    }
    return undefined;
  }

  it(
    "every run ends, nothing is appended twice, missing lines are TOOL_OUTCOME_UNKNOWN, one holder per run",
    async () => {
      const began = Date.now();
      db = await openBackend("postgres", schema);
      await migrate(db);
      runtime = createRuntime({ db, config: loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: String(LEASE_MS) }) });

      const first = Array.from({ length: WORKERS }, () => startWorker());
      await Promise.all(first.map((w) => waitForLine(w.child, `ready ${w.child.pid}`, 30_000)));

      // runs arrive over the first seconds of the chaos
      const tags = new Map<string, string>(); // run id -> tag (= thread id)
      const creating = (async () => {
        for (let i = 0; i < RUNS; i += 1) {
          const threadId = randomUUID();
          const run = await (runtime as Runtime).runs.create({ threadId, input: { messages: [chaosTask(threadId)] } });
          tags.set(run.run_id, threadId);
          await sleep(CREATE_EVERY_MS);
        }
      })();

      // the chaos: a kill every 1-2 s, every other one aimed at a worker inside a tool call
      const kills = { random: 0, inToolCall: 0 };
      const chaosEnds = Date.now() + CHAOS_MS;
      for (let n = 0; Date.now() < chaosEnds; n += 1) {
        await sleep(KILL_EVERY_MS[0] + Math.random() * (KILL_EVERY_MS[1] - KILL_EVERY_MS[0]));
        const aimed = n % 2 === 1 ? await workerInToolCall(400) : undefined;
        const candidates = live();
        const victim = aimed ?? candidates[Math.floor(Math.random() * candidates.length)];
        if (victim === undefined) continue;
        kill(victim);
        if (aimed !== undefined) kills.inToolCall += 1;
        else kills.random += 1;
        startWorker();
      }
      await creating;
      const chaosSeconds = (Date.now() - began) / 1000;

      // the survivors (3 live workers, at least 2 required) finish every run, within a bound
      expect(live().length).toBeGreaterThanOrEqual(2);
      const settleEnds = Date.now() + SETTLE_MS;
      let open = RUNS;
      while (Date.now() < settleEnds) {
        const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".runs WHERE status NOT IN ('success', 'error', 'timeout', 'cancelled')`);
        open = counted.rows[0]?.n ?? RUNS;
        if (open === 0 || unexpectedExits.length > 0) break;
        await sleep(250);
      }
      for (const worker of workers) worker.expectedExit = true;
      await killLiveChildren();
      for (const worker of live()) worker.killedAt ??= Date.now();
      expect(unexpectedExits).toEqual([]);
      expect(open, `runs still open ${SETTLE_MS} ms after the chaos stopped`).toBe(0);

      // --- everything below reads stored evidence only ---
      const q = <R>(sql: string) => (db as Database).query<R>(sql).then((r) => r.rows);
      const runs = await q<RunRow>(
        `SELECT run_id::text AS run_id, thread_id, status, stop_reason, attempt, lease_epoch::int AS lease_epoch,
                model_rounds, tool_calls, answer, error_code, error_message FROM "${schema}".runs`,
      );
      const events = groupBy(await q<EventRow>(`SELECT run_id::text AS run_id, seq, type, at, data FROM "${schema}".run_events ORDER BY run_id, seq`), (e) => e.run_id);
      const ledger = groupBy(
        await q<LedgerRow>(`SELECT run_id::text AS run_id, tool_call_id, status, result, attempts, lease_epoch::int AS lease_epoch FROM "${schema}".tool_ledger`),
        (l) => l.run_id,
      );
      const checkpoints = groupBy(
        await q<CheckpointRow>(`SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM "${schema}".checkpoints`),
        (c) => `${c.thread_id}\u0000${c.checkpoint_ns}`,
      );

      const problems: string[] = [];
      const stats = { success: 0, maxAttempts: 0, recovered: 0, attempts: {} as Record<number, number>, linesMissing: 0, unknown: 0, unknownButAppended: 0, inFlightAtMaxAttempts: 0, claimEvents: 0 };
      const pidOf = (worker: unknown): WorkerProcess | undefined => workers.find((w) => typeof worker === "string" && worker.split(":").includes(String(w.child.pid)));
      expect(runs.length).toBe(RUNS);

      for (const run of runs) {
        const id = run.run_id.slice(0, 8);
        const problem = (text: string): void => void problems.push(`run ${id}: ${text}`);
        const tag = tags.get(run.run_id);
        if (tag === undefined || tag !== run.thread_id) problem("unknown run or thread");
        stats.attempts[run.attempt] = (stats.attempts[run.attempt] ?? 0) + 1;
        if (run.attempt > 1) stats.recovered += 1;

        // 1. terminal, with the outcome it may have
        const ok = run.status === "success" && run.stop_reason === "completed";
        const exhausted = run.status === "error" && run.stop_reason === "max_attempts";
        if (ok) stats.success += 1;
        else if (exhausted) stats.maxAttempts += 1;
        else problem(`ended ${run.status} / ${run.stop_reason} (${run.error_code}: ${run.error_message})`);
        if (ok && (run.model_rounds !== 5 || run.tool_calls !== 5 || run.answer !== ANSWER)) problem(`success with rounds ${run.model_rounds}, calls ${run.tool_calls}, answer ${run.answer}`);
        if (exhausted && run.attempt !== MAX_ATTEMPTS) problem(`max_attempts after ${run.attempt} attempts`);
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
            if (!(a > attempt)) problem(`${e.type} of attempt ${a} after attempt ${attempt} (seq ${e.seq})`);
            if (a > run.attempt) problem(`${e.type} of attempt ${a}, but the run was claimed ${run.attempt} times`);
            attempt = a;
            const worker = pidOf(e.data["worker"]);
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
          if (!(l.tool_call_id in CALLS)) problem(`ledger row for unknown call ${l.tool_call_id}`);
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
        const lines = readLines(join(workspace, `${run.thread_id}.txt`));
        const seen = new Set<string>();
        for (const line of lines) {
          if (seen.has(line)) problem(`line ${line} appears twice`);
          seen.add(line);
          const n = Number(line.slice(run.thread_id.length + 1));
          if (!line.startsWith(`${run.thread_id}:`) || !Object.values(CALLS).includes(n)) problem(`foreign line ${line}`);
        }
        for (const [call, n] of Object.entries(CALLS)) {
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

      const summary = {
        runs: runs.length,
        success: stats.success,
        maxAttempts: stats.maxAttempts,
        kills: kills.random + kills.inToolCall,
        killsInToolCall: kills.inToolCall,
        workersStarted: workers.length,
        recoveredRuns: stats.recovered,
        attempts: stats.attempts,
        claimEvents: stats.claimEvents,
        toolOutcomeUnknown: stats.unknown,
        unknownButAppended: stats.unknownButAppended,
        linesMissing: stats.linesMissing,
        inFlightAtMaxAttempts: stats.inFlightAtMaxAttempts,
        chaosSeconds: Math.round(chaosSeconds),
        totalSeconds: Math.round((Date.now() - began) / 1000),
      };
      console.log(`chaos summary ${JSON.stringify(summary)}`);
      expect(problems).toEqual([]);
      expect(stats.success + stats.maxAttempts).toBe(RUNS);
      expect(stats.success).toBeGreaterThanOrEqual(MIN_SUCCESS);
      expect(summary.kills).toBeGreaterThanOrEqual(8);
      // the chaos must have hit runs, or it proved nothing
      expect(stats.recovered).toBeGreaterThan(0);
    },
    180_000,
  );
});
