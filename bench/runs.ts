import { mkdtemp, mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadConfig, type DevmindConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import type { Database } from "../src/db/types.js";
import { ScriptedChatModel } from "../src/model/scripted-model.js";
import type { ScriptedTurn } from "../src/model/scripted-turns.js";
import { createRuntime, type Runtime } from "../src/runtime/runtime.js";
import { freshSchema } from "./agent-runs.js";
import { benchDatabaseUrl, MAX_ROUNDS, missingUrlMessage, parseBenchArgs, printableUrl, URL_VARIABLES } from "./bench-env.js";
import { dropSchema, type RunQuery } from "./footprint.js";
import { killAllWorkers, spawnWorker, type WorkerChild } from "./runs-child.js";
import type { RunsWorkerOptions } from "./runs-worker.js";
import { fixed, formatBytes, formatTable, median, percentile } from "./stats.js";

const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "runs.json");

/** Worker slots of the in-process throughput measurements. */
const CONCURRENCIES = [1, 4, 16] as const;
/** The child-process variant: this many worker processes with this many slots each. */
const CHILDREN = { processes: 2, concurrency: 8, warmRuns: 40 } as const;
/** Kill-to-next-step measurement: the lease, the goal (lease + 1 s) and how many kills. */
const RECOVERY = { leaseMs: 2_000, slackMs: 1_000, samples: 3 } as const;
/** Interrupted runs present while a worker's memory is measured. */
const MEMORY_POINTS = [0, 250, 1_000] as const;
/** Runs each memory worker executes before it is measured, and how long it then idles. */
const MEMORY_WARM = { runs: 20, idleMs: 3_000, concurrency: 4 } as const;
const RUNS_DEFAULT = 200;
const RUNS_BOUNDS = { min: 20, max: 5_000 } as const;
/** Longest any single wait of the bench may take. */
const WAIT_BOUND_MS = 180_000;
const CHILD_BOUND_MS = 600_000;
const TERMINAL = ["success", "error", "timeout", "cancelled"];

const USAGE = `usage: npm run bench -- runs [--runs N] [--rounds N]
  --runs N     runs per throughput measurement (default ${RUNS_DEFAULT}, ${RUNS_BOUNDS.min} to ${RUNS_BOUNDS.max})
  --rounds N   throughput rounds, medians reported (default 3, at most ${MAX_ROUNDS})
PostgreSQL URL from ${URL_VARIABLES.join(", else ")}.`;

/** `rounds` tool rounds with `add` (one call each, optional delay), then the answer. */
function addScript(rounds: number, delayMs = 0): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i <= rounds; i += 1) {
    turns.push({ tool_calls: [{ id: `add_${i}`, name: "add", args: { a: i, b: 1 } }], ...(delayMs > 0 ? { delay_ms: delayMs } : {}) });
  }
  turns.push({ content: `added ${rounds} times`, ...(delayMs > 0 ? { delay_ms: delayMs } : {}) });
  return turns;
}

/** The throughput run: 3 x add, then the answer (4 model rounds, 3 tool calls), no delays. */
const THROUGHPUT_SCRIPT = addScript(3);
/** The run that is killed mid-way: 40 slow rounds, long enough to start a second worker and kill the first. */
const LONG_SCRIPT = addScript(40, 150);
/** A run that waits for approval (write_file needs it by default). */
const APPROVAL_SCRIPT: ScriptedTurn[] = [{ tool_calls: [{ id: "w1", name: "write_file", args: { path: "approve-me.txt", content: "x" } }] }, { content: "written" }];
const LONG_LIMITS = { DEVMIND_MAX_MODEL_ROUNDS: "100", DEVMIND_MAX_TOOL_CALLS: "100" };

/** One throughput measurement. */
export interface ThroughputResult {
  round: number;
  mode: "in-process" | "child-processes";
  processes: number;
  /** Worker slots in total. */
  concurrency: number;
  runs: number;
  succeeded: number;
  /** From just before the workers start to the last run's finished_at (database clock). */
  seconds: number;
  runsPerSec: number;
  /** Checkpoints written (one per graph superstep, plus the input) per second. */
  stepsPerSec: number;
  checkpointsPerRun: number;
  /** Per run, run.started to finished_at. */
  runP50Ms: number;
  runP99Ms: number;
  /** CPU time of the worker process(es) over the measured time: 100 = one core busy throughout. */
  workerCpuPercent: number;
}

/** The median over rounds of one configuration. */
export interface ThroughputSummary {
  mode: ThroughputResult["mode"];
  processes: number;
  concurrency: number;
  rounds: number;
  runsPerSec: number;
  stepsPerSec: number;
  runP50Ms: number;
  workerCpuPercent: number;
}

/** One SIGKILL of the worker running a run, and when another worker continued it. */
export interface RecoverySample {
  sample: number;
  /** Database clock, ISO. */
  killedAt: string;
  leaseExpiresAt: string | null;
  lastEventBeforeKill: { seq: number; type: string; at: string } | null;
  resumed: { seq: number; at: string; worker: string; attempt: number } | null;
  nextStep: { seq: number; type: string; at: string } | null;
  /** Kill to lease expiry (the part the lease decides). */
  expiryGapMs: number | null;
  /** Kill to `run.resumed` in the other worker. */
  resumeGapMs: number | null;
  /** Kill to the run's next step (the first event after `run.resumed`). */
  stepGapMs: number | null;
  /** stepGapMs / goal. */
  ratio: number | null;
  status: string;
}

/** Worker memory with `interrupted` interrupted runs in the database. */
export interface MemoryPoint {
  interrupted: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  gc: boolean;
}

/** bench/results/runs.json. */
export interface RunsResults {
  bench: "runs";
  command: string;
  date: string;
  node: string;
  postgres: { version: string | null; url: string };
  machine: { cores: number; cpu: string; platform: string; arch: string };
  throughputRun: { modelRounds: number; toolCalls: number; tool: string; delays: false };
  throughput: ThroughputSummary[];
  throughputRounds: ThroughputResult[];
  recovery: { leaseMs: number; goalMs: number; samples: RecoverySample[]; medianStepGapMs: number; maxStepGapMs: number; pass: boolean };
  memory: { warmRuns: number; idleMs: number; concurrency: number; points: MemoryPoint[]; heapUsedGrowth: number; rssGrowth: number; flat: boolean };
}

interface Env {
  url: string;
  admin: RunQuery;
  workspace: string;
}

function configFor(env: Env, extra: Record<string, string> = {}): DevmindConfig {
  return loadConfig({ DEVMIND_WORKSPACE: env.workspace, DEVMIND_MODEL_MAX_RETRIES: "0", ...extra });
}

/** A fresh migrated schema for `fn`, dropped afterwards. */
async function withSchema<T>(env: Env, maxConnections: number, fn: (db: Database) => Promise<T>): Promise<T> {
  const schema = freshSchema("bench_runs");
  const db = await openDatabase({ url: env.url, schema, maxConnections });
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
    await dropSchema(env.admin, schema);
  }
}

async function createRuns(runtime: Runtime, count: number, task: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 16) {
    const batch = await Promise.all(Array.from({ length: Math.min(16, count - i) }, () => runtime.runs.create({ input: { messages: [task] } })));
    ids.push(...batch.map((run) => run.run_id));
  }
  return ids;
}

async function count(db: Database, where: string, values: unknown[] = []): Promise<number> {
  const result = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${db.schema}".runs WHERE ${where}`, values);
  return result.rows[0]?.n ?? 0;
}

/** Polls until `predicate` holds; throws after `boundMs`. */
async function until(what: string, predicate: () => Promise<boolean>, boundMs = WAIT_BOUND_MS, everyMs = 10): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`runs bench: ${what} did not happen within ${boundMs} ms`);
    await sleep(everyMs);
  }
}

async function dbNow(db: Database): Promise<Date> {
  const result = await db.query<{ now: Date }>("SELECT clock_timestamp() AS now");
  return new Date(result.rows[0]?.now ?? Date.now());
}

type ThroughputBase = Pick<ThroughputResult, "round" | "mode" | "processes" | "concurrency" | "runs">;

/** CPU microseconds (user + system). */
type CpuReading = () => Promise<number>;

function cpuMicros(usage: { user: number; system: number }): number {
  return usage.user + usage.system;
}

async function throughputFigures(db: Database, base: ThroughputBase, start: Date, cpuUsedMicros: number): Promise<ThroughputResult> {
  const s = `"${db.schema}"`;
  const row = (
    await db.query<{ succeeded: number; last: Date; checkpoints: number }>(
      `SELECT (SELECT count(*)::int FROM ${s}.runs WHERE status = 'success') AS succeeded,
              (SELECT max(finished_at) FROM ${s}.runs) AS last,
              (SELECT count(*)::int FROM ${s}.checkpoints) AS checkpoints`,
    )
  ).rows[0];
  const durations = (
    await db.query<{ ms: number }>(
      `SELECT (extract(epoch FROM r.finished_at - e.at) * 1000)::float8 AS ms
         FROM ${s}.runs r JOIN ${s}.run_events e ON e.run_id = r.run_id AND e.type = 'run.started'`,
    )
  ).rows.map((r) => Number(r.ms));
  durations.sort((a, b) => a - b);
  const seconds = (new Date(row?.last ?? start).getTime() - start.getTime()) / 1000;
  const checkpoints = row?.checkpoints ?? 0;
  return {
    ...base,
    succeeded: row?.succeeded ?? 0,
    seconds,
    runsPerSec: base.runs / seconds,
    stepsPerSec: checkpoints / seconds,
    checkpointsPerRun: checkpoints / base.runs,
    runP50Ms: percentile(durations, 0.5),
    runP99Ms: percentile(durations, 0.99),
    workerCpuPercent: (cpuUsedMicros / 1e6 / seconds) * 100,
  };
}

/** `runs` runs executed by `runtime.worker({ concurrency })` in this process. */
async function inProcessThroughput(env: Env, concurrency: number, runs: number, round: number): Promise<ThroughputResult> {
  return withSchema(env, concurrency + 4, async (db) => {
    const runtime = createRuntime({ db, model: new ScriptedChatModel(THROUGHPUT_SCRIPT), config: configFor(env) });
    try {
      await createRuns(runtime, runs, "add some numbers");
      const start = await dbNow(db);
      const cpu = process.cpuUsage();
      const worker = runtime.worker({ concurrency });
      await worker.start();
      await until(`${runs} runs at concurrency ${concurrency}`, async () => (await count(db, "status = ANY($1)", [TERMINAL])) === runs);
      const used = cpuMicros(process.cpuUsage(cpu));
      return await throughputFigures(db, { round, mode: "in-process", processes: 1, concurrency, runs }, start, used);
    } finally {
      await runtime.close();
    }
  });
}

function workerOptions(env: Env, db: Database, script: ScriptedTurn[], concurrency: number, extra: Record<string, string>): RunsWorkerOptions {
  return { url: env.url, schema: db.schema, workspace: env.workspace, script, concurrency, env: extra };
}

async function stopChildren(children: readonly WorkerChild[]): Promise<void> {
  for (const child of children) child.kill("SIGKILL");
  await Promise.race([Promise.all(children.map((child) => child.exited)), sleep(10_000)]);
}

/**
 * The same runs, executed by worker child processes: started and warmed up with a few runs of
 * their own first (then drained), so the timing starts with warm workers like in-process.
 */
async function childThroughput(env: Env, runs: number, round: number): Promise<ThroughputResult> {
  return withSchema(env, 4, async (db) => {
    const runtime = createRuntime({ db, config: configFor(env) });
    const children = Array.from({ length: CHILDREN.processes }, () =>
      spawnWorker(workerOptions(env, db, THROUGHPUT_SCRIPT, CHILDREN.concurrency, {}), { boundMs: CHILD_BOUND_MS }),
    );
    try {
      await Promise.all(children.map((child) => child.line("ready", 60_000)));
      for (const child of children) child.send("start");
      await Promise.all(children.map((child) => child.line("started", 30_000)));
      const warm = await createRuns(runtime, CHILDREN.warmRuns, "warm up");
      await until("the child workers' warm-up runs", async () => (await count(db, "run_id = ANY($1::uuid[]) AND status = ANY($2)", [warm, TERMINAL])) === warm.length);
      for (const child of children) child.send("drain");
      await Promise.all(children.map((child) => child.line("drained", 60_000)));
      // only the measured runs count in the figures
      await db.query(`DELETE FROM "${db.schema}".checkpoint_writes`);
      await db.query(`DELETE FROM "${db.schema}".checkpoint_blobs`);
      await db.query(`DELETE FROM "${db.schema}".checkpoints`);
      await db.query(`DELETE FROM "${db.schema}".runs`);
      await createRuns(runtime, runs, "add some numbers");
      const cpuOf: CpuReading = async () => {
        let total = 0;
        for (const child of children) {
          child.send("cpu");
          total += cpuMicros(JSON.parse((await child.line("cpu ", 30_000)).slice("cpu ".length)) as { user: number; system: number });
        }
        return total;
      };
      const cpuBefore = await cpuOf();
      const start = await dbNow(db);
      for (const child of children) child.send("start");
      await until(`${runs} runs on ${CHILDREN.processes} worker processes`, async () => (await count(db, "status = ANY($1)", [TERMINAL])) === runs);
      const used = (await cpuOf()) - cpuBefore;
      const base: ThroughputBase = { round, mode: "child-processes", processes: CHILDREN.processes, concurrency: CHILDREN.processes * CHILDREN.concurrency, runs };
      return await throughputFigures(db, base, start, used);
    } finally {
      await stopChildren(children);
      await runtime.close();
    }
  });
}

interface StoredEvent {
  seq: number;
  type: string;
  at: Date;
  data: Record<string, unknown>;
}

/**
 * Worker A runs a long run; worker B is up and idle; A is SIGKILLed mid-run. Measured on the
 * database clock: kill -> lease expiry -> `run.resumed` by B -> the run's next step.
 */
async function recoverySample(env: Env, sample: number): Promise<RecoverySample> {
  return withSchema(env, 4, async (db) => {
    const runtime = createRuntime({ db, config: configFor(env) });
    const extra = { DEVMIND_LEASE_MS: String(RECOVERY.leaseMs), ...LONG_LIMITS };
    const spawnOne = (): WorkerChild => spawnWorker(workerOptions(env, db, LONG_SCRIPT, 1, extra), { boundMs: CHILD_BOUND_MS });
    const children: WorkerChild[] = [];
    try {
      const a = spawnOne();
      children.push(a);
      await a.line("ready", 60_000);
      a.send("start");
      await a.line("started", 30_000);
      const [runId] = await createRuns(runtime, 1, "add slowly");
      const s = `"${db.schema}"`;
      const modelRounds = async (): Promise<number> =>
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.run_events WHERE run_id = $1 AND type = 'model.finished'`, [runId])).rows[0]?.n ?? 0;
      await until("worker A to claim the run", async () => (await count(db, "run_id = $1 AND status = 'running' AND lease_owner LIKE $2", [runId, `%:${a.pid}:%`])) === 1, 30_000);
      const b = spawnOne();
      children.push(b);
      await b.line("ready", 60_000);
      b.send("start");
      await b.line("started", 30_000);
      await until("the run to be a few rounds in", async () => (await modelRounds()) >= 3, 30_000);
      // a random moment relative to A's heartbeats (every lease / 3)
      await sleep(Math.random() * (RECOVERY.leaseMs / 3));
      a.kill("SIGKILL");
      const killedAt = await dbNow(db);
      const lease = (await db.query<{ expires: Date | null }>(`SELECT lease_expires_at AS expires FROM ${s}.runs WHERE run_id = $1`, [runId])).rows[0]?.expires ?? null;
      await a.exited;
      await until("the run to end", async () => (await count(db, "run_id = $1 AND status = ANY($2)", [runId, TERMINAL])) === 1, 60_000, 50);
      const status = (await runtime.runs.get(runId as string)).status;
      const events = (await db.query<StoredEvent>(`SELECT seq, type, at, data FROM ${s}.run_events WHERE run_id = $1 ORDER BY seq`, [runId])).rows;
      const killMs = killedAt.getTime();
      const before = events.filter((e) => new Date(e.at).getTime() <= killMs && e.type !== "run.resumed").pop() ?? null;
      const resumed = events.find((e) => e.type === "run.resumed" && new Date(e.at).getTime() > killMs) ?? null;
      const next = resumed === null ? null : (events.find((e) => e.seq > resumed.seq) ?? null);
      const gap = (event: StoredEvent | null): number | null => (event === null ? null : new Date(event.at).getTime() - killMs);
      const goal = RECOVERY.leaseMs + RECOVERY.slackMs;
      const stepGapMs = gap(next);
      const iso = (date: Date | string): string => new Date(date).toISOString();
      return {
        sample,
        killedAt: iso(killedAt),
        leaseExpiresAt: lease === null ? null : iso(lease),
        lastEventBeforeKill: before === null ? null : { seq: before.seq, type: before.type, at: iso(before.at) },
        resumed: resumed === null ? null : { seq: resumed.seq, at: iso(resumed.at), worker: String(resumed.data["worker"]), attempt: Number(resumed.data["attempt"]) },
        nextStep: next === null ? null : { seq: next.seq, type: next.type, at: iso(next.at) },
        expiryGapMs: lease === null ? null : new Date(lease).getTime() - killMs,
        resumeGapMs: gap(resumed),
        stepGapMs,
        ratio: stepGapMs === null ? null : stepGapMs / goal,
        status,
      };
    } finally {
      await stopChildren(children);
      await runtime.close();
    }
  });
}

/** Brings the schema to `target` interrupted runs (real ones: model call, then an approval pause). */
async function addInterrupted(env: Env, db: Database, target: number): Promise<void> {
  const have = await count(db, "status = 'interrupted'");
  if (have >= target) return;
  const runtime = createRuntime({ db, model: new ScriptedChatModel(APPROVAL_SCRIPT), config: configFor(env) });
  try {
    await createRuns(runtime, target - have, "write a file");
    const worker = runtime.worker({ concurrency: 12 });
    await worker.start();
    await until(`${target} interrupted runs`, async () => (await count(db, "status = 'interrupted'")) === target, WAIT_BOUND_MS, 100);
  } finally {
    await runtime.close();
  }
}

/** A fresh worker child (with --expose-gc) executes a few runs, idles, and reports its memory after GC. */
async function memoryPoint(env: Env, db: Database, interrupted: number): Promise<MemoryPoint> {
  const runtime = createRuntime({ db, config: configFor(env) });
  const child = spawnWorker(workerOptions(env, db, THROUGHPUT_SCRIPT, MEMORY_WARM.concurrency, {}), { exposeGc: true, boundMs: CHILD_BOUND_MS });
  try {
    await child.line("ready", 60_000);
    child.send("start");
    await child.line("started", 30_000);
    const ids = await createRuns(runtime, MEMORY_WARM.runs, "add some numbers");
    await until("the warm-up runs", async () => (await count(db, "run_id = ANY($1::uuid[]) AND status = ANY($2)", [ids, TERMINAL])) === ids.length, 60_000, 20);
    await sleep(MEMORY_WARM.idleMs);
    child.send("mem");
    const line = await child.line("mem ", 30_000);
    const figures = JSON.parse(line.slice("mem ".length)) as Omit<MemoryPoint, "interrupted">;
    child.send("stop");
    return { interrupted, ...figures };
  } finally {
    await stopChildren([child]);
    await runtime.close();
  }
}

function printReport(results: RunsResults): void {
  const out: string[] = [];
  out.push(`runs bench: ${results.date}, node ${results.node}, ${results.machine.cores} cores (${results.machine.cpu})`);
  out.push(`PostgreSQL ${results.postgres.version} at ${results.postgres.url}; every measurement in a fresh schema, dropped after`);
  out.push(
    `\nthroughput: each run is ${results.throughputRun.modelRounds} scripted model rounds and ${results.throughputRun.toolCalls} ${results.throughputRun.tool} calls, ` +
      `no delays; all runs queued first, timed from the workers' start to the last finished_at (database clock); steps = checkpoints written; ` +
      `after an unmeasured warm-up in this process, and with the child processes warmed by ${CHILDREN.warmRuns} runs of their own (not counted)`,
  );
  const label = (t: { mode: ThroughputResult["mode"]; processes: number }): string => (t.mode === "in-process" ? "in-process" : `${t.processes} child processes`);
  out.push(`median of ${results.throughput[0]?.rounds ?? 0} rounds (configurations interleaved per round); worker CPU 100% = one core busy`);
  out.push(
    formatTable(
      ["workers", "slots", "runs/s", "steps/s", "run p50 ms", "worker CPU %"],
      results.throughput.map((t) => [label(t), String(t.concurrency), fixed(t.runsPerSec, 1), fixed(t.stepsPerSec, 0), fixed(t.runP50Ms, 0), fixed(t.workerCpuPercent, 0)]),
    ),
  );
  out.push("\nevery round");
  out.push(
    formatTable(
      ["round", "workers", "slots", "runs", "ok", "seconds", "runs/s", "steps/s", "ckpt/run", "run p50 ms", "run p99 ms", "worker CPU %"],
      results.throughputRounds.map((t) => [
        String(t.round),
        label(t),
        String(t.concurrency),
        String(t.runs),
        String(t.succeeded),
        fixed(t.seconds, 2),
        fixed(t.runsPerSec, 1),
        fixed(t.stepsPerSec, 0),
        fixed(t.checkpointsPerRun, 1),
        fixed(t.runP50Ms, 0),
        fixed(t.runP99Ms, 0),
        fixed(t.workerCpuPercent, 0),
      ]),
    ),
  );
  const r = results.recovery;
  out.push(
    `\nrecovery: worker A (a child process) runs a long run, worker B idles; A is SIGKILLed mid-run. Lease ${r.leaseMs} ms, ` +
      `goal kill -> next step <= ${r.goalMs} ms (lease + 1 s). Times from the database clock and the run's stored events`,
  );
  const ms = (value: number | null): string => (value === null ? "-" : fixed(value, 0));
  out.push(
    formatTable(
      ["sample", "kill -> lease expiry", "kill -> run.resumed", "kill -> next step", "ratio to goal", "status", "evidence"],
      r.samples.map((s) => [
        String(s.sample),
        ms(s.expiryGapMs),
        ms(s.resumeGapMs),
        ms(s.stepGapMs),
        s.ratio === null ? "-" : fixed(s.ratio, 2),
        s.status,
        `killed ${s.killedAt.slice(11)}, last before: ${s.lastEventBeforeKill?.type ?? "-"} #${s.lastEventBeforeKill?.seq ?? "-"} ${s.lastEventBeforeKill?.at.slice(11) ?? ""}; ` +
          `run.resumed #${s.resumed?.seq ?? "-"} ${s.resumed?.at.slice(11) ?? ""} (attempt ${s.resumed?.attempt ?? "-"}); next ${s.nextStep?.type ?? "-"} #${s.nextStep?.seq ?? "-"} ${s.nextStep?.at.slice(11) ?? ""}`,
      ]),
    ),
  );
  out.push(`median ${fixed(r.medianStepGapMs, 0)} ms, max ${fixed(r.maxStepGapMs, 0)} ms (ratio ${fixed(r.maxStepGapMs / r.goalMs, 2)}): ${r.pass ? "within the goal" : "GOAL MISSED"}`);
  const m = results.memory;
  out.push(
    `\nworker memory: a fresh worker process (--expose-gc, ${m.concurrency} slots) executes ${m.warmRuns} runs, idles ${m.idleMs} ms ` +
      `(claim polls and lease reaper passes), then reports process memory after gc(); interrupted runs are real (model call, approval pause)`,
  );
  out.push(
    formatTable(
      ["interrupted runs", "rss", "heapUsed", "heapTotal", "external"],
      m.points.map((p) => [String(p.interrupted), formatBytes(p.rss), formatBytes(p.heapUsed), formatBytes(p.heapTotal), formatBytes(p.external)]),
    ),
  );
  out.push(
    `heapUsed ${m.heapUsedGrowth >= 0 ? "+" : ""}${fixed(m.heapUsedGrowth * 100, 1)}%, rss ${m.rssGrowth >= 0 ? "+" : ""}${fixed(m.rssGrowth * 100, 1)}% ` +
      `from ${MEMORY_POINTS[0]} to ${MEMORY_POINTS[MEMORY_POINTS.length - 1]} interrupted runs: ${m.flat ? "flat" : "GROWS"}`,
  );
  console.log(out.join("\n"));
}

/**
 * `npm run bench -- runs`: the runtime's queue and workers on PostgreSQL — runs and graph steps
 * per second at worker concurrency 1, 4, 16 in this process and with 2 worker processes; the time
 * from SIGKILL of a worker process to the run's next step in another (goal: lease + 1 s); and a
 * worker's memory with 0, 250 and 1000 interrupted runs present (goal: flat). Prints tables and
 * writes `bench/results/runs.json`. Returns the exit code: 0 done (goals missed are reported, not
 * failed), 1 the database is unreachable, 2 bad arguments or no database configured.
 */
export async function runRunsBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, { runs: { type: "string" } }, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const { rounds, values } = parsed;
  const runs = values["runs"] === undefined ? RUNS_DEFAULT : Number(values["runs"]);
  if (!Number.isInteger(runs) || runs < RUNS_BOUNDS.min || runs > RUNS_BOUNDS.max) {
    console.error(`--runs must be an integer from ${RUNS_BOUNDS.min} to ${RUNS_BOUNDS.max}, got ${JSON.stringify(values["runs"])}\n${USAGE}`);
    return 2;
  }
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(missingUrlMessage("runs"));
    return 2;
  }

  const adminPool = new pg.Pool({ connectionString: url, max: 2 });
  const admin: RunQuery = (text, params) => adminPool.query(text, params);
  const workspace = await realpath(await mkdtemp(join(tmpdir(), "devmind-bench-runs-")));
  const env: Env = { url, admin, workspace };
  let serverVersion: string | null;
  try {
    try {
      const shown = (await admin("SHOW server_version")).rows as { server_version: string }[];
      serverVersion = shown[0]?.server_version ?? null;
    } catch (error) {
      console.error(`runs bench: cannot reach PostgreSQL at ${printableUrl(url)}: ${(error as Error).message}`);
      return 1;
    }
    console.error(`PostgreSQL ${serverVersion} at ${printableUrl(url)}; ${runs} runs per throughput measurement, ${rounds} rounds`);

    await inProcessThroughput(env, 4, Math.max(RUNS_BOUNDS.min, Math.floor(runs / 4)), 0);
    console.error("warm-up done (not measured)");
    const throughputRounds: ThroughputResult[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      for (const concurrency of CONCURRENCIES) {
        const result = await inProcessThroughput(env, concurrency, runs, round);
        console.error(`round ${round}, in-process x${concurrency}: ${fixed(result.runsPerSec, 1)} runs/s`);
        throughputRounds.push(result);
      }
      const child = await childThroughput(env, runs, round);
      console.error(`round ${round}, ${CHILDREN.processes} child processes x${CHILDREN.concurrency}: ${fixed(child.runsPerSec, 1)} runs/s`);
      throughputRounds.push(child);
    }
    const configurations = [...new Map(throughputRounds.map((t) => [`${t.mode}:${t.concurrency}`, t])).values()];
    const throughput: ThroughputSummary[] = configurations.map((c) => {
      const same = throughputRounds.filter((t) => t.mode === c.mode && t.concurrency === c.concurrency);
      const med = (pick: (t: ThroughputResult) => number): number => median(same.map(pick));
      return {
        mode: c.mode,
        processes: c.processes,
        concurrency: c.concurrency,
        rounds: same.length,
        runsPerSec: med((t) => t.runsPerSec),
        stepsPerSec: med((t) => t.stepsPerSec),
        runP50Ms: med((t) => t.runP50Ms),
        workerCpuPercent: med((t) => t.workerCpuPercent),
      };
    });

    const samples: RecoverySample[] = [];
    for (let sample = 1; sample <= RECOVERY.samples; sample += 1) {
      const result = await recoverySample(env, sample);
      console.error(`recovery sample ${sample}: kill -> next step ${result.stepGapMs ?? "-"} ms`);
      samples.push(result);
    }
    const gaps = samples.map((s) => s.stepGapMs ?? Number.POSITIVE_INFINITY);
    const goalMs = RECOVERY.leaseMs + RECOVERY.slackMs;

    const points: MemoryPoint[] = [];
    await withSchema(env, 8, async (db) => {
      for (const interrupted of MEMORY_POINTS) {
        await addInterrupted(env, db, interrupted);
        const point = await memoryPoint(env, db, interrupted);
        console.error(`memory with ${interrupted} interrupted runs: heapUsed ${formatBytes(point.heapUsed)}, rss ${formatBytes(point.rss)}`);
        points.push(point);
      }
    });
    const first = points[0];
    const last = points[points.length - 1];
    const heapUsedGrowth = first !== undefined && last !== undefined ? last.heapUsed / first.heapUsed - 1 : Number.NaN;
    const rssGrowth = first !== undefined && last !== undefined ? last.rss / first.rss - 1 : Number.NaN;
    const heapDelta = first !== undefined && last !== undefined ? last.heapUsed - first.heapUsed : Number.NaN;

    const results: RunsResults = {
      bench: "runs",
      command: "npm run bench -- runs",
      date: new Date().toISOString(),
      node: process.version,
      postgres: { version: serverVersion, url: printableUrl(url) },
      machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", platform: process.platform, arch: process.arch },
      throughputRun: { modelRounds: 4, toolCalls: 3, tool: "add", delays: false },
      throughput,
      throughputRounds,
      recovery: {
        leaseMs: RECOVERY.leaseMs,
        goalMs,
        samples,
        medianStepGapMs: median(gaps),
        maxStepGapMs: Math.max(...gaps),
        pass: samples.every((s) => s.status === "success") && Math.max(...gaps) <= goalMs,
      },
      memory: {
        warmRuns: MEMORY_WARM.runs,
        idleMs: MEMORY_WARM.idleMs,
        concurrency: MEMORY_WARM.concurrency,
        points,
        heapUsedGrowth,
        rssGrowth,
        // flat: heapUsed grows by less than 10% or 2 MB, whichever is larger
        flat: Number.isFinite(heapDelta) && heapDelta <= Math.max(2 * 1024 * 1024, 0.1 * (first?.heapUsed ?? 0)),
      },
    };
    printReport(results);
    await mkdir(dirname(RESULTS_FILE), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nfull results: ${relative(process.cwd(), RESULTS_FILE)}`);
    return 0;
  } finally {
    await killAllWorkers();
    await adminPool.end();
    await rm(workspace, { recursive: true, force: true });
  }
}
