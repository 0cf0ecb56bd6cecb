import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { PostgresStore as OfficialPostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { benchDatabaseUrl, missingUrlMessage, parseBenchArgs, printableUrl, URL_VARIABLES } from "./bench-env.js";
import { median, summarize, timed, type OpStats } from "./stats.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import { PostgresStore } from "../src/store/postgres-store.js";

const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "store.json");
const POOL_SIZE = 10;

/** The workload: users' memories under ["users", id, "memories"], values of about 300 bytes. */
const WORKLOAD = {
  users: 50,
  itemsPerUser: 20,
  batchSize: 50,
  batches: 20,
  gets: 1_000,
  searches: 500,
  filteredSearches: 300,
  listings: 200,
  warmupCalls: 30,
  kinds: 5,
  seed: 7_919,
} as const;

const OPS = ["put", "putBatch", "get", "search", "searchFilter", "listNamespaces"] as const;
type OpName = (typeof OPS)[number];
/** Ops whose throughput counts items, not calls (a batch of 50 puts is 50 puts). */
const ITEMS_PER_CALL: Record<OpName, number> = { put: 1, putBatch: WORKLOAD.batchSize, get: 1, search: 1, searchFilter: 1, listNamespaces: 1 };

const USAGE = `usage: npm run bench -- store [--rounds N]
  --rounds N   rounds on PostgreSQL, alternating which store goes first (default 3)
Our PostgresStore vs the official PostgresStore (@langchain/langgraph-checkpoint-postgres/store) on one
PostgreSQL, then ours on embedded PGlite. PostgreSQL URL from ${URL_VARIABLES.join(", else ")}.`;

/** A deterministic pseudo-random sequence (LCG), so both stores see the same calls. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function memory(user: number, item: number, revision: number): Record<string, unknown> {
  const words = ["prefers", "typescript", "postgres", "coffee", "mornings", "concise", "answers", "travels", "berlin", "cats"];
  const text = Array.from({ length: 36 }, (_, i) => words[(user * 7 + item * 3 + i + revision) % words.length]).join(" ");
  return { text, kind: `k${(user + item) % WORKLOAD.kinds}`, n: item, revision };
}

async function measure(calls: number, call: (index: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < calls; index += 1) samples.push(await timed(() => call(index)));
  return samples;
}

/** Runs the workload on one store; per-op stats with throughput in items per second. */
async function runWorkload(store: BaseStore): Promise<Record<OpName, OpStats>> {
  const next = sequence(WORKLOAD.seed);
  const pick = (n: number): number => Math.floor(next() * n);
  const ns = (user: number): string[] => ["users", `u${user}`, "memories"];
  for (let i = 0; i < WORKLOAD.warmupCalls; i += 1) {
    await store.put(["warmup", `w${i % 3}`], `k${i}`, memory(i, i, 0));
    await store.get(["warmup", `w${i % 3}`], `k${i}`);
    await store.search(["warmup"], { limit: 10 });
  }
  const samples: Record<OpName, number[]> = {
    put: await measure(WORKLOAD.users * WORKLOAD.itemsPerUser, (i) => store.put(ns(i % WORKLOAD.users), `m${Math.floor(i / WORKLOAD.users)}`, memory(i % WORKLOAD.users, i, 0))),
    putBatch: await measure(WORKLOAD.batches, (b) =>
      store.batch(
        Array.from({ length: WORKLOAD.batchSize }, () => {
          const user = pick(WORKLOAD.users);
          const item = pick(WORKLOAD.itemsPerUser);
          return { namespace: ns(user), key: `m${item}`, value: memory(user, item, b + 1) };
        }),
      ),
    ),
    get: await measure(WORKLOAD.gets, () => store.get(ns(pick(WORKLOAD.users)), `m${pick(WORKLOAD.itemsPerUser)}`)),
    search: await measure(WORKLOAD.searches, () => store.search(ns(pick(WORKLOAD.users)), { limit: 10 })),
    searchFilter: await measure(WORKLOAD.filteredSearches, () => store.search(["users"], { filter: { kind: `k${pick(WORKLOAD.kinds)}` }, limit: 10 })),
    listNamespaces: await measure(WORKLOAD.listings, () => store.listNamespaces({ prefix: ["users"], limit: 100 })),
  };
  return Object.fromEntries(
    OPS.map((op) => {
      const stats = summarize(samples[op]);
      return [op, { ...stats, opsPerSec: stats.opsPerSec * ITEMS_PER_CALL[op] }];
    }),
  ) as Record<OpName, OpStats>;
}

function freshSchema(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

async function runOurs(url: string, admin: pg.Pool): Promise<Record<OpName, OpStats>> {
  const schema = freshSchema("bench_store_ours");
  const db = await openDatabase({ url, schema, maxConnections: POOL_SIZE });
  try {
    await migrate(db);
    return await runWorkload(new PostgresStore(db));
  } finally {
    await db.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

async function runPeer(url: string, admin: pg.Pool): Promise<Record<OpName, OpStats>> {
  const schema = freshSchema("bench_store_peer");
  const store = new OfficialPostgresStore({ connectionOptions: { connectionString: url, max: POOL_SIZE }, schema });
  try {
    await store.setup();
    return await runWorkload(store);
  } finally {
    await store.stop();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

async function runPglite(): Promise<Record<OpName, OpStats>> {
  const db = await openDatabase({ dataDir: "memory://", schema: "bench_store" });
  try {
    await migrate(db);
    return await runWorkload(new PostgresStore(db));
  } finally {
    await db.close();
  }
}

function row(cells: string[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(16) : cell.padStart(13))).join(" ");
}

/**
 * `npm run bench -- store`: our PostgresStore against the official PostgresStore on one
 * PostgreSQL (fresh schema per store per round, alternating order), then ours on in-memory PGlite.
 * Throughput is items per second of sequential calls (a batch counts its puts). Prints the table
 * and writes `bench/results/store.json`. Returns 0, or 2 for bad arguments or no database.
 */
export async function runStoreBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, {}, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(missingUrlMessage("store"));
    return 2;
  }
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  const rounds: { round: number; order: string[]; ours: Record<OpName, OpStats>; peer: Record<OpName, OpStats> }[] = [];
  let version: string | null = null;
  try {
    version = ((await admin.query("SHOW server_version")).rows[0] as { server_version: string } | undefined)?.server_version ?? null;
    console.error(`PostgreSQL ${version} at ${printableUrl(url)}; ${parsed.rounds} rounds`);
    for (let round = 1; round <= parsed.rounds; round += 1) {
      const order = round % 2 === 1 ? ["ours", "peer"] : ["peer", "ours"];
      const result: Partial<Record<"ours" | "peer", Record<OpName, OpStats>>> = {};
      const started = performance.now();
      for (const side of order) result[side as "ours" | "peer"] = side === "ours" ? await runOurs(url, admin) : await runPeer(url, admin);
      console.error(`round ${round}: ${order.join(" then ")}, ${((performance.now() - started) / 1000).toFixed(1)} s`);
      rounds.push({ round, order, ours: result.ours!, peer: result.peer! });
    }
  } finally {
    await admin.end();
  }
  const pglite = await runPglite();

  const summary = OPS.map((op) => {
    const ratios = rounds.map((r) => r.ours[op].opsPerSec / r.peer[op].opsPerSec);
    return {
      op,
      oursItemsPerSec: median(rounds.map((r) => r.ours[op].opsPerSec)),
      peerItemsPerSec: median(rounds.map((r) => r.peer[op].opsPerSec)),
      ratio: median(ratios),
      ratios,
      oursP50Ms: median(rounds.map((r) => r.ours[op].p50Ms)),
      peerP50Ms: median(rounds.map((r) => r.peer[op].p50Ms)),
      pgliteItemsPerSec: pglite[op].opsPerSec,
    };
  });
  // the ratio is ours ÷ official items per second: above 1 ours is faster
  console.log("ratio = ours items/s ÷ official items/s (above 1: ours is faster)");
  console.log(row(["op", "ours items/s", "official", "ratio", "ours p50 ms", "official p50", "PGlite items/s"]));
  for (const entry of summary) {
    console.log(
      row([
        entry.op,
        entry.oursItemsPerSec.toFixed(0),
        entry.peerItemsPerSec.toFixed(0),
        `${entry.ratio.toFixed(2)}x`,
        entry.oursP50Ms.toFixed(3),
        entry.peerP50Ms.toFixed(3),
        entry.pgliteItemsPerSec.toFixed(0),
      ]),
    );
  }
  const results = {
    bench: "store",
    command: "npm run bench -- store",
    date: new Date().toISOString(),
    node: process.version,
    postgres: { version, url: printableUrl(url) },
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", platform: process.platform, arch: process.arch },
    peer: "@langchain/langgraph-checkpoint-postgres/store PostgresStore 1.0.5",
    workload: { ...WORKLOAD, poolSize: POOL_SIZE },
    summary,
    rounds,
    pglite,
  };
  await mkdir(dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nfull results: ${relative(process.cwd(), RESULTS_FILE)}`);
  return 0;
}
