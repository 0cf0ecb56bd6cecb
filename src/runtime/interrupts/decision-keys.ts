import type { Database, Queryable, Row } from "../../db/types.js";
import { DevmindError, RunConflictError } from "../../errors.js";
import { checkRunId } from "../queue/run-record.js";
import { decisionKeySql } from "./decision-key-sql.js";
import { argsDigest } from "./digest.js";

/** The longest decision key accepted (a uuid is 36). */
export const DECISION_KEY_MAX_CHARS = 200;

/** An answer stored under a decision key. */
export interface KeyedAnswer {
  /** The run the answer created to resume the thread; null when the waiting run still waits for more. */
  nextRunId: string | null;
}

/** The digest of an answer's request, compared between the tries of one key. */
export function answerDigest(kind: "decide" | "resume", body: unknown, audit: { principal: string; reason?: string | undefined }): string {
  return argsDigest({ kind, body: body ?? null, principal: audit.principal, reason: audit.reason ?? null });
}

/** A key a caller gave: a non-empty string of at most DECISION_KEY_MAX_CHARS, without NUL; RUN_INPUT_INVALID otherwise. */
export function checkDecisionKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > DECISION_KEY_MAX_CHARS || key.includes("\0")) {
    throw new DevmindError("RUN_INPUT_INVALID", `a decision key (Idempotency-Key) must be a non-empty string of at most ${DECISION_KEY_MAX_CHARS} characters`, { details: { field: "key" } });
  }
  return key;
}

/** Thrown inside an answer's transaction when its key was stored meanwhile: the transaction rolls back and the stored answer is the reply. */
export class DecisionKeyTaken extends Error {
  constructor(readonly key: string) {
    super(`decision key ${key} was stored by a concurrent try`);
  }
}

/**
 * Decision keys (issue 37): an answer to a waiting run — decisions on its approvals or a resume
 * value — carries a key kept across the retries of that one answer, stored in the answer's own
 * transaction. In a failover the first try may have committed without its caller hearing it: the
 * retry finds its key and replies with what the first try did (`find`), instead of RUN_CONFLICT
 * ("already decided"). The same key with another request is a conflict.
 *
 * @example
 *   const repeat = await keys.find(runId, key, digest);
 *   if (repeat !== null) return repeat.nextRunId ?? runId;
 *   await db.transaction(async (tx) => { ...; await keys.store(tx, runId, key, digest, principal, nextRunId); });
 */
export class DecisionKeys {
  private readonly sql: ReturnType<typeof decisionKeySql>;

  constructor(private readonly db: Database) {
    this.sql = decisionKeySql(db.schema);
  }

  /**
   * The answer stored under `key` for this run with this request digest; null when the key is not
   * stored. The key stored for another request is a RunConflictError naming who used it and when.
   */
  async find(runId: string, key: string, digest: string): Promise<KeyedAnswer | null> {
    const row = (await this.db.query(this.sql.find, [checkRunId(runId), key])).rows[0];
    return row === undefined ? null : answerOf(row, digest);
  }

  /**
   * Stores the key of an answer in its transaction `tx`. DecisionKeyTaken (rolling the transaction
   * back) when a concurrent try with this key committed first: the caller then asks `find`.
   */
  async store(tx: Queryable, runId: string, key: string, digest: string, principal: string, nextRunId: string | null): Promise<void> {
    const row = (await tx.query(this.sql.insert, [checkRunId(runId), key, digest, principal, nextRunId])).rows[0];
    if (row === undefined) throw new DecisionKeyTaken(key);
  }
}

function answerOf(row: Row, digest: string): KeyedAnswer {
  if (row["request_digest"] !== digest) {
    throw new RunConflictError(
      `decision key ${String(row["decision_key"])} was already used on run ${String(row["run_id"])} by ${String(row["principal"])} at ${String(row["decided_at"])} for another request; a retry must send the same request, a new answer a new key`,
      { runId: row["run_id"], key: row["decision_key"], principal: row["principal"], decidedAt: row["decided_at"] },
    );
  }
  const next = row["next_run_id"];
  return { nextRunId: typeof next === "string" ? next : null };
}
