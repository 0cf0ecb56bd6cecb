import type { AttemptTrigger } from "./graph-attempt.js";
import { DATABASE_FAULT_DEFAULTS } from "../../constants.js";
import { databaseFaultOf, type DatabaseFaultKind } from "../../db/database-faults.js";
import type { Logger } from "../../logger.js";
import { Backoff } from "./backoff.js";
import { executeClaimed, type ExecutorDeps } from "./executor.js";
import type { ClaimedRun, RunRecord } from "../queue/run-record.js";

/** What a worker (or an executing process) knows of its database, for logs and `/health`. */
export interface DatabaseHealthReport {
  /** `ok`; `unreachable` (waiting for the database to answer); `storage_failing` (it refuses writes: not claiming). */
  state: "ok" | "unreachable" | "storage_failing";
  /** When the current state began (ISO time). */
  since: string;
  /** The last fault's code and message (no secrets: database errors carry none). */
  last_error: { code: string; message: string } | null;
}

/**
 * The database as one worker sees it: faults are recorded here by every slot, so the log says
 * "database unreachable" once when it goes away and once when it is back — not per retry — and a
 * worker stops claiming after `storageFailuresBeforePause` storage failures in a row, until a
 * write succeeds again.
 */
export class DatabaseHealth {
  private current: DatabaseHealthReport["state"] = "ok";
  private sinceMs = Date.now();
  private lastError: { code: string; message: string } | null = null;
  private storageStreak = 0;
  private lastFaultMs = 0;
  private lastRecoveredMs = 0;
  /** The current outage began within `flapMs` of the last recovery: its lines were not logged. */
  private quiet = false;

  /**
   * @param onRecovered called when the database answers again or stores again (e.g. to wake
   *   idle slots waiting out the fault).
   */
  constructor(
    private readonly logger: Logger,
    private readonly onRecovered: () => void = () => undefined,
    private readonly storageFailuresBeforePause: number = DATABASE_FAULT_DEFAULTS.storageFailuresBeforePause,
  ) {}

  /** The state now. */
  get state(): DatabaseHealthReport["state"] {
    return this.current;
  }

  /** True while the worker must not claim runs (the database refuses writes). */
  get claimsPaused(): boolean {
    return this.current === "storage_failing";
  }

  /** When a fault was last seen (epoch ms; 0: never). */
  get lastFaultAt(): number {
    return this.lastFaultMs;
  }

  /** When the state last became `ok` after a fault (epoch ms; 0: never faulted). */
  get recoveredAt(): number {
    return this.current === "ok" ? this.lastRecoveredMs : Number.POSITIVE_INFINITY;
  }

  /** Records a fault of `kind`; logs when the state changes. */
  fault(kind: DatabaseFaultKind, error: unknown): void {
    this.lastFaultMs = Date.now();
    this.lastError = faultSummary(error);
    if (kind === "storage") {
      this.storageStreak += 1;
      if (this.storageStreak >= this.storageFailuresBeforePause && this.current !== "storage_failing") {
        this.enter("storage_failing");
        this.logger.error({ event: "database.storage_failing", error: this.lastError }, "the database refuses writes (disk full, read-only or permission revoked): not claiming runs, backing off until a write succeeds");
      }
      return;
    }
    if (this.current === "ok") {
      this.enter("unreachable");
      // connections broken by the outage keep failing for a moment after it: one outage, one line
      this.quiet = Date.now() - this.lastRecoveredMs < DATABASE_FAULT_DEFAULTS.flapMs;
      if (this.quiet) return;
      this.logger.warn({ event: "database.unreachable", error: this.lastError }, "the database is unreachable: backing off; runs continue from their last checkpoint when it answers");
    }
  }

  /** Something was read or written: the database answers (a storage failure stays until `stored`). */
  reachable(): void {
    if (this.current !== "unreachable") return;
    const awayMs = Date.now() - this.sinceMs;
    this.enter(this.storageStreak >= this.storageFailuresBeforePause ? "storage_failing" : "ok");
    this.lastRecoveredMs = Date.now();
    if (this.quiet) return this.onRecovered();
    this.logger.info({ event: "database.reachable", away_ms: awayMs }, `the database answers again after ${awayMs} ms`);
    this.onRecovered();
  }

  /** A write succeeded (a probe, or a whole run attempt): storage works. */
  stored(): void {
    this.reachable();
    const wasFailing = this.current === "storage_failing";
    this.storageStreak = 0;
    if (!wasFailing) return;
    const failingMs = Date.now() - this.sinceMs;
    this.enter("ok");
    this.lastRecoveredMs = Date.now();
    this.logger.info({ event: "database.storage_ok", failing_ms: failingMs }, `the database stores data again after ${failingMs} ms: claiming runs`);
    this.onRecovered();
  }

  /** The report for `/health`. */
  report(): DatabaseHealthReport {
    return { state: this.current, since: new Date(this.sinceMs).toISOString(), last_error: this.current === "ok" ? null : this.lastError };
  }

  private enter(state: DatabaseHealthReport["state"]): void {
    this.current = state;
    this.sinceMs = Date.now();
  }
}

/** `{code, message}` of a database fault, for logs and `/health` (database errors carry no secrets). */
export function faultSummary(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === "string" ? code : "DATABASE_UNREACHABLE", message: error instanceof Error ? error.message : String(error) };
}

/** A backoff for waiting out a fault of `kind` under a lease of `leaseMs`. */
export function faultBackoff(kind: DatabaseFaultKind, leaseMs: number): Backoff {
  // an unreachable database is waited out at a third of the lease at most, so an owner renews
  // its lapsed lease well within the reaper's grace once the database is back
  const cap = kind === "storage" ? DATABASE_FAULT_DEFAULTS.storageBackoffMaxMs : Math.min(DATABASE_FAULT_DEFAULTS.backoffMaxMs, Math.floor(leaseMs / 3));
  return new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: Math.max(DATABASE_FAULT_DEFAULTS.backoffFirstMs, cap) });
}

/** Options of `executeWithRecovery`. */
export interface RecoveryOptions {
  trigger: AttemptTrigger;
  health: DatabaseHealth;
  leaseMs: number;
  /** Stops waiting for the database (the worker drains): the run is left to its lease. */
  stop?: AbortSignal | undefined;
  /** Gives up waiting after this long (then the fault is thrown); default: no bound but `stop`. */
  maxWaitMs?: number | undefined;
}

/**
 * Executes a claimed run like `executeClaimed`, but a database fault does not end the run: the
 * attempt stops at once, this process waits for the database (bounded, jittered backoff), checks
 * it still holds the lease (renewing it — a lease that lapsed while the database was away is
 * still ours unless a reaper re-queued the run), and continues the run from its last checkpoint
 * under the same lease, so no attempt is spent on a database that was away. Returns the run as
 * stored afterwards, or null when the lease was lost meanwhile (another worker continues it) or
 * `stop` fired. Throws the fault only past `maxWaitMs`.
 */
export async function executeWithRecovery(deps: ExecutorDeps, claimed: ClaimedRun, owner: string, options: RecoveryOptions): Promise<RunRecord | null> {
  const { health } = options;
  const runId = claimed.run.run_id;
  const startedWaiting = Date.now();
  let trigger = options.trigger;
  // the run's first claim, executed for the first time: nothing of it ran before (a claim counts
  // every attempt; a run released, re-queued or resumed is claimed again with a higher one)
  let fresh = claimed.run.attempt === 1;
  for (;;) {
    let kind: DatabaseFaultKind;
    let lastFault: unknown;
    try {
      const noted = (error: unknown): void => {
        const seen = databaseFaultOf(error);
        if (seen !== null) health.fault(seen, error);
        deps.onDatabaseFault?.(error);
      };
      const after = await executeClaimed({ ...deps, onDatabaseFault: noted }, claimed, owner, trigger, fresh);
      health.stored();
      return after;
    } catch (error) {
      const faultKind = databaseFaultOf(error);
      if (faultKind === null) throw error;
      kind = faultKind;
      lastFault = error;
      health.fault(kind, error);
      fresh = false;
    }
    // renew the lease at least every third of it while waiting (a lapsed lease is renewed too,
    // unless a reaper re-queued the run), so the run stays this worker's
    const backoff = faultBackoff("unreachable", options.leaseMs);
    for (;;) {
      if (options.stop?.aborted === true) return null;
      if (options.maxWaitMs !== undefined && Date.now() - startedWaiting > options.maxWaitMs) throw lastFault;
      if (!(await backoff.wait(options.stop))) return null;
      try {
        const held = await deps.runs.heartbeat(runId, claimed.epoch, options.leaseMs);
        health.reachable();
        if (!held) return null;
        // a database that refused writes must store a small real write before the run goes on,
        // so a full disk does not make the run fail its steps again and again
        if (kind === "storage") await deps.runs.probeWrite(`${owner}:probe`);
        break;
      } catch (error) {
        const again = databaseFaultOf(error);
        if (again === null) throw error;
        lastFault = error;
        health.fault(again, error);
      }
    }
    // the next attempt says `run.resumed {reason: recovery}` and goes on from the last checkpoint
    trigger = "worker";
  }
}
