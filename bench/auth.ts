/**
 * What custom auth costs on the hottest read: requests per second on `GET /threads/{id}` served
 * with an API key (the key check, no filter) and with a LangGraph `Auth` handler (authenticate +
 * `threads:read` filter applied in the thread's SQL), on one PostgreSQL schema, and how many SQL
 * statements each request runs (auth must add no round trip: the filter rides in the same query).
 *
 * Usage: DEVMIND_BENCH_DATABASE_URL=postgres://... npx tsx bench/auth.ts [--requests N] [--concurrency C] [--rounds R]
 * (not part of `npm run bench`; prints one line per mode and round, then the medians).
 */
import { AUTH_DEFAULTS } from "../src/constants.js";
import { parseArgs } from "node:util";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { benchDatabaseUrl, missingUrlMessage } from "./bench-env.js";
import { median } from "./stats.js";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import type { Database } from "../src/db/types.js";
import { ScriptedChatModel } from "../src/model/scripted-model.js";
import { createRuntime } from "../src/runtime/runtime.js";
import type { CustomAuth } from "../src/server/custom-auth/auth-types.js";
import { startServer } from "../src/server/start-server.js";

const KEY = "bench-key-0123456789";
const { values } = parseArgs({ options: { requests: { type: "string", default: "4000" }, concurrency: { type: "string", default: "8" }, rounds: { type: "string", default: "3" } } });
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);

/** The handler a multi-user service would write: a token per user, threads owned through metadata. */
const handler = new Auth()
  .authenticate((request: Request) => {
    const token = (request.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
    if (!token.startsWith("tok-")) throw new HTTPException(401, { message: "no token" });
    return { identity: token.slice(4), permissions: ["me"] };
  })
  .on("threads", ({ value, user, action }) => {
    if (action === "create") {
      value.metadata ??= {};
      value.metadata["owner"] = user.identity;
    }
    return { owner: user.identity };
  });
const customAuth: CustomAuth = { source: "bench/auth.ts:handler", authenticate: handler["~handlerCache"].authenticate as CustomAuth["authenticate"], callbacks: handler["~handlerCache"].callbacks ?? {}, timeoutMs: AUTH_DEFAULTS.handlerTimeoutMs };

/** Counts every statement the server runs, to report statements per request. */
function counting(db: Database): { db: Database; count: () => number } {
  let statements = 0;
  const wrapped = Object.create(db) as Database;
  Object.assign(wrapped, {
    query: (...args: Parameters<Database["query"]>) => {
      statements += 1;
      return db.query(...args);
    },
    transaction: <T>(fn: Parameters<Database["transaction"]>[0]) => {
      statements += 2;
      return db.transaction(fn) as Promise<T>;
    },
  });
  return { db: wrapped, count: () => statements };
}

async function measure(mode: "api_key" | "custom", db: Database): Promise<{ rps: number; statementsPerRequest: number }> {
  const counted = counting(db);
  const config = loadConfig(mode === "api_key" ? { DEVMIND_API_KEYS: `alice=${KEY}` } : {});
  // the built-in agent with a scripted model: no model is called, only threads are read
  const runtime = createRuntime({ db: counted.db, config, model: new ScriptedChatModel([]) });
  const server = await startServer({ runtime, config, host: "127.0.0.1", port: 0, workers: 0, ...(mode === "custom" ? { auth: customAuth } : {}) });
  const headers: Record<string, string> = mode === "api_key" ? { "x-api-key": KEY } : { authorization: "Bearer tok-alice" };
  try {
    const created = await fetch(`${server.url}/threads`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ metadata: { owner: "alice" } }) });
    if (created.status !== 200) throw new Error(`POST /threads answered ${created.status}: ${(await created.text()).slice(0, 300)}`);
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };
    const get = async (): Promise<void> => {
      const response = await fetch(`${server.url}/threads/${threadId}`, { headers });
      if (response.status !== 200) throw new Error(`GET /threads/{id} answered ${response.status}`);
      await response.arrayBuffer();
    };
    for (let index = 0; index < 50; index += 1) await get();
    const before = counted.count();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          next += 1;
          await get();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return { rps: REQUESTS / seconds, statementsPerRequest: (counted.count() - before) / REQUESTS };
  } finally {
    await server.close();
    await runtime.close();
  }
}

async function main(): Promise<void> {
  const url = benchDatabaseUrl();
  if (url === undefined) {
    process.stderr.write(`${missingUrlMessage("auth")}\n`);
    process.exitCode = 2;
    return;
  }
  const schema = `bench_auth_${process.pid}`;
  const db = await openDatabase({ url, schema });
  const results: Record<"api_key" | "custom", { rps: number[]; statements: number[] }> = { api_key: { rps: [], statements: [] }, custom: { rps: [], statements: [] } };
  try {
    await migrate(db);
    for (let round = 0; round < ROUNDS; round += 1) {
      // alternate which mode goes first, so warm caches favour neither
      for (const mode of round % 2 === 0 ? (["api_key", "custom"] as const) : (["custom", "api_key"] as const)) {
        const { rps, statementsPerRequest } = await measure(mode, db);
        results[mode].rps.push(rps);
        results[mode].statements.push(statementsPerRequest);
        process.stdout.write(`round ${round + 1} ${mode.padEnd(7)} ${rps.toFixed(0)} req/s, ${statementsPerRequest.toFixed(2)} statements/request\n`);
      }
    }
    const line = (mode: "api_key" | "custom"): string => `${median(results[mode].rps).toFixed(0)} req/s, ${median(results[mode].statements).toFixed(2)} statements/request`;
    process.stdout.write(`GET /threads/{id}, ${REQUESTS} requests x ${ROUNDS} rounds, ${CONCURRENCY} concurrent: API key ${line("api_key")}; auth handler ${line("custom")}\n`);
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.close();
  }
}

await main();
