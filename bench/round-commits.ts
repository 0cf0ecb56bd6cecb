import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import type { Database, Queryable, Statement } from "../src/db/types.js";
import { ScriptedChatModel } from "../src/model/scripted-model.js";
import type { ScriptedTurn } from "../src/model/scripted-turns.js";
import { createRuntime } from "../src/runtime/runtime.js";
import { benchDatabaseUrl, missingUrlMessage, parseBenchArgs, printableUrl } from "./bench-env.js";
import { dropSchema } from "./footprint.js";
import { freshSchema } from "./agent-runs.js";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Write statements by statement name, over every measured run (printed with --by-statement). */
const byName = new Map<string, number>();
const USAGE = `usage: npm run bench -- commits [--rounds N] [--by-statement]
  --rounds N       repetitions of the pair of runs (default 3); medians are printed
  --by-statement   also print how many times each write statement ran, over all runs
Counts the database commits a run makes per model + tool round, through the runtime (runs.execute).`;

/** Model rounds of the short and the long run; the per-round figure is their difference over this gap. */
const SHORT_ROUNDS = 5;
const LONG_ROUNDS = 25;

/** A write statement: its text inserts, updates or deletes (CTEs included). */
const WRITES = /\b(INSERT\s+INTO|UPDATE\s+\S+\s+(AS\s+\S+\s+)?SET|DELETE\s+FROM)\b/i;

export interface Counts {
  /** Statements run outside a transaction whose text writes: each is its own commit. */
  writeStatements: number;
  /** `transaction()` calls: one commit each, however many statements inside. */
  transactions: number;
  /** Every other statement outside a transaction (reads, pg_notify). */
  otherStatements: number;
}

/** Wraps a Database so every statement and transaction is counted. */
export function counting(db: Database, counts: Counts): Database {
  const text = (sql: string | Statement) => (typeof sql === "string" ? sql : sql.text);
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") {
        return (sql: string | Statement, values?: readonly unknown[]) => {
          if (WRITES.test(text(sql))) {
            counts.writeStatements += 1;
            const name = typeof sql === "string" ? sql.slice(0, 40) : sql.name;
            byName.set(name, (byName.get(name) ?? 0) + 1);
          }
          else counts.otherStatements += 1;
          return target.query(sql, values);
        };
      }
      if (key === "transaction") {
        return <T>(fn: (tx: Queryable) => Promise<T>) => {
          counts.transactions += 1;
          return target.transaction(fn);
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `rounds` model rounds: one `add` call each, then the answer (the bench's and round-commits.int's script). */
export function script(rounds: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < rounds; i++) turns.push({ tool_calls: [{ id: `c${i}`, name: "add", args: { a: i, b: 1 } }] });
  turns.push({ content: "done" });
  return turns;
}

/** `xact_commit` of pg_stat_database for the admin connection's database. */
export async function xactCommits(admin: pg.Pool): Promise<number> {
  const result = await admin.query<{ n: string }>("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()");
  return Number(result.rows[0]?.n ?? 0);
}

/** One run of `rounds` model rounds in a fresh schema; what it committed. */
async function measureRun(url: string, admin: pg.Pool, rounds: number): Promise<Counts & { xactCommits: number }> {
  const schema = freshSchema("bench_commits");
  const workspace = await realpath(await mkdtemp(join(tmpdir(), "devmind-bench-ws-")));
  const db = await openDatabase({ url, schema });
  try {
    await migrate(db);
    const counts: Counts = { writeStatements: 0, transactions: 0, otherStatements: 0 };
    // long lease: no heartbeat during the run
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace, DEVMIND_LEASE_MS: "600000", DEVMIND_MAX_MODEL_ROUNDS: "200", DEVMIND_MAX_TOOL_CALLS: "400" });
    const runtime = createRuntime({ db: counting(db, counts), model: new ScriptedChatModel(script(rounds)), config });
    try {
      const created = await runtime.runs.create({ input: { messages: ["count"] } });
      await new Promise((resolve) => setTimeout(resolve, 200)); // let the statistics collector settle
      const before = { ...counts };
      const commitsBefore = await xactCommits(admin);
      const run = await runtime.runs.execute(created.run_id);
      if (run.status !== "success" || run.model_rounds !== rounds) throw new Error(`commits bench: run ended ${run.status} after ${run.model_rounds} rounds`);
      await new Promise((resolve) => setTimeout(resolve, 700));
      const commitsAfter = await xactCommits(admin);
      return {
        writeStatements: counts.writeStatements - before.writeStatements,
        transactions: counts.transactions - before.transactions,
        otherStatements: counts.otherStatements - before.otherStatements,
        // minus this function's own read of the statistics
        xactCommits: commitsAfter - commitsBefore - 1,
      };
    } finally {
      await runtime.close();
    }
  } finally {
    await db.close();
    await dropSchema((text, values) => admin.query(text, values), schema);
    await rm(workspace, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * `npm run bench -- commits`: database commits per model + tool round of a run executed by the
 * runtime (checkpoints, tool ledger, events, run record), as the difference between a 25-round and
 * a 5-round run divided by 20. Write statements and transactions are counted by a wrapper around
 * the Database; `xact_commit` of pg_stat_database (reads included, and anything else using the
 * same database) is shown beside them.
 */
export async function runCommitsBench(args: readonly string[]): Promise<number> {
  const parsed = parseBenchArgs(args, { "by-statement": { type: "boolean" } }, USAGE);
  if ("exit" in parsed) return parsed.exit;
  const url = benchDatabaseUrl();
  if (url === undefined) {
    console.error(missingUrlMessage("commits"));
    return 2;
  }
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  try {
    console.error(`PostgreSQL at ${printableUrl(url)}; runs of ${SHORT_ROUNDS} and ${LONG_ROUNDS} model rounds (one add call each but the last), ${parsed.rounds} times`);
    const perRound: Record<keyof Counts | "xactCommits", number[]> = { writeStatements: [], transactions: [], otherStatements: [], xactCommits: [] };
    for (let i = 0; i < parsed.rounds; i++) {
      const short = await measureRun(url, admin, SHORT_ROUNDS);
      const long = await measureRun(url, admin, LONG_ROUNDS);
      for (const key of Object.keys(perRound) as (keyof typeof perRound)[]) perRound[key].push((long[key] - short[key]) / (LONG_ROUNDS - SHORT_ROUNDS));
      console.error(`repetition ${i + 1}: short ${JSON.stringify(short)}, long ${JSON.stringify(long)}`);
    }
    const writes = median(perRound.writeStatements);
    const transactions = median(perRound.transactions);
    console.log(`per model + tool round (median of ${parsed.rounds}):`);
    console.log(`  write commits (write statements + transactions): ${(writes + transactions).toFixed(2)}  (statements ${writes.toFixed(2)}, transactions ${transactions.toFixed(2)})`);
    console.log(`  other statements (reads, notifications):          ${median(perRound.otherStatements).toFixed(2)}`);
    if (parsed.values["by-statement"] === true) console.log(Object.fromEntries(byName));
    console.log(`  pg_stat_database xact_commit delta:              ${median(perRound.xactCommits).toFixed(2)}`);
    return 0;
  } finally {
    await admin.end();
  }
}
