/**
 * Database faults against real processes on PostgreSQL: a `devmind worker` and a `devmind serve`
 * (with its own workers) execute 16 side-effecting runs while the backends of their database are
 * killed again and again and a client reads and creates runs over HTTP. Both processes stay up,
 * every run succeeds, no side effect happens twice, and the API answers only 2xx, 409 (a retried
 * create that had landed) or 503 with Retry-After — never 500.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnCli, type CliChild } from "../helpers/cli.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { createFaultDatabase } from "../helpers/fault-database.js";
import { startPgProxy } from "../helpers/pg-proxy.js";
import { spawnServe } from "../helpers/server-process.js";
const RUNS = 16;
/** Backend kills made while runs are running (at most), and how many must have landed so (at least). */
const KILLS_WHILE_RUNNING = 8;
const MIN_KILLS_WHILE_RUNNING = 4;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.warn(`[db-faults-processes] cleanup failed: ${String(error)}`);
    }
  }
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `devmind worker` as a child process (the CLI helper's child); stop() sends SIGTERM and resolves with its exit code. */
function spawnWorker(env: Record<string, string>): CliChild & { running(): boolean; stop(): Promise<number | null> } {
  const child = spawnCli(["worker", "--concurrency", "2"], env, { timeoutMs: 600_000 });
  let ended = false;
  void child.exited.then(() => (ended = true));
  return Object.assign(child, {
    running: () => !ended,
    async stop(): Promise<number | null> {
      if (!ended) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      try {
        return (await child.exited).code;
      } finally {
        clearTimeout(timer);
      }
    },
  });
}

// reported as skipped without PostgreSQL (a file with no suite at all would fail the run)
describe.runIf(TEST_DATABASE_URL !== undefined)("database faults across processes (PostgreSQL)", () => {
  it("backends killed while a worker and a server execute 16 runs and a client reads and creates: processes alive, every run success, no duplicate effect, only 503 in the faults", async () => {
    const fault = await createFaultDatabase();
    cleanups.push(() => fault.drop());
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-faultproc-")));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    const script = join(dir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        { tool_calls: [{ name: "append_file", args: { path: "effects.log", content: "x\n" } }], delay_ms: 200 },
        { tool_calls: [{ name: "append_file", args: { path: "effects.log", content: "x\n" } }], delay_ms: 200 },
        { content: "done", delay_ms: 100 },
      ]),
    );
    const env = { DATABASE_URL: fault.url, DEVMIND_MODEL: `scripted:${script}`, DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: "10000", LOG_LEVEL: "info" };
    const serve = await spawnServe(["--port", "0", "--workers", "2"], env);
    cleanups.push(() => serve.stop());
    const worker = spawnWorker(env);
    cleanups.push(() => worker.stop());

    const statuses = new Map<number, number>();
    let retryAfterMissing = 0;
    const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
      const response = await fetch(`${serve.url}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 503 && response.headers.get("retry-after") === null) retryAfterMissing += 1;
      return { status: response.status, json: await response.json().catch(() => null) };
    };
    /** Creates a run on a client-chosen thread, retrying a 503; a 409 on a retry means the first try landed. */
    const createRun = async (threadId: string): Promise<void> => {
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const { status } = await request("POST", `/threads/${threadId}/runs`, { assistant_id: "agent", input: { messages: [{ type: "human", content: "go" }] }, if_not_exists: "create" });
        if (status === 200 || (status === 409 && attempt > 0)) return;
        if (status !== 503) throw new Error(`create answered ${status}`);
        await sleep(100);
      }
      throw new Error("create never succeeded");
    };

    const threads = Array.from({ length: RUNS }, () => randomUUID());
    for (const thread of threads) await createRun(thread);

    // faults and a client, until every run of every thread ended
    let stop = false;
    let kills = 0;
    let killsWhileRunning = 0;
    const extraThreads: string[] = [];
    const client = (async () => {
      while (!stop) {
        const thread = threads[Math.floor(Math.random() * threads.length)] as string;
        await request("GET", `/threads/${thread}/runs`);
        await request("GET", "/runs?limit=5");
        if (extraThreads.length < 4 && Math.random() < 0.2) {
          const extra = randomUUID();
          extraThreads.push(extra);
          await createRun(extra);
        }
        await sleep(50);
      }
    })();
    const allThreads = (): string[] => [...threads, ...extraThreads];
    const deadline = Date.now() + 240_000;
    for (;;) {
      const states = await runStates(fault.url);
      const active = states.filter((state) => !["success", "error", "timeout", "interrupted"].includes(state)).length;
      if (states.length >= allThreads().length && active === 0) break;
      if (Date.now() > deadline) throw new Error(`runs did not finish: ${states.join(",")}`);
      const running = states.filter((state) => state === "running").length;
      // enough faults that hit running runs, then the rest finishes in peace (bounded test time)
      if (killsWhileRunning < KILLS_WHILE_RUNNING) {
        const killed = await fault.killBackends();
        kills += 1;
        if (running > 0 && killed > 0) killsWhileRunning += 1;
      }
      await sleep(400 + Math.floor(Math.random() * 600));
    }
    stop = true;
    await client;

    // both processes lived through it
    expect(serve.stdout()).not.toContain("Unhandled");
    expect(worker.running(), `the worker exited: ${worker.stderr().slice(-3_000)}`).toBe(true);
    expect(killsWhileRunning).toBeGreaterThanOrEqual(MIN_KILLS_WHILE_RUNNING);
    expect(kills).toBeGreaterThan(0);

    const final = await runStates(fault.url);
    expect(final).toHaveLength(RUNS + extraThreads.length);
    expect(final.every((state) => state === "success")).toBe(true);

    // each append ran at most once: lines in the file are between the calls that reported success
    // and those plus the calls reported TOOL_OUTCOME_UNKNOWN (effect may or may not have happened)
    const outcomes = await toolOutcomes(fault.url);
    const lines = readFileSync(join(workspace, "effects.log"), "utf8").split("\n").filter((line) => line !== "").length;
    expect(lines).toBeGreaterThanOrEqual(outcomes.ok);
    expect(lines).toBeLessThanOrEqual(outcomes.ok + outcomes.unknown);
    expect(outcomes.ok + outcomes.unknown).toBe(2 * final.length);

    // the API: no 500 ever, 503 only with Retry-After
    expect([...statuses.keys()].filter((status) => status >= 500 && status !== 503)).toEqual([]);
    expect(retryAfterMissing).toBe(0);
    expect([...statuses.keys()].every((status) => [200, 409, 503].includes(status))).toBe(true);

    expect(await worker.stop()).toBe(0);
    expect(await serve.stop()).toBe(0);
    expect(worker.stderr()).not.toMatch(/Unhandled|uncaught/i);
    expect(serve.stderr()).not.toMatch(/Unhandled|uncaught/i);
  }, 420_000);

  it("a worker started while the database is away waits for it (saying so once), then works the queue", async () => {
    if (TEST_DATABASE_URL === undefined) return;
    const fault = await createFaultDatabase();
    cleanups.push(() => fault.drop());
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-faultstart-")));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, "script.json");
    writeFileSync(script, JSON.stringify([{ content: "done" }]));
    proxy.stall();
    const worker = spawnWorker({ DATABASE_URL: proxy.urlFor(fault.url), DEVMIND_MODEL: `scripted:${script}`, DEVMIND_WORKSPACE: dir });
    cleanups.push(() => worker.stop());
    const deadline = Date.now() + 60_000;
    while (!worker.stderr().includes("unreachable while starting")) {
      if (!worker.running() || Date.now() > deadline) throw new Error(`the worker did not wait: ${worker.stderr()}`);
      await sleep(100);
    }
    proxy.resume();
    while (!worker.stdout().includes("worker ready")) {
      if (!worker.running() || Date.now() > deadline + 60_000) throw new Error(`the worker did not start: ${worker.stderr()}`);
      await sleep(100);
    }
    expect(worker.stderr().split("unreachable while starting").length - 1).toBe(1);
    expect(await worker.stop()).toBe(0);
  }, 240_000);
});

/** The status of every run, read on a connection of its own (it may be terminated too: retried). */
async function runStates(url: string): Promise<string[]> {
  return withRetry(url, async (client) => (await client.query<{ status: string }>("SELECT status FROM devmind.runs ORDER BY created_at")).rows.map((row) => row.status));
}

/** How the append calls ended, from the stored events. */
async function toolOutcomes(url: string): Promise<{ ok: number; unknown: number; other: number }> {
  return withRetry(url, async (client) => {
    // a call re-executed after recovery reports again: count each call id once, by its last report
    const last = (
      await client.query<{ code: string | null }>(
        `SELECT DISTINCT ON (run_id, data->>'tool_call_id') data->>'error_code' AS code
           FROM devmind.run_events WHERE type = 'tool.call.finished' ORDER BY run_id, data->>'tool_call_id', seq DESC`,
      )
    ).rows;
    return {
      ok: last.filter((row) => row.code === null).length,
      unknown: last.filter((row) => row.code === "TOOL_OUTCOME_UNKNOWN").length,
      other: last.filter((row) => row.code !== null && row.code !== "TOOL_OUTCOME_UNKNOWN").length,
    };
  });
}

async function withRetry<T>(url: string, fn: (client: import("pg").Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import("pg");
  for (let attempt = 0; ; attempt += 1) {
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => undefined);
    try {
      await client.connect();
      return await fn(client);
    } catch (error) {
      if (attempt >= 50) throw error;
      await sleep(100);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
