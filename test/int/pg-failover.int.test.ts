/**
 * Failover (PostgreSQL only): the test makes a primary and a standby streaming from it
 * (`initdb`, `pg_basebackup -R`, synchronous replication; once for the file, about 6 s), points
 * devmind at both with a multi-host URL (`postgres://…@P,S/postgres?target_session_attrs=read-write`,
 * which node-postgres does not read: devmind locates the primary itself), kills the primary
 * while worker processes execute runs that append lines, and promotes the standby — one whose
 * replay was paused, so it lags. Every process stays up, every run succeeds, no line is
 * appended twice. Bad input: a URL whose hosts are all standbys, a single standby, a lagging
 * standby — each named in an error or a log line.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { chaosTask, type ChaosWorkerOptions } from "../fixtures/chaos-worker.js";
import { auditChaos, chaosScript } from "../helpers/chaos-audit.js";
import { killLiveChildren, spawnFixture, waitForLine, type FixtureChild } from "../helpers/child-process.js";
import { describeWithPostgres } from "../helpers/databases.js";
import { captureLog, stderrEvents } from "../helpers/log-lines.js";
import { createPgPair, type PgPair } from "../helpers/pg-pair.js";
import { freePort } from "../helpers/pgbouncer.js";

const SCHEMA = "failover";
const RUNS = 8;
// longer than a failover takes here (promotion 2-6 s on a loaded machine): no process dies in this
// test, so a lease must outlive the seconds without a primary; a shorter one would hand runs to the
// other worker although their own is alive (the lease's job is a dead worker, not a failover).
// The product's default (30 s): at load average 25-30 on 2 cores a worker's heartbeat did not land
// for more than 10 s with the database up (leases of 10 s lapsed seconds before the primary died)
const LEASE_MS = 30_000;
const MAX_ATTEMPTS = 3;
// bounds, not expectations: on the shared 2-core machine with 4 spinners beside it (load average
// 25-30 with other jobs) a worker process took more than 30 s to start, and runs more than 35 s to
// settle after the failover; the old bounds (30 s, 40 s, 90 s of child life) failed rounds there
const START_WAIT_MS = 90_000;
const SETTLE_WAIT_MS = 90_000;
const CHILD_LIFE_MS = 240_000;

describeWithPostgres("failover from a primary to its promoted standby", () => {
  let pair: PgPair;
  const dirs: string[] = [];

  beforeAll(async () => {
    pair = await createPgPair({ synchronous: true });
  }, 60_000);

  afterAll(async () => {
    await killLiveChildren();
    await pair?.destroy();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a URL whose hosts are all standbys, or one standby, is refused naming each host; so is a read-only target_session_attrs", async () => {
    const standby = `127.0.0.1:${pair.standbyPort}`;
    const dead = `127.0.0.1:${await freePort()}`;
    // the same standby under two names: every host of the URL is a standby
    await expect(openDatabase({ url: `postgres://postgres@${standby},localhost:${pair.standbyPort}/postgres?target_session_attrs=read-write`, schema: SCHEMA })).rejects.toThrow(
      `no host of DATABASE_URL accepts writes, and devmind needs the primary: ${standby} is a standby (in recovery); localhost:${pair.standbyPort} is a standby (in recovery). Every host is a standby`,
    );
    const mixed = openDatabase({ url: `postgres://postgres@${dead},${standby}/postgres`, schema: SCHEMA });
    await expect(mixed).rejects.toThrow(new RegExp(`${dead} is unreachable \\(.*ECONNREFUSED.*\\); ${standby} is a standby \\(in recovery\\)$`));
    await expect(mixed).rejects.toMatchObject({ code: "DATABASE_UNREACHABLE" });
    await expect(openDatabase({ url: pair.url("standby"), schema: SCHEMA })).rejects.toThrow(`the server at postgres://postgres@${standby}/postgres is a standby (in recovery), and devmind writes`);
    expect(() => loadConfig({ DATABASE_URL: `postgres://u@${standby},${dead}/db?target_session_attrs=read-only` })).toThrow(
      "DATABASE_URL: expected target_session_attrs=read-write (or primary, or any): devmind writes",
    );
  }, 30_000);

  it("the primary dies mid-run and the lagging standby is promoted: every process stays up, every run succeeds, no line twice", async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-failover-")));
    dirs.push(workspace);
    const url = pair.url("both");
    // the standby lags: its replay is paused (it still receives and flushes every commit, synchronously)
    await pair.sql("standby", "SELECT pg_wal_replay_pause()");
    const log = captureLog();
    const db: Database = await openDatabase({ url, schema: SCHEMA, logger: log.logger, maxConnections: 4 });
    let runtime: Runtime | undefined;
    const workers: { child: FixtureChild; exited: boolean }[] = [];
    try {
      const lagging = log.events("database.standby_lagging");
      expect(lagging.map((line) => [line["standby"], line["replay_paused"]])).toEqual([[`127.0.0.1:${pair.standbyPort}`, true]]);
      expect(String(lagging[0]?.["msg"])).toContain("replay is paused");
      // synchronous replication: no warning that a failover may lose commits
      expect(log.events("database.replication_async")).toEqual([]);

      await migrate(db);
      runtime = createRuntime({ db, config: loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: String(LEASE_MS) }) });
      const script = chaosScript({ tool: 300, answer: 100 });
      for (let i = 0; i < 2; i += 1) {
        const options: ChaosWorkerOptions = { url, schema: SCHEMA, workspace, script, concurrency: 4, leaseMs: LEASE_MS, maxAttempts: MAX_ATTEMPTS, logLevel: "info" };
        const worker = { child: spawnFixture("test/fixtures/chaos-worker.ts", [JSON.stringify(options)], CHILD_LIFE_MS), exited: false };
        void worker.child.exited.then(() => (worker.exited = true));
        workers.push(worker);
      }
      await Promise.all(workers.map((w) => waitForLine(w.child, `ready ${w.child.pid}`, START_WAIT_MS)));

      const tags = new Map<string, string>();
      const create = async (): Promise<void> => {
        const threadId = randomUUID();
        const run = await (runtime as Runtime).runs.create({ threadId, input: { messages: [chaosTask(threadId)] } });
        tags.set(run.run_id, threadId);
      };
      for (let i = 0; i < RUNS - 2; i += 1) await create();
      // mid-run: wait until tool calls have been made, then the primary dies and the standby takes over
      const midRun = Date.now() + 20_000;
      for (;;) {
        const made = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${SCHEMA}".tool_ledger`);
        if ((made.rows[0]?.n ?? 0) >= 6 || Date.now() > midRun) break;
        await sleep(50);
      }
      const failoverAt = Date.now();
      await pair.killPrimary();
      await sleep(500);
      await pair.promoteStandby();
      const promotedMs = Date.now() - failoverAt;
      // new runs are created on the new primary
      for (let i = 0; i < 2; i += 1) await create();

      const settleEnds = Date.now() + SETTLE_WAIT_MS;
      let open = RUNS;
      while (Date.now() < settleEnds && workers.every((w) => !w.exited)) {
        const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${SCHEMA}".runs WHERE status NOT IN ('success', 'error', 'timeout', 'interrupted')`);
        open = counted.rows[0]?.n ?? RUNS;
        if (open === 0) break;
        await sleep(200);
      }
      const settledMs = Date.now() - failoverAt;
      expect(workers.map((w) => w.exited), workers.map((w) => w.child.stderr().slice(-2_000)).join("\n")).toEqual([false, false]);
      expect(open, "runs still open after the failover").toBe(0);
      for (const worker of workers) {
        // each worker noticed the failover and moved its connections to the promoted standby
        expect(stderrEvents(worker.child.stderr(), "database.primary_changed").map((line) => line["to"])).toContain(`127.0.0.1:${pair.standbyPort}`);
      }
      expect(log.events("database.primary_changed").map((line) => line["to"])).toEqual([`127.0.0.1:${pair.standbyPort}`]);

      const { problems, stats } = await auditChaos({
        db,
        schema: SCHEMA,
        workspace,
        tags,
        runs: RUNS,
        maxAttempts: MAX_ATTEMPTS,
        lifeOf: (worker) => (workers.some((w) => typeof worker === "string" && worker.split(":").includes(String(w.child.pid))) ? { startedAt: 0, killedAt: null } : undefined),
      });
      // runs taken from a live worker whose liveness lock was not back yet (issue 37): none expected either
      const ownerGone = workers.flatMap((w) => stderrEvents(w.child.stderr(), "run.owner_gone"));
      const leaseRecovered = workers.flatMap((w) => stderrEvents(w.child.stderr(), "run.recovered"));
      console.log(
        `failover summary ${JSON.stringify({ ownerGone: ownerGone.length, leaseRecoveredLines: leaseRecovered.length, runs: RUNS, success: stats.success, maxAttempts: stats.maxAttempts, faultResumes: stats.faultResumes, recoveredRuns: stats.recovered, toolOutcomeUnknown: stats.unknown, unknownButAppended: stats.unknownButAppended, linesMissing: stats.linesMissing, promotedMs, settledMs })}`,
      );
      if (problems.length > 0 || stats.recovered > 0) {
        // what each worker saw of the failover, for the cause (the bench keeps a failed round's output)
        const seen = /^(database\.|liveness\.|run\.(recovered|owner_gone|fenced|resumed|error|executed|max_attempts))/;
        for (const worker of workers) {
          const lines = worker.child
            .stderr()
            .split("\n")
            .filter((line) => seen.test(/"event":"([^"]+)"/.exec(line)?.[1] ?? ""));
          console.log(`failover worker ${worker.child.pid} (failover at ${new Date(failoverAt).toISOString()}):\n${lines.join("\n")}`);
        }
      }
      expect(problems).toEqual([]);
      expect(stats.success).toBe(RUNS);
      // no process died, so no attempt was spent: the workers continued their runs through the failover
      expect(stats.recovered).toBe(0);
      expect(stats.faultResumes).toBeGreaterThan(0);
      // (tool calls in flight when the primary died may still end TOOL_OUTCOME_UNKNOWN here although
      // no process died — issue 26 item 4 fixes that in the executor; each line is appended at most once either way)
    } finally {
      await killLiveChildren();
      await runtime?.close();
      await db.close();
    }
  }, CHILD_LIFE_MS + 60_000);
});
