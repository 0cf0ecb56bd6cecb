import { quoteIdentifier } from "../src/db/identifiers.js";

/** Runs one SQL statement; both a `pg.Pool` and a devmind `Database` fit. */
export type RunQuery = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/** Size and row count of one table, TOAST and indexes included. */
export interface TableFootprint {
  table: string;
  bytes: number;
  rows: number;
}

/** What a saver's tables occupy after the workload (see `SAVER_TABLES_FILTER`), summed. */
export interface SchemaFootprint {
  totalBytes: number;
  tables: TableFootprint[];
}

/**
 * The tables a saver comparison measures: the checkpoint tables and the migration bookkeeping, on
 * both sides (ours: checkpoints, checkpoint_blobs, checkpoint_writes, schema_migrations; the
 * official saver: the same three plus checkpoint_migrations). devmind's schema also holds the run
 * queue, events, threads and attachments, which the plain saver has no counterpart for and which
 * these benches leave empty; counting their empty indexes would compare schemas, not savers.
 */
export const SAVER_TABLES_FILTER = `(c.relname LIKE 'checkpoint%' OR c.relname = 'schema_migrations')`;

const TABLE_SIZES = `
  SELECT c.relname AS name, pg_total_relation_size(c.oid)::bigint AS bytes
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND ${SAVER_TABLES_FILTER}
  ORDER BY c.relname`;

/**
 * Measures the saver tables of `schema` with `pg_total_relation_size` (heap + TOAST + indexes) per table and counts
 * each table's rows. No VACUUM first: this is what the saver leaves behind as it runs.
 */
export async function measureSchema(query: RunQuery, schema: string): Promise<SchemaFootprint> {
  const sizes = (await query(TABLE_SIZES, [schema])).rows as { name: string; bytes: string | number }[];
  const tables: TableFootprint[] = [];
  for (const { name, bytes } of sizes) {
    // Table names come from the catalog and are checked as identifiers before they reach SQL text.
    const counted = (await query(`SELECT count(*)::int AS n FROM ${quoteIdentifier(schema)}.${quoteIdentifier(name)}`)).rows as { n: number }[];
    tables.push({ table: name, bytes: Number(bytes), rows: Number(counted[0]?.n ?? 0) });
  }
  return { totalBytes: tables.reduce((sum, table) => sum + table.bytes, 0), tables };
}

/** Drops a bench schema and everything in it. */
export async function dropSchema(query: RunQuery, schema: string): Promise<void> {
  await query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
}
