import { CRON_DEFAULTS, RUNS_CHANNEL } from "../../constants.js";
import { notify } from "../../db/channels.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { Database, Queryable } from "../../db/types.js";
import { DevmindError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { CronStore, CronTick, DueCron } from "./cron-store.js";
import type { EventStore } from "../events/event-store.js";
import type { RunCompletions } from "../completions/run-completions.js";
import type { RunStore } from "../queue/run-store.js";

/** What the scheduler of a worker needs. */
export interface CronSchedulerDeps {
  db: Database;
  crons: CronStore;
  runs: RunStore;
  events: EventStore;
  /** Where a tick's webhook and on_run_completed "delete" are recorded with its run. */
  completions: RunCompletions;
  /** The graphs this worker loaded: crons of other graphs are left to workers that have them. */
  graphIds: readonly string[];
  /** Makes sure a tick's thread has a row (`runtime.threads.touch`); a new one gets `metadata` (the cron's: its owner). */
  touchThread: (threadId: string, metadata?: Record<string, unknown>) => Promise<void>;
  logger: Logger;
  /** Pause between passes; default CRON_DEFAULTS.pollMs. */
  pollMs?: number;
}

/** A worker's scheduler loop (`stop` ends it after the pass under way). */
export interface CronScheduler {
  stop(): Promise<void>;
}

/**
 * Creates the run of one due tick inside the claiming transaction: an ordinary run of the
 * cron's graph with its payload, on the cron's thread or a new one, whose `run.created` event
 * names the cron (`data.cron_id`). Null when none is created: the thread has an active run and
 * the payload's multitask strategy is "reject" (the tick is skipped), or the payload no longer
 * validates (it was checked when stored; logged).
 */
async function createTickRun(deps: CronSchedulerDeps, tx: Queryable, due: DueCron): Promise<string | null> {
  const { cron } = due;
  const payload = cron.payload;
  try {
    const created = await deps.runs.createWithin(
      tx,
      {
        graphId: cron.assistant_id,
        assistantId: cron.assistant_id,
        ...(cron.thread_id === null ? {} : { threadId: cron.thread_id }),
        input: payload.input,
        config: payload.config,
        context: payload.context,
        multitask: payload.multitask_strategy ?? "reject",
      },
      async (inner, runId) => {
        await deps.events.append(runId, [{ type: "run.created", cron_id: cron.cron_id }], undefined, { tx: inner });
        await deps.completions.insert(inner, runId, { webhook: payload.webhook ?? null, deleteThread: cron.thread_id === null && payload.on_run_completed === "delete" });
      },
    );
    if ("conflict" in created) {
      deps.logger.info({ event: "cron.skipped", cron_id: cron.cron_id, thread_id: created.conflict.threadId, active_run_id: created.conflict.activeRunId }, "cron tick skipped: its thread has an active run");
      return null;
    }
    return created.run.run_id;
  } catch (error) {
    // validation happens before any SQL of the run, so the transaction is still usable
    if (error instanceof DevmindError && error.code === "RUN_INPUT_INVALID") {
      deps.logger.warn({ event: "cron.invalid", cron_id: cron.cron_id, error: error.message }, "cron tick skipped: its payload is invalid");
      return null;
    }
    throw error;
  }
}

/**
 * One scheduler pass: claims due crons batch by batch (at most CRON_DEFAULTS.maxBatchesPerPass)
 * until none is due, creating one run per claimed tick. Returns what it did.
 */
export async function runCronPass(deps: CronSchedulerDeps): Promise<CronTick[]> {
  const done: CronTick[] = [];
  // each tick run's cron metadata: a stateless cron's new thread carries it (an auth handler's owner sees it)
  const cronMetadata = new Map<string, Record<string, unknown>>();
  for (let batch = 0; batch < CRON_DEFAULTS.maxBatchesPerPass; batch += 1) {
    const ticks = await deps.crons.claimTicks(deps.graphIds, CRON_DEFAULTS.claimBatch, async (tx, due) => {
      const runId = await createTickRun(deps, tx, due);
      if (runId !== null && due.cron.thread_id === null) cronMetadata.set(runId, due.cron.metadata);
      return runId;
    });
    done.push(...ticks);
    for (const tick of ticks) {
      if (tick.run_id === null) continue;
      const run = await deps.runs.get(tick.run_id);
      await deps.touchThread(run.thread_id, cronMetadata.get(tick.run_id)).catch(() => undefined);
      await notify(deps.db, RUNS_CHANNEL, tick.run_id).catch(() => undefined);
      deps.logger.info({ event: "cron.fired", cron_id: tick.cron_id, run_id: tick.run_id, thread_id: run.thread_id, next_run_date: tick.next_run_date }, "cron tick queued a run");
    }
    if (ticks.length < CRON_DEFAULTS.claimBatch) break;
  }
  return done;
}

/**
 * Starts the scheduler loop of a worker: a pass at once (a cron that came due while no worker
 * ran fires now, once), then one every `pollMs`. Database faults are logged and the next pass
 * tries again; nothing is lost, since a pass commits its runs and its crons' next ticks together.
 */
export function startCronScheduler(deps: CronSchedulerDeps): CronScheduler {
  let stopping = false;
  let wake: (() => void) | undefined;
  const pollMs = deps.pollMs ?? CRON_DEFAULTS.pollMs;
  // a database away is logged once per outage, not once per poll
  let faulted = false;
  const loop = (async () => {
    while (!stopping) {
      try {
        await runCronPass(deps);
        faulted = false;
      } catch (error) {
        const kind = databaseFaultOf(error);
        const message = error instanceof Error ? error.message : String(error);
        if (kind === null) deps.logger.error({ event: "cron.error", error: message }, "cron scheduler pass failed");
        else if (!faulted) deps.logger.warn({ event: "cron.database_fault", kind, error: message }, "cron scheduler waits for the database");
        faulted = kind !== null;
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
