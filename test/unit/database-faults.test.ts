import { describe, expect, it } from "vitest";
import { classifyDriverError, databaseFaultOf, isDatabaseFault, toDatabaseFault } from "../../src/db/database-faults.js";
import { isQueryTimeout, queryTimeoutError } from "../../src/db/pg-cancel.js";
import { DatabaseError, DevmindError } from "../../src/errors.js";
import { Backoff } from "../../src/runtime/execution/backoff.js";

const withCode = (code: string, message = "boom"): Error => Object.assign(new Error(message), { code });

describe("classifyDriverError", () => {
  it.each([
    ["57P01", "terminating connection due to administrator command"],
    ["57P02", "terminating connection because of crash of another server process"],
    ["57P03", "the database system is starting up"],
    ["08006", "connection failure"],
    ["08003", "connection does not exist"],
    ["08001", "could not connect"],
    ["53300", "too many connections"],
    ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"],
    ["ECONNRESET", "read ECONNRESET"],
    ["EPIPE", "write EPIPE"],
    ["28P01", "password authentication failed"],
  ])("SQLSTATE / errno %s is unreachable", (code, message) => {
    expect(classifyDriverError(withCode(code, message))).toBe("unreachable");
  });

  it.each([
    "Connection terminated unexpectedly",
    "Connection terminated due to connection timeout",
    "timeout exceeded when trying to connect",
    // pg's query_timeout: a statement without an answer in time (PG_POOL_DEFAULTS.queryTimeoutMs)
    "Query read timeout",
    "Client has encountered a connection error and is not queryable",
    "PGlite is closed",
  ])("pg's code-less %j is unreachable", (message) => {
    expect(classifyDriverError(new Error(message))).toBe("unreachable");
  });

  it.each([
    ["53100", "could not extend file: No space left on device"],
    ["25006", "cannot execute INSERT in a read-only transaction"],
    ["42501", "permission denied for table runs"],
    ["53200", "out of memory"],
  ])("SQLSTATE %s is a storage failure", (code, message) => {
    expect(classifyDriverError(withCode(code, message))).toBe("storage");
  });

  it.each([
    ["23505", "duplicate key value violates unique constraint"],
    ["42P01", "relation does not exist"],
    ["22P02", "invalid input syntax for type uuid"],
    ["40001", "could not serialize access"],
  ])("SQLSTATE %s is not a database fault (a bug or a conflict the caller handles)", (code, message) => {
    expect(classifyDriverError(withCode(code, message))).toBeNull();
  });

  it("plain errors and non-errors are not faults", () => {
    expect(classifyDriverError(new TypeError("x is not a function"))).toBeNull();
    expect(classifyDriverError(undefined)).toBeNull();
    expect(classifyDriverError({ code: 42 })).toBeNull();
  });
});

describe("toDatabaseFault and databaseFaultOf", () => {
  it("wraps faults into DatabaseErrors with the location, never the password, and keeps the cause", () => {
    const driver = withCode("57P01", "terminating connection due to administrator command");
    const wrapped = toDatabaseFault(driver, "postgres://devmind:***@db/devmind") as DatabaseError;
    expect(wrapped).toBeInstanceOf(DatabaseError);
    expect(wrapped.code).toBe("DATABASE_UNREACHABLE");
    expect(wrapped.kind).toBe("system");
    expect(wrapped.message).toContain("postgres://devmind:***@db/devmind");
    expect(wrapped.details).toMatchObject({ cause: "57P01" });
    expect(wrapped.cause).toBe(driver);
    const full = toDatabaseFault(withCode("53100", "No space left on device"), "db") as DatabaseError;
    expect(full.code).toBe("DATABASE_WRITE_FAILED");
  });

  it("leaves other errors and devmind's own errors as they are", () => {
    const unique = withCode("23505");
    expect(toDatabaseFault(unique, "db")).toBe(unique);
    const own = new DevmindError("RUN_CONFLICT", "busy");
    expect(toDatabaseFault(own, "db")).toBe(own);
  });

  it("finds a fault through `cause` chains (LangGraph and callers wrap errors) and nowhere else", () => {
    const fault = toDatabaseFault(withCode("08006"), "db");
    expect(databaseFaultOf(new Error("step failed", { cause: new Error("write failed", { cause: fault }) }))).toBe("unreachable");
    expect(databaseFaultOf(toDatabaseFault(withCode("25006"), "db"))).toBe("storage");
    expect(isDatabaseFault(new DatabaseError("DATABASE_LOCKED", "held by 12"))).toBe(false);
    expect(isDatabaseFault(withCode("57P01"))).toBe(false);
  });
});

describe("Backoff", () => {
  it("doubles from the first delay up to the cap, jittered into [half, full], and resets", () => {
    const backoff = new Backoff({ firstMs: 100, maxMs: 1_000 });
    const ceilings = [100, 200, 400, 800, 1_000, 1_000];
    for (const ceiling of ceilings) {
      const delay = backoff.next();
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
    expect(backoff.attempts).toBe(ceilings.length);
    backoff.reset();
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });

  it("wait resolves false at once when aborted", async () => {
    const backoff = new Backoff({ firstMs: 60_000, maxMs: 60_000 });
    const abort = new AbortController();
    const waiting = backoff.wait(abort.signal);
    abort.abort();
    expect(await waiting).toBe(false);
  });
});

describe("a statement without an answer in time", () => {
  it("is recognised by pg's message only, and becomes DATABASE_UNREACHABLE with cause query_timeout, naming the bound", () => {
    const raw = new Error("Query read timeout");
    expect(isQueryTimeout(raw)).toBe(true);
    expect(isQueryTimeout(new Error("Query read timeout exceeded"))).toBe(false);
    expect(isQueryTimeout("Query read timeout")).toBe(false);
    const mapped = queryTimeoutError(raw, "postgres://u:***@db:5432/x", 60_000);
    expect(mapped).toMatchObject({ code: "DATABASE_UNREACHABLE", details: { location: "postgres://u:***@db:5432/x", cause: "query_timeout" } });
    expect(mapped.message).toMatch(/within 60000 ms/);
    expect(mapped.cause).toBe(raw);
    expect(databaseFaultOf(mapped)).toBe("unreachable");
  });
});
