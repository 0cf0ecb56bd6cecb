import { validateSchemaName } from "./identifiers.js";
import type { Database, Queryable, QueryResult, Statement } from "./types.js";

/**
 * The same connections as `owner`, with another schema: several devmind schemas (tenants, test
 * isolates, a benchmark's fresh schemas) can share one pool or one embedded database.
 * `close()` on a view does nothing; close the owner. `listen` is the owner's: notification
 * channels are server-wide, not per schema.
 */
export function withSchema(owner: Database, schema: string): Database {
  const validated = validateSchemaName(schema);
  return {
    kind: owner.kind,
    schema: validated,
    location: owner.location,
    query: <R>(sql: string | Statement, values?: readonly unknown[]): Promise<QueryResult<R>> => owner.query<R>(sql, values),
    execScript: (sql: string) => owner.execScript(sql),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => owner.transaction(fn),
    listen: (channel: string, onPayload: (payload: string) => void) => owner.listen(channel, onPayload),
    close: async () => undefined,
  };
}
