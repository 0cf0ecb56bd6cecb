import { quoteIdentifier } from "../src/db/identifiers.js";
import { SAVER_TABLES_FILTER, type RunQuery } from "./footprint.js";

/** Stored bytes of one table's rows for one channel (or the whole table when it has no channel column). */
export interface ChannelFootprint {
  table: string;
  /** The rows' `channel` value; "" for tables without one (checkpoints, migration bookkeeping). */
  channel: string;
  rows: number;
  /**
   * Sum of `pg_column_size` over every column of those rows: the values as stored (after pglz
   * compression; TOASTed values at their stored size), without tuple headers, page slack or
   * indexes. Use it to see which channel dominates; `measureSchema` gives the real total.
   */
  valueBytes: number;
  /** The same values uncompressed: `octet_length` of text and bytea, of the text form of jsonb. */
  rawBytes: number;
}

/** Where one table's bytes are: main heap, TOAST (heap and index), indexes. */
export interface TableSplit {
  table: string;
  heapBytes: number;
  toastBytes: number;
  indexBytes: number;
}

const TABLES = `
  SELECT c.relname AS name,
         pg_relation_size(c.oid)::bigint AS heap,
         (CASE WHEN c.reltoastrelid = 0 THEN 0 ELSE pg_total_relation_size(c.reltoastrelid) END)::bigint AS toast,
         pg_indexes_size(c.oid)::bigint AS indexes
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND ${SAVER_TABLES_FILTER} ORDER BY c.relname`;

const COLUMNS = `
  SELECT column_name AS name, data_type AS type FROM information_schema.columns
  WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`;

/** Heap / TOAST / index bytes of every table of `schema` (they add up to `pg_total_relation_size`). */
export async function tableSplits(query: RunQuery, schema: string): Promise<TableSplit[]> {
  const rows = (await query(TABLES, [schema])).rows as { name: string; heap: string; toast: string; indexes: string }[];
  return rows.map((r) => ({ table: r.name, heapBytes: Number(r.heap), toastBytes: Number(r.toast), indexBytes: Number(r.indexes) }));
}

function rawLength(column: string, type: string): string {
  const quoted = quoteIdentifier(column);
  if (type === "text" || type === "bytea" || type === "character varying") return `coalesce(octet_length(${quoted}), 0)`;
  if (type === "jsonb" || type === "json") return `coalesce(octet_length(${quoted}::text), 0)`;
  return `coalesce(pg_column_size(${quoted}), 0)`;
}

/**
 * Breaks every table of `schema` down by its `channel` column (when it has one): rows, stored and
 * raw value bytes per (table, channel), largest stored first. Works on both savers' schemas,
 * whatever their column names, because the columns come from the catalog.
 */
export async function channelBreakdown(query: RunQuery, schema: string): Promise<ChannelFootprint[]> {
  const tables = await tableSplits(query, schema);
  const out: ChannelFootprint[] = [];
  for (const { table } of tables) {
    const columns = (await query(COLUMNS, [schema, table])).rows as { name: string; type: string }[];
    if (columns.length === 0) continue;
    // identifiers come from the catalog and pass quoteIdentifier's check before reaching SQL text
    const stored = columns.map((c) => `coalesce(pg_column_size(${quoteIdentifier(c.name)}), 0)`).join(" + ");
    const raw = columns.map((c) => rawLength(c.name, c.type)).join(" + ");
    const channel = columns.some((c) => c.name === "channel") ? quoteIdentifier("channel") : "''";
    const rows = (
      await query(
        `SELECT ${channel} AS channel, count(*)::int AS n, coalesce(sum(${stored}), 0)::bigint AS stored, coalesce(sum(${raw}), 0)::bigint AS raw
         FROM ${quoteIdentifier(schema)}.${quoteIdentifier(table)} GROUP BY 1`,
      )
    ).rows as { channel: string; n: number; stored: string; raw: string }[];
    for (const row of rows) out.push({ table, channel: row.channel, rows: Number(row.n), valueBytes: Number(row.stored), rawBytes: Number(row.raw) });
  }
  return out.sort((a, b) => b.valueBytes - a.valueBytes);
}
