import { STORE_VECTOR_LOCK_PREFIX } from "../constants.js";
import { validateSchemaName } from "../db/identifiers.js";
import type { Database } from "../db/types.js";
import { ConfigError, hasErrorCode } from "../errors.js";
import type { storeSql } from "./store-sql.js";

/**
 * Whether the store ranks searches by embeddings:
 * `off` no index configured (a `query` is ignored, as in LangGraph's in-memory store);
 * `pgvector` vectors stored and ranked with the pgvector extension (PostgreSQL with the extension
 * installable, or PGlite opened with `vector: true`);
 * `unavailable` an index is configured but the extension cannot be loaded: a search with a
 * `query` returns the items its namespace and filter select, unranked (`score` undefined), and
 * `reason` says why.
 */
export type SemanticSearchStatus =
  | { status: "off" }
  | { status: "pgvector"; extensionSchema: string; dims: number }
  | { status: "unavailable"; reason: string };

/**
 * Makes vector search ready for `dims` dimensions: loads pgvector (`CREATE EXTENSION IF NOT
 * EXISTS vector`) and creates the vector table, under an advisory lock so processes starting
 * together do not race. A missing or forbidden extension is `unavailable`, not an error; a
 * database that is away is thrown (the next call tries again); an existing vector table of other
 * dimensions is a CONFIG_INVALID error.
 */
export async function prepareVectors(db: Database, sql: ReturnType<typeof storeSql>, dims: number): Promise<SemanticSearchStatus> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) {
    throw new ConfigError(`index.dims must be an integer from 1 to 16000, got ${JSON.stringify(dims)}`, { dims });
  }
  let extensionSchema: string;
  try {
    extensionSchema = await db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`${STORE_VECTOR_LOCK_PREFIX}${db.schema}`]);
      let found = (await tx.query<{ schema: string }>(sql.vectorExtension)).rows[0]?.schema;
      if (found === undefined) {
        await tx.query("CREATE EXTENSION IF NOT EXISTS vector");
        found = (await tx.query<{ schema: string }>(sql.vectorExtension)).rows[0]?.schema;
      }
      if (found === undefined) throw new Error("the vector extension did not register");
      const schema = validateSchemaName(found);
      // an extension created earlier but not loaded now (PGlite reopened without `vector: true`) fails here
      await tx.query(`SELECT '[1]'::"${schema}".vector`);
      await tx.query(sql.createVectors(schema, dims));
      return schema;
    });
  } catch (error) {
    if (hasErrorCode(error, "DATABASE_UNREACHABLE")) throw error;
    return { status: "unavailable", reason: error instanceof Error ? error.message : String(error) };
  }
  const column = (await db.query<{ type: string }>(sql.vectorColumn, [sql.vectorsTable])).rows[0]?.type ?? "";
  const stored = /vector\((\d+)\)$/.exec(column)?.[1];
  if (stored !== undefined && Number(stored) !== dims) {
    throw new ConfigError(`the store's vectors have ${stored} dimensions but index.dims is ${dims}; use another schema or drop ${sql.vectorsTable}`, { stored: Number(stored), dims });
  }
  return { status: "pgvector", extensionSchema, dims };
}

/** pgvector's text form of a vector, checked against the configured dimensions. */
export function vectorText(vector: readonly number[], dims: number): string {
  if (vector.length !== dims || !vector.every((component) => Number.isFinite(component))) {
    throw new ConfigError(`the embeddings returned a vector of ${vector.length} dimensions (or a non-finite component); index.dims is ${dims}`, { length: vector.length, dims });
  }
  return `[${vector.join(",")}]`;
}
