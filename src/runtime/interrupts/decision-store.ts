import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Database, Queryable, Row } from "../../db/types.js";
import { DevmindError, RunConflictError, RunNotFoundError } from "../../errors.js";
import type { DecisionType } from "../../vocabulary/decisions.js";
import { argsDigest } from "./digest.js";
import { checkRunId } from "../queue/run-record.js";


/**
 * One decision to record. `args` are the arguments that will run: the proposed ones for
 * `approve`, the edited ones for `edit` (both required); optional for `reject` (kept for audit).
 */
export interface NewDecision {
  toolCallId: string;
  tool: string;
  decision: DecisionType;
  args?: object;
  principal: string;
  reason?: string;
}

/** A stored decision (a `run_decisions` row); `decided_at` as ISO text. */
export interface DecisionRecord {
  run_id: string;
  tool_call_id: string;
  tool: string;
  decision: DecisionType;
  args: object | null;
  /** sha256 of the canonical JSON of `args` for approve/edit (see `argsDigest`); null for reject. */
  args_digest: string | null;
  principal: string;
  reason: string | null;
  decided_at: string;
}

const DECISIONS = new Set<string>(["approve", "edit", "reject"]);
const COLUMNS = `run_id::text, tool_call_id, tool, decision, args, args_digest, principal, reason, decided_at`;

/** Every statement of the decision store, for one schema (a validated identifier). */
export function decisionSql(schema: string) {
  const s = quoteIdentifier(schema);
  return {
    /** $1 run id, $2 jsonb array of rows: inserts all or (on any conflict) none. */
    record: statement(
      "decisions_record",
      `WITH ins AS (
         INSERT INTO ${s}.run_decisions (run_id, tool_call_id, tool, decision, args, args_digest, principal, reason)
         SELECT $1::uuid, d ->> 'tool_call_id', d ->> 'tool', d ->> 'decision', d -> 'args', d ->> 'args_digest',
                d ->> 'principal', d ->> 'reason'
           FROM jsonb_array_elements($2::jsonb) AS d
         RETURNING ${COLUMNS}
       )
       SELECT * FROM ins`,
    ),
    /** $1 run id, $2 tool call ids: the stored decisions among them. */
    existing: statement(
      "decisions_existing",
      `SELECT ${COLUMNS} FROM ${s}.run_decisions WHERE run_id = $1::uuid AND tool_call_id = ANY ($2::text[]) ORDER BY tool_call_id`,
    ),
    /** $1 run id: every decision of the run, oldest first. */
    list: statement("decisions_list", `SELECT ${COLUMNS} FROM ${s}.run_decisions WHERE run_id = $1::uuid ORDER BY decided_at, tool_call_id`),
    /**
     * $1 run id, $2 tool call id: the digest an approve/edit decision allows, decided on the run
     * itself or on the waiting run it resumes (where decisions are stored).
     */
    approvedDigest: statement(
      "decisions_approved_digest",
      `SELECT args_digest FROM ${s}.run_decisions
        WHERE run_id IN ($1::uuid, (SELECT r.resumes_run FROM ${s}.runs r WHERE r.run_id = $1::uuid))
          AND tool_call_id = $2 AND decision IN ('approve', 'edit')
        LIMIT 1`,
    ),
  };
}

/**
 * The audit trail of approvals (CONTRACT section 5): every decision with who made it, when, why,
 * and the digest of the exact arguments that may run. One decision per tool call, ever.
 *
 * @example
 *   const decisions = new DecisionStore(db);
 *   await decisions.record(runId, [{ toolCallId, tool: "write_file", decision: "approve", args, principal: "alice" }]);
 *   if ((await decisions.approvedDigest(runId, toolCallId)) !== argsDigest(argsAboutToRun)) refuse();
 */
export class DecisionStore {
  private readonly sql: ReturnType<typeof decisionSql>;

  constructor(private readonly db: Database) {
    this.sql = decisionSql(db.schema);
  }

  /**
   * Stores `decisions` in one statement, all or nothing, and returns them as stored (in input
   * order). A call that already has a decision (stored before, or twice in this batch) is a
   * RunConflictError naming who decided it and when, and nothing is stored. Does not check the
   * run's status or which calls are pending — the runtime does, in the same transaction (`tx`).
   */
  async record(runId: string, decisions: readonly NewDecision[], options: { tx?: Queryable } = {}): Promise<DecisionRecord[]> {
    checkRunId(runId);
    if (!Array.isArray(decisions) || decisions.length === 0) throw new DevmindError("RUN_INPUT_INVALID", "decisions must be a non-empty array");
    const rows = decisions.map(toRow);
    const runner = options.tx ?? this.db;
    try {
      const result = await runner.query(this.sql.record, [runId, JSON.stringify(rows)]);
      const stored = result.rows.map(toRecord);
      const order = new Map(rows.map((row, index) => [row.tool_call_id, index]));
      return stored.sort((a, b) => (order.get(a.tool_call_id) ?? 0) - (order.get(b.tool_call_id) ?? 0));
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === "23503") throw new RunNotFoundError(runId);
      // inside a caller's transaction the statement error aborted it: no lookup possible there
      // (the caller asks `conflictOf` once the transaction is over)
      if (code !== "23505" || options.tx !== undefined) throw error;
      throw (await this.conflictOf(runId, rows.map((row) => row.tool_call_id))) ?? error;
    }
  }

  /**
   * The RunConflictError naming who decided first and when, for the first of `toolCallIds` that
   * already has a decision; null when none has. For a `record` inside a transaction that failed
   * on a unique violation (SQLSTATE 23505): ask after the transaction ended.
   */
  async conflictOf(runId: string, toolCallIds: readonly string[]): Promise<RunConflictError | null> {
    checkRunId(runId);
    const existing = await this.db.query(this.sql.existing, [runId, [...toolCallIds]]);
    const first = existing.rows.map(toRecord)[0];
    return first === undefined ? null : alreadyDecided(first);
  }

  /** Every decision of the run, oldest first (empty for a run without decisions or no such run). */
  async list(runId: string): Promise<DecisionRecord[]> {
    checkRunId(runId);
    return (await this.db.query(this.sql.list, [runId])).rows.map(toRecord);
  }

  /** The args digest an approve/edit decision allows for this call (on the run or the waiting run it resumes); null if none (or rejected). */
  async approvedDigest(runId: string, toolCallId: string): Promise<string | null> {
    checkRunId(runId);
    const row = (await this.db.query<{ args_digest: string | null }>(this.sql.approvedDigest, [runId, toolCallId])).rows[0];
    return row?.args_digest ?? null;
  }
}

/** The conflict for a second decision on one call. */
function alreadyDecided(record: DecisionRecord): RunConflictError {
  return new RunConflictError(`tool call ${record.tool_call_id} was already decided by ${record.principal} at ${record.decided_at}`, {
    runId: record.run_id,
    toolCallId: record.tool_call_id,
    decision: record.decision,
    principal: record.principal,
    decidedAt: record.decided_at,
  });
}

/** A decision as inserted: a stored record without what the database fills in. */
type DecisionRow = Omit<DecisionRecord, "run_id" | "decided_at">;

function toRow(input: NewDecision, index: number, all: readonly NewDecision[]): DecisionRow {
  const bad = (message: string): DevmindError => new DevmindError("RUN_INPUT_INVALID", `decision ${index}: ${message}`, { details: { index } });
  if (input === null || typeof input !== "object") throw bad("must be an object");
  const { toolCallId, tool, decision, args, principal, reason } = input;
  if (typeof toolCallId !== "string" || toolCallId === "") throw bad("toolCallId must be a non-empty string");
  if (typeof tool !== "string" || tool === "") throw bad("tool must be a non-empty string");
  if (typeof decision !== "string" || !DECISIONS.has(decision)) throw bad(`decision must be approve, edit or reject, got ${JSON.stringify(decision)}`);
  if (typeof principal !== "string" || principal.trim() === "") throw bad("principal must be a non-empty string");
  if (reason !== undefined && reason !== null && typeof reason !== "string") throw bad("reason must be a string");
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) throw bad("args must be an object");
  if (decision !== "reject" && args === undefined) throw bad(`${decision} needs the args that will run`);
  const earlier = all.findIndex((other) => other?.toolCallId === toolCallId);
  if (earlier !== index) {
    throw new RunConflictError(`tool call ${toolCallId} appears twice in one set of decisions`, { toolCallId });
  }
  return {
    tool_call_id: toolCallId,
    tool,
    decision,
    args: args ?? null,
    args_digest: decision === "reject" ? null : argsDigest(args),
    principal,
    reason: reason ?? null,
  };
}

function toRecord(row: Row): DecisionRecord {
  return {
    run_id: String(row["run_id"]),
    tool_call_id: String(row["tool_call_id"]),
    tool: String(row["tool"]),
    decision: row["decision"] as DecisionType,
    args: (row["args"] ?? null) as object | null,
    args_digest: (row["args_digest"] ?? null) as string | null,
    principal: String(row["principal"]),
    reason: (row["reason"] ?? null) as string | null,
    decided_at: isoTime(row["decided_at"]),
  };
}

function isoTime(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}
