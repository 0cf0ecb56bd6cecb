import { throughQueryable, type Database, type Queryable, type QueryResult, type Row, type Statement } from "../../src/db/types.js";

/** One statement a counted database ran: its name (a Statement's, else its first words), whether inside a transaction, its rows. */
export interface CountedStatement {
  name: string;
  /** The transaction it ran in (1, 2, …), or null for an autocommit statement (a transaction of its own). */
  tx: number | null;
  rows: number;
}

/** What a counting database saw since `reset()`. */
export interface StatementLog {
  statements: CountedStatement[];
  /** Transactions committed or attempted: one per autocommit statement, one per `transaction()`. */
  transactions(filter?: (statement: CountedStatement) => boolean): number;
  reset(): void;
}

function nameOf(sql: string | Statement): string {
  return typeof sql === "string" ? sql.trim().split(/\s+/).slice(0, 3).join(" ") : sql.name;
}

/**
 * `db` with every statement and transaction recorded (`log`), as PostgreSQL's xact_commit counts
 * them: an autocommit statement is a transaction, and so is each `transaction()` with all it ran.
 * LISTEN connections (`listen`) are not counted: they run no transaction per run.
 */
export function countingDatabase(db: Database): { db: Database; log: StatementLog } {
  const statements: CountedStatement[] = [];
  let nextTx = 0;
  // statements sent with COMMIT keep going with it (throughQueryable), as in production
  const counted = (runner: Queryable, tx: number | null): Queryable =>
    throughQueryable(
      runner,
      async <T>(sql: string | Statement, send: () => Promise<T>): Promise<T> => {
        const entry: CountedStatement = { name: nameOf(sql), tx, rows: 0 };
        statements.push(entry);
        const result = await send();
        entry.rows = (result as QueryResult<Row>).rowCount;
        return result;
      },
      { scripts: false },
    );
  const plain = counted(db, null);
  const wrapped: Database = {
    kind: db.kind,
    schema: db.schema,
    location: db.location,
    query: plain.query,
    execScript: plain.execScript,
    transaction: (fn) => {
      nextTx += 1;
      const id = nextTx;
      return db.transaction((tx) => fn(counted(tx, id)));
    },
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    close: () => db.close(),
  };
  const log: StatementLog = {
    statements,
    transactions(filter = () => true) {
      const seen = new Set<number>();
      let count = 0;
      for (const statement of statements) {
        if (!filter(statement)) continue;
        if (statement.tx === null) count += 1;
        else if (!seen.has(statement.tx)) {
          seen.add(statement.tx);
          count += 1;
        }
      }
      return count;
    },
    reset() {
      statements.splice(0);
    },
  };
  return { db: wrapped, log };
}
