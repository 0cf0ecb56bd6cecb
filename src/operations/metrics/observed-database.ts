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
  const query = (sql: string | Statement, values?: readonly unknown[]) => noted(db.query(sql, values));
  const transaction = <T>(fn: (tx: Queryable) => Promise<T>) => noted(db.transaction(fn));
  // the database's other methods, bound once (a run reads them often: no closure per access)
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(db, {
    get(target, key) {
      if (key === "query") return query;
      if (key === "transaction") return transaction;
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      let method = bound.get(key);
      if (method === undefined) bound.set(key, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
}
