import { MIGRATIONS_TABLE } from "../constants.js";
import { quoteIdentifier } from "./identifiers.js";

/** SQL of the migration runner for one schema; the schema is a validated, quoted identifier. */
export function migrationSql(schema: string) {
  const s = quoteIdentifier(schema);
  const table = `${s}.${MIGRATIONS_TABLE}`;
  return {
    lock: "SELECT pg_advisory_xact_lock(hashtext($1))",
    createSchema: `CREATE SCHEMA IF NOT EXISTS ${s}`,
    createTable: `CREATE TABLE IF NOT EXISTS ${table} (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`,
    tableExists: "SELECT to_regclass($1) IS NOT NULL AS exists",
    selectApplied: `SELECT version, name, checksum, applied_at::text AS applied_at FROM ${table} ORDER BY version`,
    insertApplied: `INSERT INTO ${table} (version, name, checksum) VALUES ($1, $2, $3)`,
    setSearchPath: `SET LOCAL search_path TO ${s}`,
    tableName: `${s}.${MIGRATIONS_TABLE}`,
  } as const;
}
