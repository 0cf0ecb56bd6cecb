import { databaseFaultOf } from "../../db/database-faults.js";
import type { Database, Queryable, Statement } from "../../db/types.js";
import type { RunMetrics } from "./run-metrics.js";

/**
 * `db` with every statement and transaction that fails with a database fault (unreachable,
 * storage) counted in `devmind_database_faults_total{kind}`; every retry that fails counts
 * again. Everything else passes through unchanged.
 */
export function countDatabaseFaults(db: Database, metrics: RunMetrics): Database {
  const noted = <T>(promise: Promise<T>): Promise<T> =>
    promise.catch((error: unknown) => {
      const kind = databaseFaultOf(error);
      if (kind !== null) metrics.databaseFaults.inc({ kind });
      throw error;
    });
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") return (sql: string | Statement, values?: readonly unknown[]) => noted(target.query(sql, values));
      if (key === "transaction") return <T>(fn: (tx: Queryable) => Promise<T>) => noted(target.transaction(fn));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
