import { SCHEMA_NAME_PATTERN } from "../constants.js";
import { DatabaseError } from "../errors.js";

/**
 * Checks that `schema` is a plain lower-case SQL identifier (letters, digits, `_`, at most 63
 * bytes, not starting with a digit, not a `pg_` system name) and returns it.
 *
 * Schema names end up in SQL text (they cannot be parameters), so this is the gate that keeps
 * identifiers from ever coming from raw input.
 */
export function validateSchemaName(schema: string): string {
  if (typeof schema !== "string" || !SCHEMA_NAME_PATTERN.test(schema) || schema.startsWith("pg_")) {
    throw new DatabaseError(
      "SCHEMA_NAME_INVALID",
      `invalid schema name ${JSON.stringify(schema)}: expected a lower-case SQL identifier ` +
        `matching ${SCHEMA_NAME_PATTERN} and not starting with "pg_" (set DEVMIND_DB_SCHEMA)`,
      { details: { schema } },
    );
  }
  return schema;
}

/** Double-quotes a validated identifier for use in SQL text. */
export function quoteIdentifier(identifier: string): string {
  return `"${validateSchemaName(identifier)}"`;
}
