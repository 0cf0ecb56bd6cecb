import { DATABASE_FAULT_DEFAULTS, LIVENESS_DEFAULTS, RUNS_CHANNEL, RUNTIME_DEFAULTS } from "../../constants.js";
import { notify } from "../../db/channels.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { Database } from "../../db/types.js";
import { DevmindError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { CronScheduler } from "../crons/cron-scheduler.js";
import type { ExecutorDeps } from "../execution/executor.js";
import { DatabaseHealth, executeWithRecovery, faultBackoff, type DatabaseHealthReport } from "../execution/fault-recovery.js";
import type { RunStore } from "./run-store.js";
import type { RunEndWatcher } from "./run-end-wait.js";
import { wakeableSleep } from "../../sleep.js";
import { expireGoneOwners, findRunning, startLiveness, type Liveness } from "./process-liveness.js";
import type { RunObserver } from "../execution/run-observer.js";

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
  /**
   * Hands over the runs this worker executes of the graphs in `graphIds` (all when omitted): each
   * stops at its next step boundary, goes back to the queue with its lease released, and is
   * claimed again at once — on the graph code registered now (`devmind dev` after a reload). Its
   * next attempt says `run.resumed {reason: "reload"}`. Returns their run ids.
   */
  handOver(graphIds?: ReadonlySet<string>): string[];
  /** The database as this worker sees it (`/health`): ok, unreachable, or refusing writes. */
  health(): DatabaseHealthReport;
}

interface WorkerDeps {
  db: Database;
  runs: RunStore;
  /** The graphs whose runs this worker claims (the runtime's loaded graphs, read at each claim: a reload may change them). */
  graphIds: () => readonly string[];
  maxAttempts: number;
  leaseMs: number;
  concurrency: number;
  executorDeps: (drainSignal?: AbortSignal) => ExecutorDeps;
  owner: string;
  logger: Logger;
  /** This process's run-end watcher: told which runs a slot executes, so their waiters here take the executor's record. */
  runEnds?: Pick<RunEndWatcher, "executingHere" | "left"> | undefined;
  /**
   * The process's id, the prefix of every lease owner it uses: a worker that executes runs holds
   * the process's liveness lock under it (crash detection, see `startLiveness`).
   */
  processId?: string | undefined;
  /** Starts this worker's cron scheduler (`runtime.crons`); workers with concurrency 0 schedule nothing. */
  startScheduler?: (() => CronScheduler) | undefined;
  /** Told of the leases the reaper takes back (metrics). */
  observer?: Pick<RunObserver, "leases"> | undefined;
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
  // the runs the slots execute, each with its own stop for a hand-over (a reload), and the runs
  // handed over whose next claim here is their continuation on the reloaded code
  const executing = new Map<string, { graphId: string; handOver: AbortController }>();
  const handedOver = new Set<string>();
  let active = 0;
  let loops: Promise<void>[] = [];
  let unlisten: (() => Promise<void>) | undefined;
  let scheduler: CronScheduler | undefined;
  let liveness: Liveness | undefined;
  // on PostgreSQL the reaper also looks for runs whose owner process died (its liveness lock free)
  const ownersSeen = deps.db.kind === "postgres";
  // idle slots (waiting for a run) and everything else that pauses (slots backing off a fault,
  // the reaper): a new run wakes one idle slot, never the reaper in its place
  const idleSlots = new Set<() => void>();
  const others = new Set<() => void>();
  // the reaper while no run holds a lease and none was announced lately: it sleeps its full period
  // (an idle process costs no owner checks) until a run is announced
  const reaperAsleep = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of [...idleSlots, ...others, ...reaperAsleep]) wake();
  };
  // runs announced while no slot was idle: a slot that ends a run claims again only while some
  // are left (a claim that finds nothing sets it back to 0), instead of after every run — with
  // nothing queued that claim was a transaction per run that found nothing
  let unclaimed = 0;
  // a new run wakes one idle slot, not all of them: each woken slot costs a claim (a transaction),
  // and all but one of them would find nothing
  const wakeOne = (): void => {
    const first = idleSlots.values().next();
    if (first.done !== true) first.value();
    else unclaimed += 1;
  };
  // a run announced by any process may soon be claimed (by any process): for a lease from now the
  // reaper checks owners at its short cadence, so a claimer that dies at once is still found in seconds
  let announcedUntil = 0;
  const onRunAnnounced = (): void => {
    wakeOne();
    announcedUntil = Date.now() + deps.leaseMs;
    for (const wake of reaperAsleep) wake();
  };
  // the fallback for a notification that never came (the listening connection was down): one
  // idle slot looks every idlePollMs, whatever the number of slots
  let idlePoll: NodeJS.Timeout | undefined;
  const pause = (ms: number, waiters: Set<() => void> = others): Promise<void> =>
    // stop() wakes the loops waiting when it is called; one that was busy (a claim in flight)
    // and pauses after it must not wait out its pause (an idle slot's is minutes)
    stopping
      ? Promise.resolve()
      : wakeableSleep(ms, (done) => {
          waiters.add(done);
          return () => waiters.delete(done);
        });

  const health = new DatabaseHealth(deps.logger, () => wakeAll());
  const unreachableBackoff = faultBackoff("unreachable", deps.leaseMs);
  const storageBackoff = faultBackoff("storage", deps.leaseMs);

  /** After a database fault outside a run: waits (jittered, bounded) unless stopping. */
  const backOff = async (error: unknown): Promise<void> => {
    const kind = databaseFaultOf(error);
    if (kind === null) {
      deps.logger.error({ event: "worker.error", error: error instanceof Error ? error.message : String(error) }, "worker query failed");
      await pause(RUNTIME_DEFAULTS.idlePollMs);
      return;
    }
    health.fault(kind, error);
    // woken early when the database is back (another slot saw it first)
    await pause((kind === "storage" ? storageBackoff : unreachableBackoff).next());
  };

  const slot = async (index: number): Promise<void> => {
    const owner = `${deps.owner}:${index}`;
    const prober = `${deps.owner}:probe`;
    let claimUncertain = false;
    while (!stopping) {
      if (health.claimsPaused) {
        // the database refused writes: claim nothing (a claimed run could only fail to save its
        // steps) until one small real write succeeds
        try {
          await deps.runs.probeWrite(prober);
          storageBackoff.reset();
          health.stored();
        } catch (error) {
          await backOff(error);
          continue;
        }
      }
      let claimed;
      try {
        if (claimUncertain) {
          // the last claim failed on the connection: it may have committed all the same
          const lost = await deps.runs.releaseLostClaims(owner);
          if (lost.length > 0) deps.logger.info({ event: "run.claim_returned", run_ids: lost, worker: owner }, "returned runs claimed while the database was failing");
          claimUncertain = false;
        }
        claimed = await deps.runs.claimNext({ owner, leaseMs: deps.leaseMs, graphIds: deps.graphIds() });
        unreachableBackoff.reset();
        health.reachable();
      } catch (error) {
        claimUncertain = true;
        await backOff(error);
        continue;
      }
      if (claimed === null) {
        unclaimed = 0;
        // woken by NOTIFY, by the idle poll, or when the worker stops
        await pause(RUNTIME_DEFAULTS.idleSlotMaxMs, idleSlots);
        continue;
      }
      active += 1;
      deps.runEnds?.executingHere(claimed.run.run_id);
      // registered before the attempt resolves its graph: a hand-over from now on reaches it
      const handOver = new AbortController();
      executing.set(claimed.run.run_id, { graphId: claimed.run.graph_id, handOver });
      const stop = AbortSignal.any([drain.signal, handOver.signal]);
      const trigger = handedOver.delete(claimed.run.run_id) ? "reload" : "worker";
      try {
        deps.logger.info({ event: "run.claimed", run_id: claimed.run.run_id, attempt: claimed.run.attempt, epoch: claimed.epoch, worker: owner }, "run claimed");
        const after = await executeWithRecovery(deps.executorDeps(stop), claimed, owner, { trigger, health, leaseMs: deps.leaseMs, stop });
        // a run handed over that ended in the meantime is not continued: nothing to remember
        if (after?.status !== "pending") handedOver.delete(claimed.run.run_id);
        if (after === null && stop.aborted) {
          deps.logger.info({ event: "run.left", run_id: claimed.run.run_id, worker: owner }, "run left to its lease (another worker continues it)");
        } else if (after === null) {
          // the database came back and the lease was gone: the renewal (a fenced write) was refused
          deps.logger.warn(
            { event: "run.fenced", run_id: claimed.run.run_id, attempt: claimed.run.attempt, epoch: claimed.epoch, worker: owner },
            `lease lost while the database was away: run taken over or ended by another worker; this worker's writes for attempt ${claimed.run.attempt} were refused (fenced)`,
          );
        } else if (fencedOut(claimed.run.attempt, after, stop.aborted)) {
          // the lease lapsed (a partition, a stall) and the run moved on without this worker: its
          // writes since were refused by the fence, and what the record says is not its doing (a
          // run a reaper re-queued reads `pending` until it is claimed again: not a release of ours)
          deps.logger.warn(
            { event: "run.fenced", run_id: after.run_id, attempt: claimed.run.attempt, epoch: claimed.epoch, now: { attempt: after.attempt, status: after.status, stop_reason: after.stop_reason }, worker: owner },
            `lease lost: run ${fencedFate(after, claimed.run.attempt)}; this worker's writes for attempt ${claimed.run.attempt} were refused (fenced)`,
          );
        } else {
          deps.logger.info({ event: "run.executed", run_id: after.run_id, status: after.status, stop_reason: after.stop_reason, ...(after.error === null ? {} : { error: after.error }), worker: owner }, `run ${after.status}`);
          // drained at a step boundary and released: wake idle workers of every process, so one
          // continues it now rather than at its next idle poll
          if (after.status === "pending") await notify(deps.db, RUNS_CHANNEL, after.run_id).catch(() => undefined);
        }
      } catch (error) {
        // the run's own record says what happened
        deps.logger.error({ event: "run.error", run_id: claimed.run.run_id, error: error instanceof Error ? error.message : String(error) }, "run execution failed");
      } finally {
        active -= 1;
        executing.delete(claimed.run.run_id);
        deps.runEnds?.left(claimed.run.run_id);
      }
      // another run was pending when this one was claimed, or announced while every slot was
      // busy: claim it now. Else wait to be woken (a run queued behind this one on its thread is
      // announced by the statement that ended this one; a lost notification, by the idle poll)
      if (claimed.morePending === true || unclaimed > 0) {
        unclaimed = Math.max(0, unclaimed - 1);
        continue;
      }
      if (!stopping) await pause(RUNTIME_DEFAULTS.idleSlotMaxMs, idleSlots);
    }
  };

  // Looks every lease / 2, and also right when the earliest lease lapses if that is sooner: a
  // dead worker's run is re-queued at its lease's expiry, not up to half a lease later (with the
  // default 30 s lease that was up to 15 s more), so another worker continues it within about
  // the lease. A lease that is renewed in time just means one pass that finds nothing. While the
  // database was away every lease lapsed, though their workers live: while this worker sees it
  // away, and for a lease after it is back, it re-queues nothing, so the owners renew their
  // leases first and no attempt is spent on the outage (a dead worker's run waits that much longer).
  const reaper = async (): Promise<void> => {
    const period = Math.max(100, Math.floor(deps.leaseMs / 2));
    const graceMs = DATABASE_FAULT_DEFAULTS.reaperGraceLeases * deps.leaseMs;
    while (!stopping) {
      let wait = period;
      let asleep = false;
      // while this worker sees the database away (or refusing writes) nothing is re-queued: the
      // owners of lapsed leases are waiting too; once it is back, they get a lease to renew
      const sinceRecovery = Date.now() - health.recoveredAt;
      if (health.lastFaultAt > 0 && !(sinceRecovery >= graceMs)) {
        // the grace counts from when the database answers this reaper itself, looked at every
        // owner check: a worker whose other work was quiet may have seen an answer in the first
        // moment of an outage (a failover) and nothing since, and its grace would run out blind,
        // before the owners of the lapsed leases could reach the new primary
        await pause(Math.min(LIVENESS_DEFAULTS.ownerCheckMs, Number.isFinite(sinceRecovery) ? Math.max(RUNTIME_DEFAULTS.reaperMinPauseMs, graceMs - sinceRecovery) : period));
        await deps.runs.nextLeaseExpiry().then(
          () => health.reachable(),
          (error: unknown) => {
            const kind = databaseFaultOf(error);
            if (kind !== null) health.fault(kind, error);
          },
        );
        continue;
      }
      try {
        const gone = ownersSeen ? await expireGoneOwners(deps.db, deps.processId ?? deps.owner) : [];
        if (gone.length > 0) {
          deps.logger.info(
            { event: "run.owner_gone", reason: "owner_gone", run_ids: gone.map((run) => run.run_id), owners: [...new Set(gone.map((run) => run.owner))] },
            `recovering ${gone.length} run(s) whose owner process is gone (the database freed its liveness lock), before their leases expire`,
          );
        }
        // a run this process executes has a live owner (this process): a lapsed lease of one means
        // its heartbeat was late (a starved process, a queue for connections), not that it died;
        // taking it would spend an attempt and make an in-flight tool call's outcome unknown
        const { requeued, failed } = await deps.runs.requeueExpired({ maxAttempts: deps.maxAttempts, executingHere: [...executing.keys()] });
        if (requeued.length > 0) deps.observer?.leases("expired", requeued.length);
        if (failed.length > 0) deps.observer?.leases("max_attempts", failed.length);
        if (requeued.length > 0) {
          deps.logger.info({ event: "run.recovered", run_ids: requeued }, `re-queued ${requeued.length} run(s) whose lease expired`);
          wakeAll();
        }
        if (failed.length > 0) deps.logger.warn({ event: "run.max_attempts", run_ids: failed }, `${failed.length} run(s) ended after DEVMIND_MAX_ATTEMPTS lapsed leases`);
        const next = await deps.runs.nextLeaseExpiry();
        if (next !== null) wait = Math.min(period, next + RUNTIME_DEFAULTS.reaperSlackMs);
        // owners are checked often only while some run holds a lease or one was announced lately
        if (ownersSeen && (next !== null || Date.now() < announcedUntil)) wait = Math.min(wait, LIVENESS_DEFAULTS.ownerCheckMs);
        else if (next === null) asleep = true;
      } catch (error) {
        const kind = databaseFaultOf(error);
        if (kind !== null) health.fault(kind, error);
      }
      await pause(Math.max(RUNTIME_DEFAULTS.reaperMinPauseMs, wait), asleep ? reaperAsleep : others);
    }
  };

  /** What a starting process finds: the running runs of other processes, and when each will be taken. */
  const logFoundRunning = async (): Promise<void> => {
    const found = await findRunning(deps.db, deps.processId ?? deps.owner).catch(() => []);
    if (found.length === 0) return;
    const now = found.filter((run) => run.taken === "now").length;
    const later = found.filter((run) => run.taken === "at_lease_expiry").length;
    deps.logger.info(
      { event: "runs.found_running", runs: found },
      `found ${found.length} running run(s) of other processes: ${now} whose owner is gone (taken now), ${later} whose owner shows no liveness lock (taken at lease expiry), ${found.length - now - later} whose owner is alive`,
    );
  };

  return {
    get active() {
      return active;
    },
    health: () => health.report(),
    handOver(graphIds) {
      const ids: string[] = [];
      for (const [runId, run] of executing) {
        if (graphIds !== undefined && !graphIds.has(run.graphId)) continue;
        handedOver.add(runId);
        run.handOver.abort();
        ids.push(runId);
      }
      return ids;
    },
    async start() {
      if (loops.length > 0 || stopping) return;
      // behind a transaction pooler without a direct URL there is no LISTEN (logged once by the database): the slots' idle poll stands in
      unlisten = await deps.db.listen(RUNS_CHANNEL, onRunAnnounced).catch((error: unknown) => {
        if (error instanceof DevmindError && error.code === "DATABASE_LISTEN_UNAVAILABLE") return undefined;
        throw error;
      });
      if (deps.concurrency > 0 && deps.processId !== undefined) liveness = await startLiveness(deps.db, deps.processId, deps.logger);
      await logFoundRunning();
      loops = [reaper(), ...Array.from({ length: deps.concurrency }, (_, index) => slot(index))];
      idlePoll = setInterval(wakeOne, RUNTIME_DEFAULTS.idlePollMs);
      idlePoll.unref?.();
      if (deps.concurrency > 0) scheduler = deps.startScheduler?.();
    },
    async stop() {
      stopping = true;
      clearInterval(idlePoll);
      drain.abort();
      wakeAll();
      const schedulerStopped = scheduler?.stop();
      scheduler = undefined;
      await Promise.race([Promise.allSettled([...loops, ...(schedulerStopped === undefined ? [] : [schedulerStopped])]), new Promise((resolve) => setTimeout(resolve, RUNTIME_DEFAULTS.drainTimeoutMs).unref())]);
      loops = [];
      await unlisten?.();
      unlisten = undefined;
      await liveness?.close();
      liveness = undefined;
    },
  };
}

/**
 * True when the run as stored after an attempt is no longer that attempt's: another worker claimed
 * it since (a higher attempt), a reaper ended it for its lapsed leases (`max_attempts`, which
 * only a reaper sets), or a reaper put it back in the queue and no one claimed it yet (`pending`
 * at the same attempt, while this worker did not release it itself: `releasedHere` is true only
 * when the worker was draining or handing the run over, the only times it releases a run). The
 * attempt's fenced writes were refused; a log must not report the run's state as this worker's
 * outcome.
 */
export function fencedOut(attempt: number, after: { attempt: number; status: string; stop_reason: string | null }, releasedHere = false): boolean {
  return after.attempt > attempt || after.stop_reason === "max_attempts" || (after.status === "pending" && !releasedHere);
}

/** What a `run.fenced` line says became of the run, as stored after the fenced attempt. */
function fencedFate(after: { attempt: number; status: string }, attempt: number): string {
  if (after.status === "pending") return after.attempt > attempt ? `taken over (attempt ${after.attempt}) and queued again` : "put back in the queue after its lease lapsed";
  if (after.status === "running") return `taken over (attempt ${after.attempt})`;
  return `ended ${after.status} by another worker`;
}
