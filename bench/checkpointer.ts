import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { benchDatabaseUrl, missingUrlMessage, parseBenchArgs, printableUrl, URL_VARIABLES } from "./bench-env.js";
import { PostgresCheckpointSaver } from "../src/checkpoint/postgres-saver.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import type { Database } from "../src/db/types.js";
import { printReport, summarizeRounds, type RoundResult, type SaverRun } from "./checkpointer-report.js";
import { dropSchema, measureSchema, type RunQuery } from "./footprint.js";
import { OPS, runWorkload, warmUp, type OpName, type OpSamples } from "./run-workload.js";
import { summarize, type OpStats } from "./stats.js";
import { buildWorkload, WORKLOAD, type Workload } from "./workload.js";

/** Pool size of each saver (the pg.Pool default, so both sides get the same). */
const POOL_SIZE = 10;
const FLOOR_CALLS = 1000;
const FLOOR_WARMUP_CALLS = 50;
const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "checkpointer.json");

const USAGE = `usage: npm run bench -- checkpointer [--rounds N] [--pglite-only]
  --rounds N       rounds on PostgreSQL, alternating which saver goes first (default 3)
  --pglite-only    skip the PostgreSQL comparison; run our saver on embedded PGlite only
PostgreSQL URL from ${URL_VARIABLES.join(", else ")}.`;

function freshSchema(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

function summarizeSamples(samples: OpSamples): Record<OpName, OpStats> {
  return Object.fromEntries(OPS.map((op) => [op, summarize(samples[op])])) as Record<OpName, OpStats>;
}

async function selectOneFloor(query: RunQuery): Promise<OpStats> {
  for (let call = 0; call < FLOOR_WARMUP_CALLS; call++) await query("SELECT 1");
  const samples: number[] = [];
  for (let call = 0; call < FLOOR_CALLS; call++) {
    const start = performance.now();
    await query("SELECT 1");
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

/** Our saver on its own pool and a fresh schema, dropped afterwards. */
async function runOurs(url: string, admin: RunQuery, workload: Workload): Promise<SaverRun> {
  const schema = freshSchema("bench_ours");
  let db: Database | undefined;
  try {
    db = await openDatabase({ url, schema, maxConnections: POOL_SIZE });
    await migrate(db);
    const saver = new PostgresCheckpointSaver(db);
    await warmUp(saver, workload);
    const ops = summarizeSamples(await runWorkload(saver, workload));
    return { schema, ops, footprint: await measureSchema(admin, schema) };
  } finally {
    await db?.close();
    await dropSchema(admin, schema);
  }
}

/** The official PostgresSaver on its own pool and a fresh schema, dropped afterwards. */
async function runPeer(url: string, admin: RunQuery, workload: Workload): Promise<SaverRun> {
  const schema = freshSchema("bench_peer");
  const saver = new PostgresSaver(new pg.Pool({ connectionString: url, max: POOL_SIZE }), undefined, { schema });
  try {
    await saver.setup();
    await warmUp(saver, workload);
    const ops = summarizeSamples(await runWorkload(saver, workload));
    return { schema, ops, footprint: await measureSchema(admin, schema) };
  } finally {
    await saver.end();
    await dropSchema(admin, schema);
  }
}

async function runRound(round: number, url: string, admin: RunQuery, workload: Workload): Promise<RoundResult> {
  const order: ("ours" | "peer")[] = round % 2 === 1 ? ["ours", "peer"] : ["peer", "ours"];
  const started = performance.now();
  const floor = await selectOneFloor(admin);
  const runs: Partial<Record<"ours" | "peer", SaverRun>> = {};
  const seconds: Partial<Record<"ours" | "peer", number>> = {};
  for (const side of order) {
    const sideStarted = performance.now();
    runs[side] = side === "ours" ? await runOurs(url, admin, workload) : await runPeer(url, admin, workload);
    seconds[side] = (performance.now() - sideStarted) / 1000;
  }
  if (runs.ours === undefined || runs.peer === undefined) throw new Error("bench: a saver did not run");
  const totalSeconds = (performance.now() - started) / 1000;
  console.error(`round ${round}: ${order.join(" then ")}, ${totalSeconds.toFixed(1)} s (ours ${seconds.ours?.toFixed(1)} s, PostgresSaver ${seconds.peer?.toFixed(1)} s)`);
  return { round, order, floor, ours: runs.ours, peer: runs.peer, seconds: { total: totalSeconds, ours: seconds.ours ?? 0, peer: seconds.peer ?? 0 } };
}

/** Our saver on embedded PGlite in a temporary data directory, removed afterwards. */
async function runPglite(workload: Workload): Promise<{ ops: Record<OpName, OpStats>; floor: OpStats; footprint: SaverRun["footprint"]; seconds: number }> {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), "devmind-bench-"));
  let db: Database | undefined;
  try {
    db = await openDatabase({ dataDir: dir, schema: "bench_pglite" });
    const opened = db;
    const query: RunQuery = (text, values) => opened.query(text, values);
    await migrate(db);
    const saver = new PostgresCheckpointSaver(db);
    const floor = await selectOneFloor(query);
    await warmUp(saver, workload);
    const ops = summarizeSamples(await runWorkload(saver, workload));
    const footprint = await measureSchema(query, db.schema);
    return { ops, floor, footprint, seconds: (performance.now() - started) / 1000 };
  } finally {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- checkpointer`: our PostgresCheckpointSaver against the official
 * PostgresSaver on one PostgreSQL (fresh schema per saver per round, alternating order), then
 * ours on embedded PGlite. Prints the tables and writes `bench/results/checkpointer.json`.
 * Returns the exit code: 0 done, 2 bad arguments or no database configured.
 */
export async function runCheckpointerBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, { "pglite-only": { type: "boolean" } }, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const { rounds, values } = parsed;
  const pgliteOnly = values["pglite-only"] === true;
  const url = benchDatabaseUrl();
  if (url === undefined && !pgliteOnly) {
    console.error(
      `${missingUrlMessage("checkpointer")}\n(or pass --pglite-only to run our saver on embedded PGlite alone)`,
    );
    return 2;
  }

  const workload = await buildWorkload();
  const roundResults: RoundResult[] = [];
  let serverVersion: string | null = null;
  if (!pgliteOnly && url !== undefined) {
    const adminPool = new pg.Pool({ connectionString: url, max: 2 });
    const admin: RunQuery = (text, params) => adminPool.query(text, params);
    try {
      try {
        const shown = (await admin("SHOW server_version")).rows as { server_version: string }[];
        serverVersion = shown[0]?.server_version ?? null;
      } catch (error) {
        console.error(`checkpointer bench: cannot reach PostgreSQL at ${printableUrl(url)}: ${(error as Error).message}`);
        return 1;
      }
      console.error(`PostgreSQL ${serverVersion} at ${printableUrl(url)}; ${rounds} rounds`);
      for (let round = 1; round <= rounds; round++) roundResults.push(await runRound(round, url, admin, workload));
    } finally {
      await adminPool.end();
    }
  }
  const pglite = await runPglite(workload);
  console.error(`PGlite: ${pglite.seconds.toFixed(1)} s`);

  const summary = roundResults.length > 0 ? summarizeRounds(roundResults) : undefined;
  const results = {
    bench: "checkpointer",
    command: "npm run bench -- checkpointer",
    date: new Date().toISOString(),
    node: process.version,
    postgres: url === undefined || pgliteOnly ? null : { version: serverVersion, url: printableUrl(url) },
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", platform: process.platform, arch: process.arch },
    workload: { ...WORKLOAD, poolSize: POOL_SIZE, floorCalls: FLOOR_CALLS, messageBytes: workload.messageBytes, targetMessageBytes: WORKLOAD.messageBytes },
    summary: summary ?? null,
    rounds: roundResults,
    pglite,
  };
  printReport(results);
  if (pgliteOnly) {
    console.log(`\n(${relative(process.cwd(), RESULTS_FILE)} not written: --pglite-only)`);
  } else {
    await mkdir(dirname(RESULTS_FILE), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nfull results: ${relative(process.cwd(), RESULTS_FILE)}`);
  }
  return 0;
}
