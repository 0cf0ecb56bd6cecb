import { setTimeout as sleep } from "node:timers/promises";
import type { Database } from "../db/types.js";
import { RunConflictError } from "../errors.js";
import type { RunRecord } from "../runtime/run-record.js";
import { RunStore, type RequeueResult } from "../runtime/run-store.js";
import type { Runtime } from "../runtime/runtime.js";
import { CLI_DEFAULTS } from "../constants.js";
import { orphanSql } from "./orphan-sql.js";
import { cliName } from "./cli-name.js";

/**
 * On the embedded database, every run marked `running` is an orphan: the data-directory lock
 * proves that no other process has the database open, so whoever held its lease died (killed,
 * crashed, a second Ctrl-C). This hands such runs to the reaper at once — back to pending, or
 * ended (cancelled when a cancel was requested, max_attempts after too many tries) — instead of
 * making the user wait for the lease to lapse. Never used on PostgreSQL, where a live worker in
 * another process may hold the lease. Returns what the reaper did.
 */
export async function recoverEmbeddedOrphans(db: Database, maxAttempts: number): Promise<RequeueResult> {
  const none: RequeueResult = { requeued: [], failed: [], cancelled: [] };
  if (db.kind !== "pglite") return none;
  const expired = await db.query(orphanSql(db.schema).expireLeases, [null]);
  if (expired.rows.length === 0) return none;
  return new RunStore(db).requeueExpired({ maxAttempts });
}

/**
 * Makes a `running` run resumable in this process. Embedded: it is an orphan (see above).
 * PostgreSQL: waits — at most until its lease lapses plus a little slack, bounded by
 * CLI_DEFAULTS.maxLeaseWaitMs — and re-queues it once the lease lapsed; a lease that keeps being
 * renewed means a live process is running it: RunConflictError (exit 2). Runs in other statuses
 * are returned as they are. `onWait` is told once when a wait begins.
 */
export async function takeOverRunning(
  db: Database,
  runtime: Runtime,
  run: RunRecord,
  options: { maxAttempts: number; onWait?: (until: string) => void },
): Promise<RunRecord> {
  if (run.status !== "running") return run;
  const store = new RunStore(db);
  if (db.kind === "pglite") {
    await recoverEmbeddedOrphans(db, options.maxAttempts);
    return runtime.runs.get(run.run_id);
  }
  const until = run.lease === null ? Date.now() : Date.parse(run.lease.expires_at);
  const waitMs = until - Date.now();
  if (waitMs > CLI_DEFAULTS.maxLeaseWaitMs) throw heldElsewhere(run);
  if (waitMs > 0) options.onWait?.(run.lease?.expires_at ?? "");
  const deadline = Date.now() + Math.max(0, waitMs) + CLI_DEFAULTS.leaseSlackMs;
  for (;;) {
    await store.requeueExpired({ maxAttempts: options.maxAttempts });
    const now = await runtime.runs.get(run.run_id);
    if (now.status !== "running") return now;
    const renewed = now.lease !== null && run.lease !== null && (now.lease.epoch !== run.lease.epoch || Date.parse(now.lease.expires_at) > until);
    if (renewed || Date.now() >= deadline) throw heldElsewhere(now);
    await sleep(Math.min(CLI_DEFAULTS.leasePollMs, Math.max(1, deadline - Date.now())));
  }
}

function heldElsewhere(run: RunRecord): RunConflictError {
  const holder = run.lease === null ? "another process" : `${run.lease.owner} (lease until ${run.lease.expires_at})`;
  return new RunConflictError(
    `run ${run.run_id} is running in ${holder}; follow it with \`${cliName()} events ${run.run_id} --follow\`, or cancel it with \`${cliName()} cancel ${run.run_id}\``,
    { runId: run.run_id, status: run.status },
  );
}

/**
 * After a cancel request on a running run: waits (bounded by `waitMs`) until it stops. Its worker
 * stops it at the next check; if that worker is dead, the run is ended as the reaper would
 * (cancelled) once its lease lapsed — at once on the embedded database, where it must be dead.
 */
export async function waitForCancel(db: Database, runtime: Runtime, runId: string, options: { maxAttempts: number; waitMs: number }): Promise<RunRecord> {
  const store = new RunStore(db);
  const deadline = Date.now() + options.waitMs;
  await recoverEmbeddedOrphans(db, options.maxAttempts);
  for (;;) {
    await store.requeueExpired({ maxAttempts: options.maxAttempts });
    const run = await runtime.runs.get(runId);
    if (run.status !== "running" || Date.now() >= deadline) return run;
    await sleep(Math.min(CLI_DEFAULTS.leasePollMs, Math.max(1, deadline - Date.now())));
  }
}
