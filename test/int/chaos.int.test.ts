/**
 * Chaos (PostgreSQL only): several worker processes execute dozens of runs whose scripted model
 * appends lines with `append_file` (not idempotent); workers are SIGKILLed at random and replaced.
 * Afterwards, from what is stored (runs, events, tool ledger, checkpoints) and the files:
 * every run ended (success, or error / max_attempts), no line was appended twice, every missing
 * line has a TOOL_OUTCOME_UNKNOWN, and no two workers ever held one run at once.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { chaosTask, type ChaosWorkerOptions } from "../fixtures/chaos-worker.js";
import { auditChaos, chaosScript } from "../helpers/chaos-audit.js";
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

const SCRIPT = chaosScript();

interface WorkerProcess {
  child: FixtureChild;
  startedAt: number;
  killedAt: number | null;
  /** Set before we kill it: any other exit is a failure. */
  expectedExit: boolean;
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
      const { problems, stats } = await auditChaos({
        db,
        schema,
        workspace,
        tags,
        runs: RUNS,
        maxAttempts: MAX_ATTEMPTS,
        lifeOf: (worker) => workers.find((w) => typeof worker === "string" && worker.split(":").includes(String(w.child.pid))),
      });
      const summary = {
        runs: tags.size,
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
