/**
 * Bounded waits on PostgreSQL (src/db, docs/partition.md): a statement whose answer never comes
 * fails as a database fault instead of hanging its caller, and its backend is cancelled; a LISTEN
 * connection that died silently is found by its watchdog and replaced. A silent death is made
 * with the TCP forwarder's stall (test/helpers/pg-proxy.ts): connections stay open, nothing flows.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PgDatabase } from "../../src/db/pg-database.js";
import { DatabaseError } from "../../src/errors.js";
import { captureLog } from "../helpers/log-lines.js";
import { TEST_DATABASE_URL } from "../helpers/databases.js";
import { until } from "../helpers/partition-kit.js";
import { startPgProxy, type PgProxy } from "../helpers/pg-proxy.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function proxied(): Promise<PgProxy> {
  const target = new URL(TEST_DATABASE_URL as string);
  const proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
  cleanups.push(() => proxy.close());
  return proxy;
}

describe.runIf(TEST_DATABASE_URL !== undefined)("bounded waits on PostgreSQL", () => {
  it("a statement with no answer (the connection silently dead) fails DATABASE_UNREACHABLE within its bound; the pool goes on with a new connection", async () => {
    const proxy = await proxied();
    const db = await PgDatabase.open(proxy.urlFor(TEST_DATABASE_URL as string), "public", { max: 1, queryTimeoutMs: 500, connectionTimeoutMs: 5_000 });
    cleanups.push(() => db.close());
    const before = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    proxy.stall();
    const failures = await Promise.all([
      db.query("SELECT 1").catch((error: unknown) => error),
      db.transaction(async (tx) => tx.query("SELECT 2")).catch((error: unknown) => error),
    ]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(DatabaseError);
      expect(failure).toMatchObject({ code: "DATABASE_UNREACHABLE" });
    }
    expect(failures[0]).toMatchObject({ details: { cause: "query_timeout" } });
    expect((failures[0] as Error).message).toMatch(/no answer to a statement within 500 ms/);
    proxy.resume();
    // the dead connection was destroyed, not pooled again: the answer comes from another backend
    const after = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
    expect(after).toBeTypeOf("number");
    expect(after).not.toBe(before);
  }, 60_000);

  it("a statement given up on is cancelled on the server: its backend does not run on", async () => {
    const db = await PgDatabase.open(TEST_DATABASE_URL as string, "public", { max: 1, queryTimeoutMs: 500 });
    cleanups.push(() => db.close());
    const observer = await PgDatabase.open(TEST_DATABASE_URL as string, "public", { max: 1 });
    cleanups.push(() => observer.close());
    const marker = `bounded_${process.pid}_${Date.now()}`;
    const failure = await db.query(`SELECT pg_sleep(60) AS ${marker}`).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "DATABASE_UNREACHABLE", details: { cause: "query_timeout" } });
    // without the cancel request the backend would sleep its 60 s: a closed socket is not noticed in pg_sleep
    await until("the sleeping backend to be cancelled", 15_000, async () => {
      const running = await observer.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`, [`%${marker}%`]);
      return running.rows[0]?.n === 0;
    });
  }, 60_000);

  it("a LISTEN connection that stops answering is found by its watchdog, replaced, and notifications arrive again", async () => {
    const proxy = await proxied();
    const log = captureLog("debug");
    const db = await PgDatabase.open(proxy.urlFor(TEST_DATABASE_URL as string), "public", { logger: log.logger, listenCheck: { checkMs: 200, checkTimeoutMs: 400 } });
    cleanups.push(() => db.close());
    const sender = await PgDatabase.open(TEST_DATABASE_URL as string, "public", { max: 1 });
    cleanups.push(() => sender.close());
    const channel = `bounded_${process.pid}`;
    const heard: string[] = [];
    const unlisten = await db.listen(channel, (payload) => heard.push(payload));
    cleanups.push(unlisten);
    await sender.query("SELECT pg_notify($1, 'before')", [channel]);
    await until("the first notification", 10_000, async () => heard.includes("before"));
    proxy.stall();
    await until("the watchdog to take the connection for dead", 10_000, async () => log.events("database.listen_lost").length > 0);
    proxy.resume();
    // a notification reaches only a connection listening again: send until one arrives (bounded)
    await until("a notification after the stall", 30_000, async () => {
      await sender.query("SELECT pg_notify($1, 'after')", [channel]);
      return heard.includes("after");
    });
    expect(log.events("database.listen_lost")).toHaveLength(1);
  }, 60_000);
});
