import { Client } from "@langchain/langgraph-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { tempWorkspace } from "../helpers/agent.js";
import { chainGraph } from "../helpers/chain-graph.js";
import { countingDatabase, type CountedStatement, type StatementLog } from "../helpers/counting-database.js";
import { BACKENDS, TEST_DATABASE_URL, describeWithPostgres, dropSchema, freshMigratedSchema, freshSchemaName, openBackend } from "../helpers/databases.js";
import { startPgProxy, type PgProxy } from "../helpers/pg-proxy.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";

/**
 * Pollers whose statements depend on time, not on the run: the reaper, cron ticks, TTL sweeps,
 * a lease heartbeat and the cancel poll (a run that takes longer than their period meets them),
 * and an idle slot's (or the completion loop's) claim that finds nothing.
 */
function isPoller(statement: CountedStatement): boolean {
  if (/^dm_(runs_claim_next|run_completions_claim)_/.test(statement.name)) return statement.rows === 0;
  return /^dm_(crons_[a-z_]+|runs_heartbeat|runs_cancel_requested|runs_requeue_expired|runs_next_lease_expiry|threads_expired|store_[a-z_]*ttl[a-z_]*|health_probe_write)_[0-9a-f]{12}$/.test(statement.name);
}

/** The checkpoint saver's and the event store's writes (batched by timing: a step's events may commit apart or together). */
function isStepWrite(statement: CountedStatement): boolean {
  return /^dm_(put_insert|writes_insert|events_append|group)/.test(statement.name);
}

function named(log: StatementLog, label: string): number {
  const pattern = new RegExp(`^dm_${label}_[0-9a-f]{12}$`);
  return log.statements.filter((statement) => pattern.test(statement.name) && !isPoller(statement)).length;
}

/**
 * Transactions per run of devmind serve, counted (not timed) so they cannot grow unnoticed: what
 * a LangGraph client's thread and `runs.wait` of a 3-node graph cost on the database
 * (`npm run bench -- server` measures the same on PostgreSQL's xact_commit).
 */
describe.each(BACKENDS)("transactions of one 3-node run of devmind serve on %s", (backend) => {
  let owner: Database;
  let drop: (() => Promise<void>) | undefined;
  let runtime: Runtime | undefined;
  let server: RunningServer | undefined;
  let cleanup: (() => void) | undefined;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await server?.close();
    await runtime?.close();
    await drop?.();
    cleanup?.();
    [server, runtime, drop, cleanup] = [undefined, undefined, undefined, undefined];
  });

  it("a thread costs one transaction; a runs.wait of a 3-node chain costs at most 9 (8 on an idle machine), reading nothing around the run", async () => {
    const fresh = await freshMigratedSchema(owner);
    drop = fresh.drop;
    const { db, log } = countingDatabase(fresh.db);
    const ws = tempWorkspace();
    cleanup = ws.cleanup;
    const config = loadConfig({ DEVMIND_WORKSPACE: ws.dir, DEVMIND_LEASE_MS: "30000" });
    runtime = createRuntime({ db, config, graphs: { agent: false, chain: chainGraph } });
    server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 2 });
    const client = new Client({ apiUrl: server.url });
    // warm: the assistants written, the run-end LISTEN started, the graph compiled
    const warm = await client.threads.create();
    await client.runs.wait(warm.thread_id, "chain", { input: { path: [] } });

    log.reset();
    const thread = await client.threads.create();
    expect(log.transactions((statement) => !isPoller(statement))).toBe(1);

    log.reset();
    const values = await client.runs.wait(thread.thread_id, "chain", { input: { path: [] } });
    expect(values).toEqual({ path: ["a", "b", "c"] });
    const counted = log.statements.filter((statement) => !isPoller(statement));
    const breakdown = counted.map((statement) => `${statement.tx === null ? "" : `tx${statement.tx} `}${statement.name.replace(/_[0-9a-f]{12}$/, "")}`);
    // the run start: the assistant read, the thread checked and touched, the run inserted and
    // announced, in one transaction; no read of the thread, the run or its state before or after
    expect(named(log, "assistants_get"), breakdown.join("\n")).toBe(1);
    expect(named(log, "threads_touch_existing"), breakdown.join("\n")).toBe(1);
    for (const label of ["threads_get", "runs_get", "runs_list", "resumes_open", "runs_claim"]) expect(named(log, label), `${label}\n${breakdown.join("\n")}`).toBe(0);
    // the worker: one claim with the thread's newest checkpoint read in its transaction (the graph
    // starts from it, and its state at the end is the one it stored: no read), one finish
    expect(named(log, "runs_claim_next"), breakdown.join("\n")).toBe(1);
    expect(named(log, "get_tuple_latest"), breakdown.join("\n")).toBe(1);
    const claim = counted.find((statement) => statement.name.startsWith("dm_runs_claim_next"));
    const read = counted.find((statement) => statement.name.startsWith("dm_get_tuple_latest"));
    expect(read?.tx ?? null, breakdown.join("\n")).not.toBeNull();
    expect(read?.tx, breakdown.join("\n")).toBe(claim?.tx);
    expect(named(log, "runs_finish"), breakdown.join("\n")).toBe(1);
    // start, claim, finish: everything else is the steps' checkpoints with their pending writes and events
    expect(log.transactions((statement) => !isPoller(statement) && !isStepWrite(statement)), breakdown.join("\n")).toBe(3);
    // the run's start event rides in its first checkpoint's commit, the events left at its end in
    // the finishing one: no event batch of its own here
    const finish = counted.find((statement) => statement.name.startsWith("dm_runs_finish"));
    expect(finish?.tx ?? null, breakdown.join("\n")).not.toBeNull();
    expect(counted.filter((statement) => statement.name.startsWith("dm_events_append") && statement.tx === finish?.tx).length, breakdown.join("\n")).toBe(1);
    // 5 checkpoints of a 3-node chain, its 4 pending writes inside the following checkpoints'
    // statements and its events riding in them: 5 (8 for the run, 9 with its thread, on idle
    // PGlite and PostgreSQL); one more allowed for an event batch whose step found no write to
    // ride in (a matter of timing: round-commits.int asserts the merges)
    const steps = log.transactions((statement) => !isPoller(statement) && isStepWrite(statement) && statement.tx !== finish?.tx);
    expect(steps, breakdown.join("\n")).toBeLessThanOrEqual(6);
    expect(log.transactions((statement) => !isPoller(statement)), breakdown.join("\n")).toBeLessThanOrEqual(9);
  });
});

/**
 * Round trips: what the run's transactions cost on the wire. Statements of one transaction that
 * do not wait for each other go together (BEGIN with the first, COMMIT with the last where its
 * result decides nothing): counted as the sends of the server's connections through a proxy.
 */
describeWithPostgres("round trips of one 3-node run of devmind serve on PostgreSQL", () => {
  let proxy: PgProxy | undefined;
  let db: Database | undefined;
  let runtime: Runtime | undefined;
  let server: RunningServer | undefined;
  let cleanup: (() => void) | undefined;
  const schema = freshSchemaName();
  afterAll(async () => {
    await server?.close();
    await runtime?.close();
    if (db !== undefined) await dropSchema(db, schema);
    await db?.close();
    await proxy?.close();
    cleanup?.();
  });

  it("a thread and a runs.wait of a 3-node chain cost at most 16 round trips, the fewest of 5 (14-15 measured; 28 when each statement, BEGIN and COMMIT waited for the one before)", async () => {
    const target = new URL(TEST_DATABASE_URL as string);
    proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase({ url: proxy.urlFor(TEST_DATABASE_URL as string), schema });
    await migrate(db);
    const ws = tempWorkspace();
    cleanup = ws.cleanup;
    const config = loadConfig({ DEVMIND_WORKSPACE: ws.dir, DEVMIND_LEASE_MS: "30000" });
    runtime = createRuntime({ db, config, graphs: { agent: false, chain: chainGraph } });
    server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 1 });
    const client = new Client({ apiUrl: server.url });
    const warm = await client.threads.create();
    await client.runs.wait(warm.thread_id, "chain", { input: { path: [] } });

    // the fewest of 5 runs: the server's pollers (cron, leases, sweeps) send through the same
    // proxy and a step that finds no write to ride in sends alone, which only ever add to a run's
    // count, more often on a loaded machine where a run takes longer; without pipelining every
    // run costs 28
    const trips: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const before = proxy.chunksToServer;
      const thread = await client.threads.create();
      expect(await client.runs.wait(thread.thread_id, "chain", { input: { path: [] } })).toEqual({ path: ["a", "b", "c"] });
      trips.push(proxy.chunksToServer - before);
    }
    expect(Math.min(...trips), `round trips of 5 runs: ${trips.join(", ")}`).toBeLessThanOrEqual(16);
  });
});
