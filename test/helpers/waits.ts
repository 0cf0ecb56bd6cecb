import { setTimeout as sleep } from "node:timers/promises";
import type { Database } from "../../src/db/types.js";

/** How often a bounded wait looks again; short, the bound is what matters. */
const POLL_MS = 20;

/**
 * Waits until `check` returns something other than undefined/false (and returns it), looking
 * every 20 ms; throws naming `what` after `timeoutMs`. Use it instead of sleeping for a while and
 * hoping the condition holds by then: on a loaded machine "a while" is never long enough.
 */
export async function waitUntil<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * Waits until a statement on `schema` is blocked by another session's lock on the test
 * PostgreSQL server (`pg_blocking_pids`), asked through `observer`, a connection not involved in
 * the race. A race test calls it to prove the race happened: the write was in flight, waiting on
 * the row the other transaction holds, before that transaction commits.
 */
export async function waitForBlockedStatement(observer: Database, schema: string, timeoutMs: number): Promise<number> {
  return waitUntil(
    `a statement on schema ${schema} to wait on another session's lock`,
    async () => {
      const blocked = await observer.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND cardinality(pg_blocking_pids(pid)) > 0 AND query LIKE $1`,
        [`%${schema}%`],
      );
      const n = blocked.rows[0]?.n ?? 0;
      return n > 0 ? n : undefined;
    },
    timeoutMs,
  );
}
