import { RUNS_CHANNEL, RUNTIME_DEFAULTS } from "../constants.js";
import { notify } from "../db/channels.js";
import type { Database } from "../db/types.js";
import type { Logger } from "../logger.js";
import { executeClaimed, type ExecutorDeps } from "./executor.js";
import type { RunStore } from "./run-store.js";

/** Options of `runtime.worker()`. */
export interface WorkerOptions {
  /** Runs executed at once (DEVMIND_WORKER_CONCURRENCY); 0 makes a worker that never claims. */
  concurrency?: number;
}

/** A worker: claims pending runs and executes them until stopped. */
export interface Worker {
  start(): Promise<void>;
  /** Drains: runs stop at their next step boundary and go back to the queue; then resolves. */
  stop(): Promise<void>;
  /** Runs executing right now. */
  readonly active: number;
}

interface WorkerDeps {
  db: Database;
  runs: RunStore;
  maxAttempts: number;
  leaseMs: number;
  concurrency: number;
  executorDeps: (drainSignal?: AbortSignal) => ExecutorDeps;
  owner: string;
  logger: Logger;
}

/**
 * A pool of `concurrency` slots, each claiming the oldest runnable run (`FOR UPDATE SKIP LOCKED`),
 * executing it under a lease and looking again; woken by NOTIFY on new or resumable runs, with a
 * bounded poll as fallback. A reaper re-queues runs whose lease expired (a dead worker's) as soon
 * as the lease lapses, never running them directly; past DEVMIND_MAX_ATTEMPTS they end as
 * max_attempts.
 */
export function createWorker(deps: WorkerDeps): Worker {
  const drain = new AbortController();
  let stopping = false;
  let active = 0;
  let loops: Promise<void>[] = [];
  let unlisten: (() => Promise<void>) | undefined;
  const waiters = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of [...waiters]) wake();
  };
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });

  const slot = async (index: number): Promise<void> => {
    const owner = `${deps.owner}:${index}`;
    while (!stopping) {
      let claimed;
      try {
        claimed = await deps.runs.claimNext({ owner, leaseMs: deps.leaseMs });
      } catch {
        await pause(RUNTIME_DEFAULTS.idlePollMs);
        continue;
      }
      if (claimed === null) {
        await pause(RUNTIME_DEFAULTS.idlePollMs);
        continue;
      }
      active += 1;
      try {
        deps.logger.info({ event: "run.claimed", run_id: claimed.run.run_id, attempt: claimed.run.attempt, epoch: claimed.epoch, worker: owner }, "run claimed");
        const after = await executeClaimed(deps.executorDeps(drain.signal), claimed, owner);
        deps.logger.info({ event: "run.executed", run_id: after.run_id, status: after.status, stop_reason: after.stop_reason, ...(after.error === null ? {} : { error: after.error }), worker: owner }, `run ${after.status}`);
        // drained at a step boundary and released: wake idle workers of every process, so one
        // continues it now rather than at its next idle poll
        if (after.status === "pending") await notify(deps.db, RUNS_CHANNEL, after.run_id).catch(() => undefined);
      } catch {
        // the run's own record says what happened; a broken database shows on the next claim
      } finally {
        active -= 1;
      }
    }
  };

  // Looks every lease / 2, and also right when the earliest lease lapses if that is sooner: a
  // dead worker's run is re-queued at its lease's expiry, not up to half a lease later (with the
  // default 30 s lease that was up to 15 s more), so another worker continues it within about
  // the lease. A lease that is renewed in time just means one pass that finds nothing.
  const reaper = async (): Promise<void> => {
    const period = Math.max(100, Math.floor(deps.leaseMs / 2));
    while (!stopping) {
      let wait = period;
      try {
        const { requeued } = await deps.runs.requeueExpired({ maxAttempts: deps.maxAttempts });
        if (requeued.length > 0) {
          deps.logger.info({ event: "run.recovered", run_ids: requeued }, `re-queued ${requeued.length} run(s) whose lease expired`);
          wakeAll();
        }
        const next = await deps.runs.nextLeaseExpiry();
        if (next !== null) wait = Math.min(period, next + RUNTIME_DEFAULTS.reaperSlackMs);
      } catch {
        // try again next period
      }
      await pause(Math.max(RUNTIME_DEFAULTS.reaperMinPauseMs, wait));
    }
  };

  return {
    get active() {
      return active;
    },
    async start() {
      if (loops.length > 0 || stopping) return;
      unlisten = await deps.db.listen(RUNS_CHANNEL, wakeAll);
      loops = [reaper(), ...Array.from({ length: deps.concurrency }, (_, index) => slot(index))];
    },
    async stop() {
      stopping = true;
      drain.abort();
      wakeAll();
      await Promise.race([Promise.allSettled(loops), new Promise((resolve) => setTimeout(resolve, RUNTIME_DEFAULTS.drainTimeoutMs).unref())]);
      loops = [];
      await unlisten?.();
      unlisten = undefined;
    },
  };
}
