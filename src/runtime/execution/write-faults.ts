import { RUNTIME_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { Database, Queryable } from "../../db/types.js";
import { faultSummary } from "./fault-recovery.js";

/**
 * The last write this process's database refused for want of storage (a full disk, a read-only
 * server, a revoked permission), for `/health`. A full disk often refuses only writes that need
 * new space (a checkpoint, a new event page) while small in-place updates, such as the health
 * probe's own upsert, still fit in their page: so `/health` reports the last such failure too,
 * for RUNTIME_DEFAULTS.healthWriteFailureMs after it happened.
 */
export class WriteFaults {
  private last: { at: number; error: { code: string; message: string } } | null = null;

  /** Notes a failed statement or transaction if it failed for want of storage. */
  record(error: unknown): void {
    if (databaseFaultOf(error) === "storage") this.last = { at: Date.now(), error: faultSummary(error) };
  }

  /** The last storage failure if it is recent (within `windowMs`), else null. */
  recent(windowMs: number = RUNTIME_DEFAULTS.healthWriteFailureMs): { at: string; error: { code: string; message: string } } | null {
    if (this.last === null || Date.now() - this.last.at > windowMs) return null;
    return { at: new Date(this.last.at).toISOString(), error: this.last.error };
  }
}

/**
 * `db` with every statement and transaction that fails for want of storage noted in `faults`;
 * everything else passes through unchanged (one extra `catch` per statement).
 */
export function observeWriteFaults(db: Database, faults: WriteFaults): Database {
  const noted = <T>(promise: Promise<T>): Promise<T> =>
    promise.catch((error: unknown) => {
      faults.record(error);
      throw error;
    });
  const wrap = (target: Queryable): Queryable => ({
    query: (sql, values) => noted(target.query(sql, values)),
    execScript: (sql) => noted(target.execScript(sql)),
  });
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") return (sql: Parameters<Database["query"]>[0], values?: readonly unknown[]) => noted(target.query(sql, values));
      if (key === "execScript") return (sql: string) => noted(target.execScript(sql));
      if (key === "transaction") return <T>(fn: (tx: Queryable) => Promise<T>) => noted(target.transaction((tx) => fn(wrap(tx))));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
