import { quoteIdentifier } from "../../db/identifiers.js";
import { DevmindError, LeaseLostError } from "../../errors.js";
import { checkRunId } from "./run-record.js";

/**
 * The fencing token of a run's lease: the worker that claimed `runId` at `epoch`. Every write a
 * worker makes for the run (checkpoint, ledger, events, status) carries it and lands only while
 * the run is still `running` at that epoch; a takeover bumps `runs.lease_epoch`, after which the
 * stalled worker's writes are refused with LeaseLostError.
 */
export interface Fence {
  runId: string;
  epoch: number;
}

/**
 * The CTE a fenced statement starts with, for `schema` (a validated identifier) and the numbers
 * of the statement's run-id and epoch parameters:
 * `fence AS (SELECT 1 FROM <schema>.runs WHERE run_id = $r AND lease_epoch = $e AND status = 'running' FOR SHARE)`.
 *
 * Why FOR SHARE: a takeover UPDATEs the run row, which conflicts with the share lock. Either the
 * fenced statement locks first and the takeover waits for it to commit (the write landed while
 * the lease was held), or the takeover committed first and the fence re-checks the new row
 * version and finds no row. So a write never lands after the lease moved. Fenced writes of one
 * run do not block each other (share locks are compatible).
 *
 * The statement must read the CTE (a SELECT CTE nobody reads is never run): make every write
 * depend on it, e.g. `INSERT … SELECT … FROM fence` or `WHERE EXISTS (SELECT 1 FROM fence)`, and
 * return `EXISTS (SELECT 1 FROM fence)` to tell a lost lease from "nothing to do".
 *
 * @example
 *   `WITH ${fenceCte(db.schema, 1, 2)}
 *    UPDATE … SET … WHERE run_id = $1 AND EXISTS (SELECT 1 FROM fence)`
 */
export function fenceCte(schema: string, runParam: number, epochParam: number): string {
  return `fence AS (
    SELECT 1 FROM ${quoteIdentifier(schema)}.runs
     WHERE run_id = $${runParam}::uuid AND lease_epoch = $${epochParam}::bigint AND status = 'running'
       FOR SHARE
  )`;
}

/** Checks a fence's shape (a run id and a non-negative integer epoch) before it reaches SQL. */
export function checkFence(fence: Fence): Fence {
  if (fence === null || typeof fence !== "object" || !Number.isSafeInteger(fence.epoch) || fence.epoch < 0) {
    throw new DevmindError("RUN_INPUT_INVALID", `invalid fence ${JSON.stringify(fence)}: expected {runId, epoch} with a non-negative integer epoch`);
  }
  checkRunId(fence.runId);
  return fence;
}

/** The error a fenced write throws when its fence no longer holds. */
export function leaseLost(fence: Fence): LeaseLostError {
  return new LeaseLostError(fence.runId, fence.epoch);
}
