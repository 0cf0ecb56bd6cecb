import { randomUUID } from "node:crypto";
import type { Database, Queryable, Row } from "../../db/types.js";
import { argsDigest } from "./digest.js";
import { checkRunId, serializeJson } from "../queue/run-record.js";
import { resumeSql } from "./resume-sql.js";

/**
 * What a resume gives the graph, as stored: a value per interrupt id, and a Command's `update`
 * and `goto` when given. The executor turns it into `new Command({ resume: values, update, goto })`.
 */
export interface ResumeCommand {
  values: Record<string, unknown>;
  update?: unknown;
  goto?: unknown;
}

/** A stored resume (a `run_resumes` row): the audit of who resumed what, when and why. */
export interface ResumeRecord {
  run_id: string;
  resume_id: string;
  interrupt_ids: string[];
  command: ResumeCommand;
  /** sha256 of the canonical JSON of `command` (see `argsDigest`). */
  value_digest: string;
  principal: string;
  reason: string | null;
  decided_at: string;
  /** Set once the run paused again or ended after using it. */
  consumed_at: string | null;
}

function fromRow(row: Row): ResumeRecord {
  return {
    run_id: row["run_id"] as string,
    resume_id: row["resume_id"] as string,
    interrupt_ids: (row["interrupt_ids"] as string[]) ?? [],
    command: row["command"] as ResumeCommand,
    value_digest: row["value_digest"] as string,
    principal: row["principal"] as string,
    reason: (row["reason"] as string | null) ?? null,
    decided_at: row["decided_at"] as string,
    consumed_at: (row["consumed_at"] as string | null) ?? null,
  };
}

/**
 * The audit trail of resumes (CONTRACT section 10): every value given to an interrupted run of
 * any graph, with who gave it, when, why and its digest, stored on the waiting run it answers.
 * A resume stays open until the run that resumes with it ends (`RunStore.endAtInterrupt` /
 * `finish` use it up), so a run whose process died continues with the same value.
 */
export class ResumeStore {
  private readonly sql;

  constructor(private readonly db: Database) {
    this.sql = resumeSql(db.schema);
  }

  /**
   * Stores a resume given to a waiting run (or to a pending run created with a Command); null
   * when the run is neither (nothing stored). With `tx`, in the caller's transaction.
   */
  async record(
    runId: string,
    resume: { interruptIds: string[]; command: ResumeCommand; principal: string; reason?: string | null },
    options: { tx?: Queryable } = {},
  ): Promise<ResumeRecord | null> {
    const command = serializeJson(resume.command, "resume");
    const values = [checkRunId(runId), randomUUID(), resume.interruptIds, command, argsDigest(resume.command), resume.principal, resume.reason ?? null];
    const row = (await (options.tx ?? this.db).query(this.sql.record, values)).rows[0];
    return row === undefined ? null : fromRow(row);
  }

  /** Resumes given since the run last paused, oldest first. */
  async open(runId: string): Promise<ResumeRecord[]> {
    const result = await this.db.query(this.sql.open, [checkRunId(runId)]);
    return result.rows.map(fromRow);
  }

  /** Every resume of the run, oldest first. */
  async list(runId: string): Promise<ResumeRecord[]> {
    const result = await this.db.query(this.sql.list, [checkRunId(runId)]);
    return result.rows.map(fromRow);
  }
}
