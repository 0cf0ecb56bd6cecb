import { DatabaseError, DevmindError } from "../errors.js";

/**
 * What kind of database fault an error is, if any:
 * - `unreachable`: the server is away or the connection broke (restart, failover, network, a
 *   pool that cannot connect in time). It comes back by itself.
 * - `storage`: the server answers but refuses to store (disk full, read-only, permission
 *   revoked). It lasts until an operator acts.
 */
export type DatabaseFaultKind = "unreachable" | "storage";

/**
 * node / libpq error codes and SQLSTATEs meaning "cannot talk to the server now": network errors,
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, class 08 (connection
 * exception), 53300 too_many_connections, 58030 io_error reading; and the login failures that
 * make a server unusable to us (28P01, 28000 bad credentials, 3D000 no such database).
 */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "58030",
  "28P01",
  "28000",
  "3D000",
]);

/**
 * SQLSTATEs meaning "the server refuses to store": 53100 disk_full, 53000 insufficient_resources,
 * 53200 out_of_memory, 25006 read_only_sql_transaction, 42501 insufficient_privilege, 58P01
 * undefined_file and XX001/XX002 data or index corruption found on write.
 */
const STORAGE_CODES = new Set(["53100", "53000", "53200", "25006", "42501", "58P01", "XX001", "XX002"]);

/** Messages of `pg` / `pg-pool` (no code) that mean the connection is gone or never came. */
const UNREACHABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /Connection terminated/i,
  /Query read timeout/i,
  /connection timeout/i,
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /Cannot use a pool after calling end on the pool/i,
  /terminating connection/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /server closed the connection unexpectedly/i,
  /read ECONNRESET|write EPIPE|socket hang up/i,
  /PGlite is closed/i,
];

/**
 * Classifies a raw driver error (pg, pg-pool, PGlite, node's net): `unreachable`, `storage`, or
 * null for everything else (a bug, a constraint, bad SQL), by SQLSTATE / errno first and by the
 * driver's code-less messages second.
 */
export function classifyDriverError(error: unknown): DatabaseFaultKind | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (UNREACHABLE_CODES.has(code) || code.startsWith("08")) return "unreachable";
    if (STORAGE_CODES.has(code)) return "storage";
  }
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "";
  if (UNREACHABLE_MESSAGES.some((pattern) => pattern.test(message))) return "unreachable";
  return null;
}

/**
 * Wraps a driver error that is a database fault into the DatabaseError callers branch on —
 * DATABASE_UNREACHABLE or DATABASE_WRITE_FAILED — naming `location` (printable, no password);
 * any other error passes through unchanged.
 */
export function toDatabaseFault(error: unknown, location: string): unknown {
  if (error instanceof DevmindError) return error;
  const kind = classifyDriverError(error);
  if (kind === null) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const cause = typeof code === "string" ? code : kind === "unreachable" ? "connection" : "storage";
  if (kind === "unreachable") {
    return new DatabaseError("DATABASE_UNREACHABLE", `cannot reach PostgreSQL at ${location}: ${message}`, { details: { location, cause }, cause: error });
  }
  return new DatabaseError("DATABASE_WRITE_FAILED", `the database at ${location} refused to store data: ${message}`, { details: { location, cause }, cause: error });
}

/**
 * The fault kind of an error raised through devmind's database seam (a DatabaseError with
 * DATABASE_UNREACHABLE or DATABASE_WRITE_FAILED, possibly wrapped as a `cause` by LangGraph or a
 * caller), or null. A run that fails on one of these is not failed: its worker waits for the
 * database and continues it.
 */
export function databaseFaultOf(error: unknown): DatabaseFaultKind | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof DatabaseError) {
      if (current.code === "DATABASE_UNREACHABLE") return "unreachable";
      if (current.code === "DATABASE_WRITE_FAILED") return "storage";
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** True when `error` is a database fault (see `databaseFaultOf`). */
export function isDatabaseFault(error: unknown): boolean {
  return databaseFaultOf(error) !== null;
}
