import { describe, expect, it } from "vitest";
import { quoteIdentifier, validateSchemaName } from "../../src/db/identifiers.js";
import { DevmindError } from "../../src/errors.js";

describe("schema names", () => {
  it.each(["devmind", "t_1", "_x", "a".repeat(63)])("accepts %s", (name) => {
    expect(validateSchemaName(name)).toBe(name);
    expect(quoteIdentifier(name)).toBe(`"${name}"`);
  });

  it.each(["", "Devmind", "1abc", "a-b", 'x"; DROP SCHEMA public; --', "a b", "pg_catalog", "a".repeat(64), "ümlaut"])(
    "refuses %j with SCHEMA_NAME_INVALID naming the variable",
    (name) => {
      let caught: unknown;
      try {
        validateSchemaName(name);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(DevmindError);
      expect((caught as DevmindError).code).toBe("SCHEMA_NAME_INVALID");
      expect((caught as DevmindError).kind).toBe("user");
      expect((caught as DevmindError).message).toContain("DEVMIND_DB_SCHEMA");
    },
  );
});
