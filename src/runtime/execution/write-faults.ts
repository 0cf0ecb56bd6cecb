import { RUNTIME_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import { throughQueryable, type Database, type Queryable, type Statement } from "../../db/types.js";
import { faultSummary } from "./fault-recovery.js";

/**
 * The last write this process's database refused for want of storage (a full disk, a read-only
 * server, a revoked permission), for `/health`. A full disk often refuses only writes that need
 * new space (a checkpoint, a new event page) while small in-place updates, such as the health
 * probe's own upsert, still fit in their page: so `/health` reports the last such failure too,
 * until a statement that inserts rows (not the probe) succeeds, for
 * RUNTIME_DEFAULTS.healthWriteFailureMs at most.
 */
export class WriteFaults {
  private last: { at: number; error: { code: string; message: string } } | null = null;

  /** Notes a failed statement or transaction if it failed for want of storage. */
  record(error: unknown): void {
    if (databaseFaultOf(error) === "storage") this.last = { at: Date.now(), error: faultSummary(error) };
  }

  /** A write that needs new space succeeded: the last failure no longer stands. */
  stored(): void {
    this.last = null;
  }

  /** The last failure if it still stands and happened within `windowMs`, else null. */
  recent(windowMs: number = RUNTIME_DEFAULTS.healthWriteFailureMs): { at: string; error: { code: string; message: string } } | null {
    if (this.last === null || Date.now() - this.last.at > windowMs) return null;
    return { at: new Date(this.last.at).toISOString(), error: this.last.error };
  }
}

/** The health probe's own statement: its success proves nothing about space (an in-place update). */
const PROBE_STATEMENT = "health_probe_write";
const INSERTS = /\bINSERT\s+INTO\b/i;
/** Whether a statement's success shows the database has room again: it inserts (new rows need space), and it is not the probe. */
const needsSpace = new WeakMap<Statement, boolean>();
function insertsRows(sql: string | Statement): boolean {
  if (typeof sql === "string") return INSERTS.test(sql);
  let known = needsSpace.get(sql);
  if (known === undefined) {
    known = INSERTS.test(sql.text) && !sql.name.includes(PROBE_STATEMENT);
    needsSpace.set(sql, known);
  }
  return known;
}

/**
 * `db` with every statement and transaction that fails for want of storage noted in `faults`,
 * and every successful insert (space again); everything else passes through unchanged.
 */
export function observeWriteFaults(db: Database, faults: WriteFaults): Database {
  const noted = <T>(sql: string | Statement, promise: Promise<T>): Promise<T> =>
    promise.then(
      (value) => {
        if (insertsRows(sql)) faults.stored();
        return value;
      },
      (error: unknown) => {
        faults.record(error);
        throw error;
      },
    );
  const wrap = (target: Queryable): Queryable => throughQueryable(target, (sql, send) => noted(sql, send()));
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") return (sql: string | Statement, values?: readonly unknown[]) => noted(sql, target.query(sql, values));
      if (key === "execScript") return (sql: string) => noted(sql, target.execScript(sql));
      if (key === "transaction") {
        return <T>(fn: (tx: Queryable) => Promise<T>) =>
          target.transaction((tx) => fn(wrap(tx))).catch((error: unknown) => {
            faults.record(error);
            throw error;
          });
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
