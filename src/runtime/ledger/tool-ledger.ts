import { isArgsDigest } from "../../vocabulary/decisions.js";
import { withRider, type CheckpointRider } from "../../checkpoint/fence-config.js";
import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Database, Row } from "../../db/types.js";
import { DevmindError, RunConflictError } from "../../errors.js";
import { checkFence, fenceCte, leaseLost, type Fence } from "../queue/fence.js";
import { checkRunId } from "../queue/run-record.js";
import type { ToolErrorCode } from "../../tools/types.js";

/**
 * Options of the ledger's writes: `rider` (the run's events waiting to be stored) commits in the
 * same transaction as the write, one commit for both (see `CheckpointRider`).
 */
export interface LedgerWriteOptions {
  rider?: CheckpointRider | undefined;
}

/** What `begin` found for a tool call, i.e. what the caller must do now. */
export type LedgerBegin =
  /** First time: run the tool, then `complete`. */
  | { state: "new" }
  /**
   * Begun before and never completed (its process died mid-call): `attempts` counts this entry
   * too. Re-run only an idempotent tool; otherwise the outcome is unknown (TOOL_OUTCOME_UNKNOWN).
   * `epoch`: the lease epoch it was begun under — this lease's own epoch with no call run here
   * means the begin's answer was lost and the tool never ran.
   */
  | { state: "started"; attempts: number; epoch: number }
  /** Finished before: use the stored `result`, do not run the tool again. */
  | { state: "succeeded" | "failed"; result: unknown };

/** A `tool_ledger` row; times as ISO text. */
export interface LedgerEntry {
  run_id: string;
  tool_call_id: string;
  tool: string;
  args_digest: string;
  status: "started" | "succeeded" | "failed";
  result: unknown;
  attempts: number;
  lease_epoch: number;
  started_at: string;
  finished_at: string | null;
}

const COLUMNS = `run_id::text, tool_call_id, tool, args_digest, status, result, attempts, lease_epoch::text, started_at, finished_at`;

/** The tool error code the run notes in `unknown_outcomes` (a constant, spelled into SQL). */
const UNKNOWN_CODE: ToolErrorCode = "TOOL_OUTCOME_UNKNOWN";

/** Every statement of the tool ledger, for one schema (a validated identifier). */
export function ledgerSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /**
     * $1 run id, $2 epoch, $3 tool call id, $4 tool, $5 args digest. Fenced. The ledger's rows are
     * keyed by the run whose ledger the run continues (`ledger_run`: the first run of a chain of
     * resumes), so a call that finished before an interrupt is found by the run that resumes it.
     * Inserts the call as
     * started (attempts 1), or bumps attempts of a started one with the same digest; a finished one
     * is left alone. One row: `held` (fence), `attempts` after the write (1 = new, null = nothing
     * written), and the row as it was before (`old_*`, null if none).
     */
    begin: statement(
      "ledger_begin",
      `WITH ${fenceCte(schema, 1, 2)}, chain AS (SELECT COALESCE(c.ledger_run, c.run_id) AS key FROM ${s}.runs c WHERE c.run_id = $1::uuid),
       old AS (
         SELECT status, result, args_digest, lease_epoch FROM ${s}.tool_ledger WHERE run_id = (SELECT key FROM chain) AND tool_call_id = $3
       ),
       up AS (
         INSERT INTO ${s}.tool_ledger AS l (run_id, tool_call_id, tool, args_digest, status, attempts, lease_epoch)
         SELECT (SELECT key FROM chain), $3, $4, $5, 'started', 1, $2::bigint FROM fence
         ON CONFLICT (run_id, tool_call_id) DO UPDATE
            SET attempts = l.attempts + 1, lease_epoch = EXCLUDED.lease_epoch, started_at = now()
          WHERE l.status = 'started' AND l.args_digest = EXCLUDED.args_digest
         RETURNING l.attempts
       )
       SELECT EXISTS (SELECT 1 FROM fence) AS held, (SELECT attempts FROM up) AS attempts,
              old.status AS old_status, old.result AS old_result, old.args_digest AS old_digest, old.lease_epoch::text AS old_epoch
         FROM (SELECT 1) AS one LEFT JOIN old ON true`,
    ),
    /**
     * $1 run id, $2 epoch, $3 tool call id, $4 'succeeded' | 'failed', $5 result jsonb. Fenced. A
     * TOOL_OUTCOME_UNKNOWN result also notes the call in the run's `unknown_outcomes` (once).
     * `same`: the row already holds exactly this outcome, written under this epoch (a retry of
     * this write whose first try committed, its answer lost).
     */
    complete: statement(
      "ledger_complete",
      `WITH ${fenceCte(schema, 1, 2)}, chain AS (SELECT COALESCE(c.ledger_run, c.run_id) AS key FROM ${s}.runs c WHERE c.run_id = $1::uuid),
       up AS (
         UPDATE ${s}.tool_ledger SET status = $4, result = $5::jsonb, finished_at = now()
          WHERE run_id = (SELECT key FROM chain) AND tool_call_id = $3 AND status = 'started' AND EXISTS (SELECT 1 FROM fence)
         RETURNING tool
       ),
       noted AS (
         UPDATE ${s}.runs r SET unknown_outcomes = r.unknown_outcomes || jsonb_build_array(jsonb_build_object('tool_call_id', $3::text, 'tool', (SELECT tool FROM up)))
          WHERE r.run_id = $1::uuid AND $5::jsonb -> 'error' ->> 'code' = '${UNKNOWN_CODE}' AND EXISTS (SELECT 1 FROM up)
            AND NOT r.unknown_outcomes @> jsonb_build_array(jsonb_build_object('tool_call_id', $3::text))
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM fence) AS held, (SELECT count(*) FROM up)::integer AS updated,
              (SELECT status FROM ${s}.tool_ledger WHERE run_id = (SELECT key FROM chain) AND tool_call_id = $3) AS status,
              EXISTS (SELECT 1 FROM ${s}.tool_ledger WHERE run_id = (SELECT key FROM chain) AND tool_call_id = $3
                         AND status = $4 AND lease_epoch = $2::bigint AND result = $5::jsonb) AS same`,
    ),
    /**
     * $1 run id, $2 epoch, $3 tool call id. Fenced. Forgets a call that did not succeed (started or
     * failed), so it runs as new the next time it is begun; a succeeded one is left alone. One row:
     * `held` (fence), `deleted` (0 or 1).
     */
    release: statement(
      "ledger_release",
      `WITH ${fenceCte(schema, 1, 2)}, chain AS (SELECT COALESCE(c.ledger_run, c.run_id) AS key FROM ${s}.runs c WHERE c.run_id = $1::uuid),
       gone AS (
         DELETE FROM ${s}.tool_ledger
          WHERE run_id = (SELECT key FROM chain) AND tool_call_id = $3 AND status <> 'succeeded' AND EXISTS (SELECT 1 FROM fence)
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM fence) AS held, (SELECT count(*) FROM gone)::integer AS deleted`,
    ),
    /** $1 run id, $2 tool call id: the call's row in the ledger the run continues. */
    get: statement(
      "ledger_get",
      `SELECT ${COLUMNS} FROM ${s}.tool_ledger
        WHERE run_id = (SELECT COALESCE(c.ledger_run, c.run_id) FROM ${s}.runs c WHERE c.run_id = $1::uuid) AND tool_call_id = $2`,
    ),
  };
}

/**
 * The tool-call ledger: a row per (run, tool call) — started -> succeeded | failed — that makes
 * tool calls effectively once across crashes and workers. Call `begin` before running a tool and
 * `complete` after; both are fenced by the run's lease (LeaseLostError once it moved), so a
 * stalled worker can neither start nor finish a call after a takeover.
 *
 * A call id re-entered with a different args digest is a RunConflictError and changes nothing:
 * a stored result is only ever returned for the exact arguments it was produced from.
 *
 * @example
 *   const entry = await ledger.begin(fence, { toolCallId, tool: tool.name, argsDigest: argsDigest(args) });
 *   if (entry.state === "succeeded" || entry.state === "failed") return entry.result;
 *   if (entry.state === "started" && !tool.idempotent) return outcomeUnknown();
 *   const result = await tool.run(args);
 *   await ledger.complete(fence, toolCallId, { ok: result.ok, result });
 */
export class ToolLedger {
  private readonly sql: ReturnType<typeof ledgerSql>;

  constructor(private readonly db: Database) {
    this.sql = ledgerSql(db.schema);
  }

  /** Records that the call is starting (one fenced statement) and says what was there before. */
  async begin(fence: Fence, call: { toolCallId: string; tool: string; argsDigest: string }, options: LedgerWriteOptions = {}): Promise<LedgerBegin> {
    checkFence(fence);
    const { toolCallId, tool, argsDigest } = call;
    checkCall(toolCallId);
    if (typeof tool !== "string" || tool === "") throw new DevmindError("RUN_INPUT_INVALID", "tool must be a non-empty string");
    if (!isArgsDigest(argsDigest)) {
      throw new DevmindError("RUN_INPUT_INVALID", "argsDigest must be a sha256 hex digest (see argsDigest())");
    }
    const result = await withRider(this.db, options.rider, (db) => db.query(this.sql.begin, [fence.runId, fence.epoch, toolCallId, tool, argsDigest]));
    const row = result.rows[0];
    if (row === undefined || row["held"] !== true) throw leaseLost(fence);
    const attempts = row["attempts"];
    if (attempts !== null && attempts !== undefined) {
      return Number(attempts) === 1 ? { state: "new" } : { state: "started", attempts: Number(attempts), epoch: Number(row["old_epoch"]) };
    }
    // nothing written: the call is finished, or was begun with other arguments
    let previous: { status: unknown; result: unknown; digest: unknown } = { status: row["old_status"], result: row["old_result"], digest: row["old_digest"] };
    const finished = previous.status === "succeeded" || previous.status === "failed";
    if (!finished && (previous.status === null || previous.status === undefined || previous.digest === argsDigest)) {
      // written by someone else between this statement's snapshot and its insert: look again
      const entry = await this.get(fence.runId, toolCallId);
      previous = { status: entry?.status, result: entry?.result, digest: entry?.args_digest };
    }
    if (previous.digest !== argsDigest) {
      throw new RunConflictError(`tool call ${toolCallId} was begun with other arguments (digest ${String(previous.digest)}, now ${argsDigest})`, {
        runId: fence.runId,
        toolCallId,
      });
    }
    if (previous.status === "succeeded" || previous.status === "failed") return { state: previous.status, result: previous.result };
    throw new RunConflictError(`tool call ${toolCallId} is in an unexpected ledger state ${String(previous.status)}`, { runId: fence.runId, toolCallId });
  }

  /**
   * Records the call's outcome (fenced): `ok` decides succeeded / failed, `result` (JSON) is what
   * later re-entries get back. A call that was never begun or is already finished is a
   * RunConflictError; nothing is changed then — except a call already finished with this very
   * outcome under this lease epoch: a retried write whose first try committed (its answer lost in
   * a failover) is that write's own success.
   */
  async complete(fence: Fence, toolCallId: string, outcome: { ok: boolean; result: unknown }, options: LedgerWriteOptions = {}): Promise<void> {
    checkFence(fence);
    checkCall(toolCallId);
    if (outcome === null || typeof outcome !== "object" || typeof outcome.ok !== "boolean") {
      throw new DevmindError("RUN_INPUT_INVALID", "outcome must be {ok: boolean, result}");
    }
    let json: string;
    try {
      json = JSON.stringify(outcome.result ?? null);
    } catch (error) {
      throw new DevmindError("RUN_INPUT_INVALID", `tool result is not serialisable as JSON: ${(error as Error).message}`, { cause: error });
    }
    const status = outcome.ok ? "succeeded" : "failed";
    const row = (await withRider(this.db, options.rider, (db) => db.query(this.sql.complete, [fence.runId, fence.epoch, toolCallId, status, json]))).rows[0];
    if (row === undefined || row["held"] !== true) throw leaseLost(fence);
    if (Number(row["updated"]) === 1) return;
    // the same outcome under the same lease: this attempt's own write, committed by a try whose answer was lost
    if (row["same"] === true) return;
    const found = row["status"];
    throw new RunConflictError(
      found === null || found === undefined ? `tool call ${toolCallId} was never begun` : `tool call ${toolCallId} is already ${String(found)}`,
      { runId: fence.runId, toolCallId },
    );
  }

  /**
   * Forgets a call that did not finish or failed (fenced), for a caller that knows it may run
   * again: its tool raised LangGraph's interrupt (the call runs again on resume), its arguments
   * failed validation before it ran, or a retry in the same live process follows a recorded
   * failure. A succeeded call stays. Returns whether a row was removed.
   */
  async release(fence: Fence, toolCallId: string, options: LedgerWriteOptions = {}): Promise<boolean> {
    checkFence(fence);
    checkCall(toolCallId);
    const row = (await withRider(this.db, options.rider, (db) => db.query(this.sql.release, [fence.runId, fence.epoch, toolCallId]))).rows[0];
    if (row === undefined || row["held"] !== true) throw leaseLost(fence);
    return Number(row["deleted"]) === 1;
  }

  /** The ledger row of a call, or null. */
  async get(runId: string, toolCallId: string): Promise<LedgerEntry | null> {
    checkRunId(runId);
    checkCall(toolCallId);
    const row = (await this.db.query(this.sql.get, [runId, toolCallId])).rows[0];
    return row === undefined ? null : toEntry(row);
  }
}

function checkCall(toolCallId: string): void {
  if (typeof toolCallId !== "string" || toolCallId === "") throw new DevmindError("RUN_INPUT_INVALID", "toolCallId must be a non-empty string");
}

function toEntry(row: Row): LedgerEntry {
  return {
    run_id: String(row["run_id"]),
    tool_call_id: String(row["tool_call_id"]),
    tool: String(row["tool"]),
    args_digest: String(row["args_digest"]),
    status: row["status"] as LedgerEntry["status"],
    result: row["result"] ?? null,
    attempts: Number(row["attempts"]),
    lease_epoch: Number(row["lease_epoch"]),
    started_at: isoTime(row["started_at"]),
    finished_at: row["finished_at"] === null || row["finished_at"] === undefined ? null : isoTime(row["finished_at"]),
  };
}

function isoTime(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}
