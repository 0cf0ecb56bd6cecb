import { RUNTIME_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import { faultSummary, type DatabaseHealth, type DatabaseHealthReport } from "./fault-recovery.js";
import type { RunStore } from "../queue/run-store.js";
import type { RuntimeHealth } from "../runtime.js";
import type { Worker } from "../queue/worker.js";
import type { WriteFaults } from "./write-faults.js";

/** What `checkHealth` looks at. */
export interface HealthInputs {
  runs: RunStore;
  workers: readonly Worker[];
  execution: DatabaseHealth;
  prober: string;
  timeoutMs?: number;
  slowMs?: number;
  /** Writes of this process refused for want of storage: a recent one makes the database unwritable in the report. */
  writeFaults?: WriteFaults;
}

/** Resolves `promise`, or rejects with a timeout after `ms` (the query itself is left to finish). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: "HEALTH_TIMEOUT" })), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The runtime's health: one small real write to the database (a write probe, so a full disk or a
 * read-only server shows), timed, plus what this process's workers and executions report, and
 * the last write this process had refused for want of storage (recent: a full disk may still
 * take the probe's small in-place update).
 * `down`: no answer in time or the database is unreachable; `degraded`: slow, refusing writes,
 * or a worker still waiting out a fault; `ok` otherwise.
 */
export async function checkHealth(inputs: HealthInputs): Promise<RuntimeHealth> {
  const timeoutMs = inputs.timeoutMs ?? RUNTIME_DEFAULTS.healthTimeoutMs;
  const slowMs = inputs.slowMs ?? RUNTIME_DEFAULTS.healthSlowMs;
  const workers: DatabaseHealthReport[] = [...inputs.workers.map((worker) => worker.health()), inputs.execution.report()];
  const workersFailing = workers.some((report) => report.state !== "ok");
  const started = Date.now();
  try {
    await within(inputs.runs.probeWrite(inputs.prober), timeoutMs);
    const latency = Date.now() - started;
    // the probe's small write fits where a run's writes do not (a full disk): the last refusal counts too
    const refused = inputs.writeFaults?.recent() ?? null;
    if (refused !== null) {
      return { status: "degraded", database: { reachable: true, writable: false, latency_ms: latency, error: refused.error, last_write_failure_at: refused.at }, workers };
    }
    const status = latency > slowMs || workersFailing ? "degraded" : "ok";
    return { status, database: { reachable: true, writable: true, latency_ms: latency, error: null }, workers };
  } catch (error) {
    const latency = Date.now() - started;
    if (databaseFaultOf(error) === "storage") {
      return { status: "degraded", database: { reachable: true, writable: false, latency_ms: latency, error: faultSummary(error) }, workers };
    }
    return { status: "down", database: { reachable: false, writable: null, latency_ms: null, error: faultSummary(error) }, workers };
  }
}
