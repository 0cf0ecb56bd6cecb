/**
 * A crash is found through the database (issue 37, PostgreSQL): each worker process holds a
 * session-level advisory lock on a connection of its own; SIGKILL frees it, and the reaper of a
 * process started after the kill recovers the dead process's run before its 30 s lease expires —
 * shown by the stored order of things (the recovery's `run.resumed` is stamped before the lease's
 * expiry), not by a timing assertion. The starting process logs what it found and when it takes
 * each run. Through a transaction pooler without a direct URL the process falls back to the
 * lease and says so.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { chaosTask, type ChaosWorkerOptions } from "../fixtures/chaos-worker.js";
import { killLiveChildren, spawnFixture, waitForLine, type FixtureChild } from "../helpers/child-process.js";
import { describeWithPostgres, dropSchema, freshSchemaName, TEST_DATABASE_URL } from "../helpers/databases.js";
import { stderrEvents } from "../helpers/log-lines.js";
import { PGBOUNCER_BIN, startPgBouncer } from "../helpers/pgbouncer.js";

const LEASE_MS = 30_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await killLiveChildren();
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});
afterAll(() => killLiveChildren());

async function until<T>(read: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

describeWithPostgres("crash detection through the database (PostgreSQL)", () => {
  it("SIGKILL of the process running a run: a process started after it recovers the run with reason owner_gone before the lease expires", async () => {
    const schema = freshSchemaName("crash");
    const url = TEST_DATABASE_URL as string;
    const db: Database = await openDatabase({ url, schema, maxConnections: 2 });
    cleanups.push(async () => {
      await dropSchema(db, schema);
      await db.close();
    });
    await migrate(db);
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-crash-")));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const base: ChaosWorkerOptions = { url, schema, workspace, concurrency: 1, leaseMs: LEASE_MS, maxAttempts: 3, logLevel: "info", script: [] };
    // the first process is killed while its model "thinks" for a minute, after a tool call finished
    const slow: ChaosWorkerOptions = { ...base, script: [{ tool_calls: [{ name: "append_file", args: { path: "{{tag}}.txt", content: "c1\n" } }] }, { content: "done", delay_ms: 60_000 }] };
    const first = spawnFixture("test/fixtures/chaos-worker.ts", [JSON.stringify(slow)], 90_000);
    await waitForLine(first, `ready ${first.pid}`, 30_000);

    const tag = randomUUID();
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: String(LEASE_MS) }) });
    cleanups.push(() => runtime.close());
    const created = await runtime.runs.create({ threadId: tag, input: { messages: [chaosTask(tag)] } });
    // the first process runs it: the tool call done, the second model round under way
    const lease = await until(async () => {
      const rows = (await db.query<{ expires: string; owner: string }>(
        `SELECT to_char(lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires, lease_owner AS owner FROM "${schema}".runs r
          WHERE run_id = $1::uuid AND status = 'running' AND (SELECT count(*) FROM "${schema}".run_events e WHERE e.run_id = r.run_id AND e.type = 'model.started') >= 2`,
        [created.run_id],
      )).rows;
      return rows[0] ?? null;
    }, 30_000, "the first process to be in the run's second model round");
    expect(lease.owner.split(":")[1]).toBe(String(first.pid));
    first.process.kill("SIGKILL");
    await first.exited;

    // a process started after the kill (a restarted server): it finds the run and takes it at once
    const second = spawnFixture("test/fixtures/chaos-worker.ts", [JSON.stringify({ ...base, script: [slow.script[0], { content: "done" }] })], 90_000);
    await waitForLine(second, `ready ${second.pid}`, 30_000);
    const ended = await until(async () => {
      const run = await runtime.runs.get(created.run_id);
      return run.status === "running" || run.status === "pending" ? null : run;
    }, 20_000, "the run to end in the second process");
    expect([ended.status, ended.attempt]).toEqual(["success", 2]);

    const events: Record<string, unknown>[] = [];
    for await (const event of runtime.runs.events(created.run_id)) events.push(event);
    const resumed = events.filter((event) => event["type"] === "run.resumed");
    expect(resumed.map((event) => [event["reason"], event["attempt"], String(event["worker"]).split(":")[1]])).toEqual([["recovery", 2, String(second.pid)]]);
    // recovered through the death signal: stamped by the database before the first lease would have lapsed
    expect(Date.parse(String(resumed[0]?.["at"]))).toBeLessThan(Date.parse(lease.expires));
    const found = stderrEvents(second.stderr(), "runs.found_running");
    expect(found.map((line) => (line["runs"] as { run_id: string; taken: string; owner: string }[]).map((run) => [run.run_id, run.taken, run.owner]))).toEqual([[[created.run_id, "now", lease.owner]]]);
    const gone = stderrEvents(second.stderr(), "run.owner_gone");
    expect(gone.flatMap((line) => line["run_ids"] as string[])).toEqual([created.run_id]);
    expect(gone[0]?.["reason"]).toBe("owner_gone");
  }, 120_000);

  it.runIf(PGBOUNCER_BIN !== undefined)("through a transaction pooler without a direct URL a worker falls back to the lease and says so", async () => {
    const schema = freshSchemaName("crashpool");
    const url = TEST_DATABASE_URL as string;
    const db: Database = await openDatabase({ url, schema, maxConnections: 2 });
    cleanups.push(async () => {
      await dropSchema(db, schema);
      await db.close();
    });
    await migrate(db);
    const bouncer = await startPgBouncer(url);
    cleanups.push(() => bouncer.stop());
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "devmind-crashpool-")));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const options: ChaosWorkerOptions = { url: bouncer.pooled(url), schema, workspace, concurrency: 1, leaseMs: LEASE_MS, logLevel: "info", script: [{ content: "done" }] };
    const child: FixtureChild = spawnFixture("test/fixtures/chaos-worker.ts", [JSON.stringify(options)], 60_000);
    await waitForLine(child, `ready ${child.pid}`, 30_000);
    const lines = stderrEvents(child.stderr(), "database.liveness_lease");
    expect(lines.map((line) => String(line["msg"]))).toEqual([
      "crash detection falls back to the lease: DATABASE_URL goes through a transaction pooler and DEVMIND_DATABASE_DIRECT_URL is not set (no session can hold a lock); a dead process's runs are recovered when their leases expire (DEVMIND_LEASE_MS), not at once",
    ]);
    expect((await db.query(`SELECT process_id FROM "${schema}".live_processes`)).rows).toEqual([]);
  }, 60_000);
});
