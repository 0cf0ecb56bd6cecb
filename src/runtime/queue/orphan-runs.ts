import { sleep } from "../../sleep.js";
import { TAKEOVER_DEFAULTS } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { RunConflictError } from "../../errors.js";
import { orphanSql } from "./orphan-sql.js";
import type { RunRecord } from "./run-record.js";
import type { RequeueResult, RunStore } from "./run-store.js";

/** What orphan recovery and takeover work on: the database, its run store and the attempt bound. */
export interface OrphanDeps {
  db: Database;
  runs: RunStore;
  maxAttempts: number;
}

/**
 * On the embedded database, every run marked `running` is an orphan: the data-directory lock
 * proves that no other process has the database open, so whoever held its lease died (killed,
 * crashed, a second Ctrl-C). This hands such runs to the reaper at once — back to pending, or
 * ended (cancelled when a cancel was requested, max_attempts after too many tries) — instead of
 * making the user wait for the lease to lapse. Does nothing on PostgreSQL, where a live worker in
 * another process may hold the lease. Returns what the reaper did.
 */
export async function recoverEmbeddedOrphans(deps: OrphanDeps): Promise<RequeueResult> {
  const none: RequeueResult = { requeued: [], failed: [], cancelled: [] };
  if (deps.db.kind !== "pglite") return none;
  const expired = await deps.db.query(orphanSql(deps.db.schema).expireLeases, [null]);
  if (expired.rows.length === 0) return none;
  return deps.runs.requeueExpired({ maxAttempts: deps.maxAttempts });
}

/**
 * Makes a `running` run resumable in this process. Embedded: it is an orphan (see above).
 * PostgreSQL: waits — at most until its lease lapses plus TAKEOVER_DEFAULTS.leaseSlackMs, if it
 * lapses within TAKEOVER_DEFAULTS.maxLeaseWaitMs — and re-queues it once the lease lapsed; a lease
 * that keeps being renewed means a live process is running it: RunConflictError naming the
 * holder. Runs in other statuses are returned as they are. `onWait` is told once when a wait
 * begins, with the lease's expiry.
 */
export async function takeOverRunning(deps: OrphanDeps, run: RunRecord, options: { onWait?: (until: string) => void } = {}): Promise<RunRecord> {
  if (run.status !== "running") return run;
  if (deps.db.kind === "pglite") {
    await recoverEmbeddedOrphans(deps);
    return deps.runs.get(run.run_id);
  }
  const until = run.lease === null ? Date.now() : Date.parse(run.lease.expires_at);
  const waitMs = until - Date.now();
  if (waitMs > TAKEOVER_DEFAULTS.maxLeaseWaitMs) throw heldElsewhere(run);
  if (waitMs > 0) options.onWait?.(run.lease?.expires_at ?? "");
  const deadline = Date.now() + Math.max(0, waitMs) + TAKEOVER_DEFAULTS.leaseSlackMs;
  for (;;) {
    await deps.runs.requeueExpired({ maxAttempts: deps.maxAttempts });
    const now = await deps.runs.get(run.run_id);
    if (now.status !== "running") return now;
    const renewed = now.lease !== null && run.lease !== null && (now.lease.epoch !== run.lease.epoch || Date.parse(now.lease.expires_at) > until);
    if (renewed || Date.now() >= deadline) throw heldElsewhere(now);
    await sleep(Math.min(TAKEOVER_DEFAULTS.leasePollMs, Math.max(1, deadline - Date.now())));
  }
}

function heldElsewhere(run: RunRecord): RunConflictError {
  const holder = run.lease === null ? "another process" : `${run.lease.owner} (lease until ${run.lease.expires_at})`;
  return new RunConflictError(`run ${run.run_id} is running in ${holder}; follow its events, or cancel it`, {
    runId: run.run_id,
    status: run.status,
    owner: run.lease?.owner ?? null,
    leaseExpiresAt: run.lease?.expires_at ?? null,
  });
}

/**
 * After a cancel request on a running run: waits (bounded by `timeoutMs`) until it stops. Its
 * worker stops it at the next check; if that worker is dead, the run is ended as the reaper would
 * (cancelled) once its lease lapsed — at once on the embedded database, where it must be dead.
 * Returns the run as it then is (still `running` when the time ran out).
 */
export async function waitStopped(deps: OrphanDeps, runId: string, options: { timeoutMs: number }): Promise<RunRecord> {
  const deadline = Date.now() + options.timeoutMs;
  await recoverEmbeddedOrphans(deps);
  for (;;) {
    await deps.runs.requeueExpired({ maxAttempts: deps.maxAttempts });
    const run = await deps.runs.get(runId);
    if (run.status !== "running" || Date.now() >= deadline) return run;
    await sleep(Math.min(TAKEOVER_DEFAULTS.leasePollMs, Math.max(1, deadline - Date.now())));
  }
}
