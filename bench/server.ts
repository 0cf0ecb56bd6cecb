import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, ProtocolSseTransportAdapter, ThreadStream } from "@langchain/langgraph-sdk";
import pg from "pg";
import { benchDatabaseUrl, missingUrlMessage, parseBenchArgs, printableUrl } from "./bench-env.js";
import { CONFORMANCE } from "./conformance/conformance-constants.js";
import { runBounded, assertSucceeded, startInGroup, stopGroup } from "./conformance/processes.js";
import { freePort, startOfficial, waitForOk } from "./conformance/servers.js";
import { cleanEnv, distIsStale } from "./conformance/workspace.js";
import { BENCH_GRAPHS_DIR, OFFICIAL_DIR, prepareOfficial } from "./server-official.js";
import { startObserverLoad } from "./observed.js";
import { backendsCpuDeltaMs, groupCpuMs, ownCpuMs, pidsCpuMs } from "./proc-cpu.js";
import { fixed, formatTable, percentile } from "./stats.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "server.json");

/** Worker slots of `devmind serve` and jobs of the official server. */
const WORKERS = 10;
/**
 * PostgreSQL backends flush their pg_stat_database counters when they go idle, at most once a
 * second, and an idle backend with counts pending flushes them within 10 s (PGSTAT_IDLE_INTERVAL):
 * a count read sooner than this after the load misses some of it.
 */
const STATS_SETTLE_MS = 11_000;
/** Looks of 5 s each, at most, for the idle count to settle before the idle window. */
const IDLE_SETTLE_TRIES = 12;
/** How long the idle server is watched for transactions. */
const IDLE_WINDOW_MS = 20_000;
/** Runs of each graph on each server before the measurements (warm caches, compiled code). */
const WARMUP_RUNS = 5;
/** Longest one case may take on one server. */
const CASE_BOUND_MS = 300_000;

/** One measured case: how runs are driven. */
interface BenchCase {
  name: string;
  /**
   * `wait` (runs.wait), `stream` (runs.stream, streamMode values, read to its end) or `protocol`
   * (the event-based protocol: the SDK's ThreadStream over SSE, run.start, then its final values).
   */
  call: "wait" | "stream" | "protocol";
  /** Clients at once, each running its share of the runs one after another. */
  concurrency: number;
  /** Runs in all. */
  runs: number;
  /** true: each client keeps one thread for all its runs (the 50 threads x 5 case); false: a new thread per run. */
  threadPerClient: boolean;
}

const CASES: readonly BenchCase[] = [
  { name: "runs.wait, concurrency 1", call: "wait", concurrency: 1, runs: 30, threadPerClient: false },
  { name: "runs.wait, concurrency 8", call: "wait", concurrency: 8, runs: 96, threadPerClient: false },
  { name: "runs.wait, concurrency 32", call: "wait", concurrency: 32, runs: 192, threadPerClient: false },
  { name: "runs.wait, 50 threads x 5 sequential", call: "wait", concurrency: 50, runs: 250, threadPerClient: true },
  { name: "runs.stream, concurrency 8", call: "stream", concurrency: 8, runs: 96, threadPerClient: false },
  { name: "protocol ThreadStream, concurrency 8", call: "protocol", concurrency: 8, runs: 96, threadPerClient: false },
];

/** The bench graphs and what a run of each must end with. */
const GRAPHS = {
  chain: { input: { path: [] as string[] }, check: (values: Record<string, unknown>) => JSON.stringify(values["path"]) === JSON.stringify(["a", "b", "c"]) },
  agent: {
    input: { messages: [{ role: "user", content: "add 2 and 3" }] },
    check: (values: Record<string, unknown>) => {
      const messages = values["messages"] as { content?: unknown }[] | undefined;
      return Array.isArray(messages) && messages.length === 4 && messages[3]?.content === "the sum is 5";
    },
  },
} as const;
type GraphId = keyof typeof GRAPHS;

const USAGE = `usage: npm run bench -- server [--scale F] [--only devmind] [--graph G] [--cases N,N] [--observed [--rounds N]]
  --scale F        multiply every case's number of runs by F (default 1; 0.25 for a quick look)
  --only devmind   skip the official server (no ratios)
  --graph G        only this graph (chain or agent); default both
  --cases N,N      only these cases, by number 1-${CASES.length} in the table's order; default all
  --cpu-prof DIR   devmind serve writes a V8 CPU profile into DIR when it stops (node --cpu-prof)
  --observed       instead of the official server, compare devmind with metrics + tracing on (/metrics
                   scraped every 1 s, spans to a local OTLP sink) against devmind with both off
                   ("baseline"), taking turns, --rounds N each per case (default 3; median kept);
                   the ratio is on / off
                   (results of a partial run are printed, not written to bench/results/server.json)
The official SDK against \`devmind serve\` (PostgreSQL, ${WORKERS} workers) and the official in-memory
server (@langchain/langgraph-api ${CONFORMANCE.officialApiVersion}, ${WORKERS} jobs), the same graphs (a 3-node chain; a fake chat model
with one ToolNode round). devmind runs in a database of its own, created and dropped here, so
pg_stat_database counts only its transactions. On Linux a second table per graph gives the CPU
milliseconds one run cost each process (/proc), and the runs/s the machine's cores could give at
that cost. PostgreSQL URL from DEVMIND_BENCH_DATABASE_URL, else
DEVMIND_TEST_DATABASE_URL, else DATABASE_URL.`;

/** What one case on one server measured. */
interface CaseResult {
  server: "devmind" | "official" | "baseline";
  graph: GraphId;
  case: string;
  runs: number;
  failed: number;
  seconds: number;
  runsPerSec: number;
  p50Ms: number;
  p95Ms: number;
  /** devmind only: pg_stat_database xact_commit delta per run (idle transactions over the same time subtracted). */
  transactionsPerRun?: number;
  /** CPU milliseconds per run while the case ran (Linux /proc; absent elsewhere). */
  cpuMsPerRun?: CpuPerRun;
  /** The protocol case: what its `values` subscriptions delivered (see `ProtocolFigures`). */
  protocol?: ProtocolFigures;
}

/**
 * The protocol case's subscriptions: `values` events each delivered per second it was open (from
 * `run.start`'s answer to the run's end; the median subscription), and the latency from a chain
 * node's write (the `at` it stamps into the state) to the client receiving that state (p50, ms).
 */
interface ProtocolFigures {
  eventsPerSecond: number;
  writeToClientP50Ms: number;
}

/** What one run cost each process in CPU time, in milliseconds. */
interface CpuPerRun {
  /** The server's process group. */
  server: number;
  /** PostgreSQL backends connected to devmind's bench database (0 for the in-memory official server). */
  postgres: number;
  /** This process: the official SDK client driving the runs. */
  client: number;
}

/** A started server: its URL and how to stop it. */
interface RunningServer {
  name: "devmind" | "official" | "baseline";
  url: string;
  child: ChildProcess;
  logFile: string;
}

/** `xact_commit` of the bench database, minus nothing (the caller subtracts its own reads). */
async function xactCommits(admin: pg.Client): Promise<number> {
  const result = await admin.query<{ n: string }>("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()");
  return Number(result.rows[0]?.n ?? 0);
}

/** CPU readings of one moment: the server's group, the database's backends, this process. */
interface CpuReading {
  server: number | undefined;
  backends: Map<number, number> | undefined;
  client: number;
}

/** The backends of the bench database other than `admin`'s own (the ones devmind serve holds). */
async function benchBackends(admin: pg.Client): Promise<number[]> {
  const result = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  return result.rows.map((row) => row.pid);
}

async function cpuReading(server: RunningServer, admin: pg.Client): Promise<CpuReading> {
  const backends = server.name !== "official" ? pidsCpuMs(await benchBackends(admin)) : new Map<number, number>();
  return { server: server.child.pid === undefined ? undefined : groupCpuMs(server.child.pid), backends, client: ownCpuMs() };
}

/** CPU per run between two readings; nothing when /proc is not there. */
function cpuPerRun(before: CpuReading, after: CpuReading, runs: number): { cpuMsPerRun?: CpuPerRun } {
  if (before.server === undefined || after.server === undefined || before.backends === undefined || after.backends === undefined || runs === 0) return {};
  return {
    cpuMsPerRun: {
      server: (after.server - before.server) / runs,
      postgres: backendsCpuDeltaMs(before.backends, after.backends) / runs,
      client: (after.client - before.client) / runs,
    },
  };
}

/** Runs `count` runs of `graph` on `client` as the case says; the latency of each call and how many failed. */
async function driveCase(client: Client, apiUrl: string, graph: GraphId, benchCase: BenchCase, runs: number): Promise<{ latencies: number[]; failed: number; seconds: number; protocol?: ProtocolFigures }> {
  const perClient = Math.ceil(runs / benchCase.concurrency);
  const spec = GRAPHS[graph];
  // threads are made before the clock starts: the case measures runs, not thread creation
  const threads: string[][] = [];
  for (let i = 0; i < benchCase.concurrency; i += 1) {
    const own = benchCase.threadPerClient ? [(await client.threads.create()).thread_id] : [];
    const list: string[] = [];
    for (let j = 0; j < perClient; j += 1) list.push(own[0] ?? (await client.threads.create()).thread_id);
    threads.push(list);
  }
  const latencies: number[] = [];
  // the protocol case: each subscription's values events per second, each node write's time to the client
  const subscriptionRates: number[] = [];
  const writeToClient: number[] = [];
  let failed = 0;
  const oneRun = async (threadId: string): Promise<void> => {
    const started = performance.now();
    try {
      // the 50 x 5 case: each run adds to the thread's state, so only the latest run's part is checked
      let values: Record<string, unknown> | undefined;
      if (benchCase.call === "wait") {
        values = (await client.runs.wait(threadId, graph, { input: spec.input })) as Record<string, unknown>;
      } else if (benchCase.call === "protocol") {
        const thread = new ThreadStream(new ProtocolSseTransportAdapter({ apiUrl, threadId }), { assistantId: graph });
        try {
          await thread.run.start({ input: spec.input });
          const opened = performance.now();
          let events = 0;
          for await (const value of thread.values) {
            events += 1;
            const at = (value as { at?: unknown } | undefined)?.at;
            if (typeof at === "number") writeToClient.push(Date.now() - at);
          }
          subscriptionRates.push(events / Math.max(0.001, (performance.now() - opened) / 1000));
          values = (await thread.values) as Record<string, unknown> | undefined;
        } finally {
          await thread.close();
        }
      } else {
        for await (const part of client.runs.stream(threadId, graph, { input: spec.input, streamMode: "values" })) {
          if (part.event === "values") values = part.data as Record<string, unknown>;
        }
      }
      latencies.push(performance.now() - started);
      if (values === undefined || (!benchCase.threadPerClient && !spec.check(values))) failed += 1;
    } catch (error) {
      failed += 1;
      if (failed <= 3) console.error(`  a run failed: ${(error as Error).message}`);
    }
  };
  const started = performance.now();
  const deadline = Date.now() + CASE_BOUND_MS;
  await Promise.all(
    threads.map(async (list) => {
      for (const threadId of list) {
        if (Date.now() > deadline) return;
        await oneRun(threadId);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (benchCase.call !== "protocol" || subscriptionRates.length === 0) return { latencies, failed, seconds };
  const median = (list: number[]): number => percentile([...list].sort((a, b) => a - b), 0.5);
  return { latencies, failed, seconds, protocol: { eventsPerSecond: median(subscriptionRates), writeToClientP50Ms: writeToClient.length === 0 ? Number.NaN : median(writeToClient) } };
}

/** Rounds per server and case with --observed (default of --rounds). */
const OBSERVED_ROUNDS = 3;

/** `servers` in turns A B, B A, A B, ... (`rounds` turns each). */
function alternating<T>(servers: readonly T[], rounds: number): T[] {
  const out: T[] = [];
  for (let round = 0; round < rounds; round += 1) out.push(...(round % 2 === 0 ? servers : [...servers].reverse()));
  return out;
}

/** The round with the median runs/s (failures summed over every round, so none hides). */
function medianRound(rounds: readonly CaseResult[]): CaseResult {
  const sorted = [...rounds].sort((a, b) => a.runsPerSec - b.runsPerSec);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] as CaseResult;
  return { ...median, failed: rounds.reduce((sum, round) => sum + round.failed, 0) };
}

/** Builds dist/ when it is older than src/ (devmind serve runs the built CLI, as users run it). */
async function ensureBuilt(log: (line: string) => void): Promise<void> {
  if (!distIsStale(REPO)) return;
  log("dist/ is older than src/: npm run build");
  assertSucceeded("npm run build", await runBounded("npm", ["run", "build"], { cwd: REPO, env: cleanEnv(), timeoutMs: CONFORMANCE.buildTimeoutMs }));
}

/** A database of the bench's own on the server of `url`; returns its URL. */
async function createBenchDatabase(url: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return own.toString();
}

async function dropBenchDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Starts `devmind serve` (built CLI) on the bench graphs with `WORKERS` worker slots. */
function startDevmindServe(databaseUrl: string, port: number, logFile: string, profileDir?: string, extraEnv: Record<string, string> = {}): ChildProcess {
  const env = cleanEnv();
  for (const name of Object.keys(env)) if (name.startsWith("DEVMIND_") || name.startsWith("OTEL_") || name.startsWith("LANGSMITH_") || name === "LANGCHAIN_TRACING_V2" || name === "DATABASE_URL" || name === "LOG_LEVEL") delete env[name];
  Object.assign(env, { DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...extraEnv });
  const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`];
  return startInGroup(process.execPath, [...profile, join(REPO, "dist", "src", "cli", "main.js"), "serve", "--config", join(BENCH_GRAPHS_DIR, "langgraph.json"), "--port", String(port), "--workers", String(WORKERS)], {
    cwd: BENCH_GRAPHS_DIR,
    env,
    logFile,
  });
}

/**
 * `npm run bench -- server`: see USAGE. Prints a table per graph (runs/s, p50, p95 on each server,
 * the ratio, devmind's transactions per run) and devmind's idle transactions per second, and writes
 * them to bench/results/server.json.
 */
export async function runServerBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, { scale: { type: "string" }, only: { type: "string" }, graph: { type: "string" }, cases: { type: "string" }, "cpu-prof": { type: "string" }, observed: { type: "boolean" }, rounds: { type: "string" } }, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const scale = parsed.values["scale"] === undefined ? 1 : Number(parsed.values["scale"]);
  if (!(scale > 0 && scale <= 20)) {
    console.error(`--scale must be a number in (0, 20]\n${USAGE}`);
    return 2;
  }
  const only = parsed.values["only"];
  if (only !== undefined && only !== "devmind") {
    console.error(`--only takes only "devmind"\n${USAGE}`);
    return 2;
  }
  const graphArg = parsed.values["graph"];
  if (graphArg !== undefined && !(typeof graphArg === "string" && graphArg in GRAPHS)) {
    console.error(`--graph takes one of ${Object.keys(GRAPHS).join(", ")}\n${USAGE}`);
    return 2;
  }
  const graphs = graphArg === undefined ? (Object.keys(GRAPHS) as GraphId[]) : [graphArg as GraphId];
  const casesArg = parsed.values["cases"];
  const caseNumbers = typeof casesArg === "string" ? casesArg.split(",").map((part) => Number(part.trim())) : CASES.map((_, index) => index + 1);
  if (caseNumbers.some((n) => !Number.isInteger(n) || n < 1 || n > CASES.length)) {
    console.error(`--cases takes numbers from 1 to ${CASES.length}, comma-separated\n${USAGE}`);
    return 2;
  }
  const cases = CASES.filter((_, index) => caseNumbers.includes(index + 1));
  const observed = parsed.values["observed"] === true;
  const observedRounds = parsed.values["rounds"] === undefined ? OBSERVED_ROUNDS : Number(parsed.values["rounds"]);
  if (!(Number.isInteger(observedRounds) && observedRounds >= 1 && observedRounds <= 20)) {
    console.error(`--rounds takes an integer from 1 to 20\n${USAGE}`);
    return 2;
  }
  const partial = observed || graphs.length < Object.keys(GRAPHS).length || cases.length < CASES.length;
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(missingUrlMessage("server"));
    return 2;
  }
  const log = (line: string): void => console.error(line);
  await ensureBuilt(log);
  const officialConfig = only === "devmind" || observed ? null : await prepareOfficial(log);
  const load = observed ? await startObserverLoad() : null;
  const logDir = mkdtempSync(join(tmpdir(), "devmind-bench-server-"));
  const dbName = `devmind_bench_${randomBytes(4).toString("hex")}`;
  const dbUrl = await createBenchDatabase(url, dbName);
  log(`PostgreSQL at ${printableUrl(url)}, database ${dbName}; logs in ${logDir}`);
  const servers: RunningServer[] = [];
  const admin = new pg.Client({ connectionString: dbUrl });
  try {
    const devmindPort = await freePort();
    const devmindLog = join(logDir, "devmind.log");
    // --observed: the baseline first, with metrics and tracing off, in a schema of its own
    if (load !== null) {
      const port = await freePort();
      const logFile = join(logDir, "baseline.log");
      servers.push({ name: "baseline", url: `http://127.0.0.1:${port}`, child: startDevmindServe(dbUrl, port, logFile, undefined, { DEVMIND_METRICS: "false", DEVMIND_DB_SCHEMA: "devmind_baseline" }), logFile });
    }
    const observers: Record<string, string> = load === null ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: load.otlpUrl, OTEL_SERVICE_NAME: "devmind-bench" };
    const devmind: RunningServer = { name: "devmind", url: `http://127.0.0.1:${devmindPort}`, child: startDevmindServe(dbUrl, devmindPort, devmindLog, typeof parsed.values["cpu-prof"] === "string" ? parsed.values["cpu-prof"] : undefined, observers), logFile: devmindLog };
    servers.push(devmind);
    let official: RunningServer | undefined;
    if (officialConfig !== null) {
      const port = await freePort();
      const logFile = join(logDir, "official.log");
      official = { name: "official", url: `http://localhost:${port}`, child: startOfficial({ dir: OFFICIAL_DIR, configPath: officialConfig, port, logFile }), logFile };
      servers.push(official);
    }
    for (const server of servers) log(`${server.name} answered /ok after ${(await waitForOk(server.url, server.child, server.logFile)).toFixed(1)} s`);
    await admin.connect();
    if (load !== null) load.scrape(devmind.url);
    const clients = new Map(servers.map((server) => [server.name, new Client({ apiUrl: server.url })]));

    for (const server of servers) {
      for (const graph of graphs) {
        const warm = await driveCase(clients.get(server.name) as Client, server.url, graph, { name: "warm-up", call: "wait", concurrency: 1, runs: WARMUP_RUNS, threadPerClient: false }, WARMUP_RUNS);
        if (warm.failed > 0) throw new Error(`${server.name}: ${warm.failed} of ${WARMUP_RUNS} warm-up runs of ${graph} failed (log: ${server.logFile})`);
      }
    }

    // the idle server after the warm-up runs: every poller's transactions (autovacuum's, counted
    // by pg_stat_database too, are few while the tables are small). Not before them: the counts
    // of the server's start (its migrations) reach pg_stat_database up to about 20 s later on a
    // busy machine, and made the idle rate look 4 to 6 times what it is
    await sleep(STATS_SETTLE_MS);
    // and not before the count has settled (at most 2 a second over 5 s; bounded)
    for (let tries = 0, last = await xactCommits(admin); tries < IDLE_SETTLE_TRIES; tries += 1) {
      await sleep(5_000);
      const now = await xactCommits(admin);
      if (now - last <= 11) break;
      last = now;
    }
    const idleStart = await xactCommits(admin);
    await sleep(IDLE_WINDOW_MS);
    const idleEnd = await xactCommits(admin);
    const idlePerSecond = (idleEnd - idleStart - 1) / (IDLE_WINDOW_MS / 1000);
    log(`devmind idle: ${idlePerSecond.toFixed(2)} transactions/s`);

    const results: CaseResult[] = [];
    let before = await xactCommits(admin);
    for (const graph of graphs) {
      for (const benchCase of cases) {
        const runs = Math.max(benchCase.concurrency, Math.round(benchCase.runs * scale));
        const measured: CaseResult[] = [];
        let devmindEnded = 0;
        let devmindStart = 0;
        // --observed: the two servers take turns (A B B A A B ...) and each keeps its median round,
        // so the drift of a shared machine falls on both alike
        const order = observed ? alternating(servers, observedRounds) : servers;
        const rounds = new Map<string, CaseResult[]>();
        for (const server of order) {
          if (server.name === "devmind" && devmindStart === 0) devmindStart = Date.now();
          const cpuBefore = await cpuReading(server, admin);
          const outcome = await driveCase(clients.get(server.name) as Client, server.url, graph, benchCase, runs);
          const cpuAfter = await cpuReading(server, admin);
          if (server.name === "devmind") devmindEnded = Date.now();
          const sorted = [...outcome.latencies].sort((a, b) => a - b);
          const round: CaseResult = {
            server: server.name,
            graph,
            case: benchCase.name,
            runs: outcome.latencies.length,
            failed: outcome.failed,
            seconds: outcome.seconds,
            runsPerSec: outcome.latencies.length / outcome.seconds,
            p50Ms: percentile(sorted, 0.5),
            p95Ms: percentile(sorted, 0.95),
            ...cpuPerRun(cpuBefore, cpuAfter, outcome.latencies.length + outcome.failed),
            ...(outcome.protocol === undefined ? {} : { protocol: outcome.protocol }),
          };
          rounds.set(server.name, [...(rounds.get(server.name) ?? []), round]);
          if (observed) log(`${graph} / ${benchCase.name} / ${server.name} round: ${fixed(round.runsPerSec, 1)} runs/s, server CPU ${fixed(round.cpuMsPerRun?.server ?? Number.NaN, 1)} ms/run`);
        }
        for (const server of servers) measured.push(medianRound(rounds.get(server.name) ?? []));
        await sleep(Math.max(0, devmindEnded + STATS_SETTLE_MS - Date.now()));
        const after = await xactCommits(admin);
        const devmindResult = measured.find((result) => result.server === "devmind") as CaseResult;
        // thread creation is counted too (a transaction per thread): part of what a client's run costs
        // (--observed: both servers wrote in between, so no count per run)
        const idleShare = Math.max(0, idlePerSecond) * ((Date.now() - devmindStart) / 1000);
        if (!observed) devmindResult.transactionsPerRun = (after - before - 1 - idleShare) / Math.max(1, devmindResult.runs);
        before = after;
        results.push(...measured);
        log(measured.map((result) => `${graph} / ${benchCase.name} / ${result.server}: ${fixed(result.runsPerSec, 1)} runs/s, p50 ${fixed(result.p50Ms, 0)} ms, ${result.failed} failed${protocolText(result)}`).join("\n"));
      }
    }

    console.log(renderTables(results, idlePerSecond, only === "devmind", observed ? "devmind, metrics+tracing off" : "official"));
    if (load !== null) {
      const { exports, scrapes, failedScrapes } = load.counts();
      console.log(`--observed: devmind (metrics + tracing on) was scraped ${scrapes} times (${failedScrapes} failed) and sent ${exports} OTLP export requests; the ratio column is on / off`);
    }
    if (!partial) {
      writeFileSync(RESULTS_FILE, `${JSON.stringify({ measuredAt: new Date().toISOString(), workers: WORKERS, scale, idleTransactionsPerSecond: idlePerSecond, results }, null, 2)}\n`);
      log(`results written to ${RESULTS_FILE}`);
    }
    return results.some((result) => result.failed > 0) ? 1 : 0;
  } finally {
    await admin.end().catch(() => undefined);
    for (const server of servers) await stopGroup(server.child, CONFORMANCE.stopGraceMs);
    await load?.stop();
    await dropBenchDatabase(url, dbName).catch((error: unknown) => log(`could not drop database ${dbName}: ${(error as Error).message}`));
    rmSync(logDir, { recursive: true, force: true });
  }
}

/**
 * CPU milliseconds per run of each process, and the runs a second the machine's cores could give
 * at that cost if every core did nothing else (cores x 1000 / the sum): the ceiling that the
 * measured runs/s of a CPU-bound case meets. `undefined` when /proc gave nothing.
 */
function cpuTable(results: readonly CaseResult[], graph: GraphId, devmindOnly: boolean, otherLabel = "official"): string | undefined {
  if (!results.some((r) => r.graph === graph && r.cpuMsPerRun !== undefined)) return undefined;
  const cores = availableParallelism();
  const of = (r: CaseResult | undefined): string[] => {
    const c = r?.cpuMsPerRun;
    if (c === undefined) return ["-", "-"];
    const total = c.server + c.postgres + c.client;
    const parts = r?.server !== "official" ? `${fixed(c.server, 1)} + ${fixed(c.postgres, 1)} + ${fixed(c.client, 1)}` : `${fixed(c.server, 1)} + ${fixed(c.client, 1)}`;
    return [`${parts} = ${fixed(total, 1)}`, fixed((cores * 1000) / total, 0)];
  };
  const rows = CASES.filter((benchCase) => results.some((r) => r.graph === graph && r.case === benchCase.name)).map((benchCase) => {
    const ours = results.find((r) => r.graph === graph && r.case === benchCase.name && r.server === "devmind");
    const theirs = results.find((r) => r.graph === graph && r.case === benchCase.name && r.server !== "devmind");
    return [benchCase.name, ...(devmindOnly ? ["-", "-"] : of(theirs)), ...of(ours)];
  });
  return [
    `CPU ms per run, ${graph} (${otherLabel === "official" ? "official: server + SDK client" : `${otherLabel}: server + PostgreSQL backends + SDK client`}; devmind: server + PostgreSQL backends + SDK client; thread creation included; ceiling = ${cores} cores x 1000 / sum):`,
    formatTable(["case", `${otherLabel} CPU ms/run`, "ceiling runs/s", "devmind CPU ms/run", "ceiling runs/s"], rows),
  ].join("\n");
}

/** The protocol case's subscription figures, for the progress log. */
function protocolText(result: CaseResult): string {
  const figures = result.protocol;
  return figures === undefined ? "" : `; values subscription ${fixed(figures.eventsPerSecond, 1)} events/s, p50 node write -> client ${fixed(figures.writeToClientP50Ms, 0)} ms`;
}

/** One table per graph: a row per case, the two servers side by side. */
function renderTables(results: readonly CaseResult[], idlePerSecond: number, devmindOnly: boolean, otherLabel = "official"): string {
  const out: string[] = [];
  for (const graph of Object.keys(GRAPHS) as GraphId[]) {
    if (!results.some((r) => r.graph === graph)) continue;
    const rows = CASES.filter((benchCase) => results.some((r) => r.case === benchCase.name)).map((benchCase) => {
      const ours = results.find((r) => r.graph === graph && r.case === benchCase.name && r.server === "devmind");
      const theirs = results.find((r) => r.graph === graph && r.case === benchCase.name && r.server !== "devmind");
      const cell = (r: CaseResult | undefined) => (r === undefined ? "-" : `${fixed(r.runsPerSec, 1)} (p50 ${fixed(r.p50Ms, 0)}, p95 ${fixed(r.p95Ms, 0)})`);
      return [
        benchCase.name,
        devmindOnly ? "-" : cell(theirs),
        cell(ours),
        ours !== undefined && theirs !== undefined ? `${fixed(ours.runsPerSec / theirs.runsPerSec, 2)}x` : "-",
        ours?.transactionsPerRun === undefined ? "-" : fixed(ours.transactionsPerRun, 1),
        String((ours?.failed ?? 0) + (theirs?.failed ?? 0)),
      ];
    });
    out.push(`graph ${graph}:`);
    out.push(formatTable(["case", `${otherLabel} runs/s (ms)`, "devmind runs/s (ms)", "ratio", "devmind xact/run", "failed"], rows));
    out.push("");
    const subscriptions = results.filter((r) => r.graph === graph && r.protocol !== undefined);
    if (subscriptions.length > 0) {
      out.push(formatTable(["protocol subscription", "values events/s (median subscription)", "p50 node write -> client (ms)"], subscriptions.map((r) => [r.server, fixed(r.protocol?.eventsPerSecond ?? Number.NaN, 1), fixed(r.protocol?.writeToClientP50Ms ?? Number.NaN, 0)])));
      out.push("");
    }
    const cpu = cpuTable(results, graph, devmindOnly, otherLabel);
    if (cpu !== undefined) out.push(cpu, "");
  }
  out.push(`devmind idle: ${fixed(idlePerSecond, 2)} transactions/s (pg_stat_database xact_commit over ${IDLE_WINDOW_MS / 1000} s)`);
  return out.join("\n");
}
