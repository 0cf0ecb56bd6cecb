import { connect } from "node:net";
import type pg from "pg";
import { PG_POOL_DEFAULTS } from "../constants.js";
import { DatabaseError } from "../errors.js";

/** pg's message when a statement's `query_timeout` passed without an answer. */
const READ_TIMEOUT_MESSAGE = "Query read timeout";

/** CancelRequest's code in the startup packet (protocol 3.0, section "Canceling Requests in Progress"). */
const CANCEL_REQUEST_CODE = 80877102;

/** True when `error` is pg's "no answer within the statement's query_timeout". */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === READ_TIMEOUT_MESSAGE;
}

/**
 * The error a statement without an answer in time becomes: DATABASE_UNREACHABLE with cause
 * `query_timeout`, naming the bound, so callers wait it out as any other lost connection.
 */
export function queryTimeoutError(error: unknown, location: string, timeoutMs: number): DatabaseError {
  return new DatabaseError(
    "DATABASE_UNREACHABLE",
    `cannot reach PostgreSQL at ${location}: no answer to a statement within ${timeoutMs} ms; its connection was taken for dead and closed (PG_POOL_DEFAULTS.queryTimeoutMs)`,
    { details: { location, cause: "query_timeout" }, cause: error },
  );
}

/**
 * Asks the server to cancel what `client`'s backend runs (PostgreSQL's CancelRequest, on a short
 * connection of its own to the client's host), for a statement given up on: the backend may still
 * be running it, or waiting on a lock, when its client has gone. Best effort and bounded: over a
 * dead network it does not arrive, and the server ends the session when it finds the socket
 * closed. Never rejects.
 */
export function sendCancel(client: pg.Client | pg.PoolClient, timeoutMs: number = PG_POOL_DEFAULTS.cancelTimeoutMs): Promise<void> {
  const target = client as unknown as { processID: number | null; secretKey: number | null; host?: string; port?: number };
  if (target.processID === null || target.secretKey === null || target.host === undefined) return Promise.resolve();
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  packet.writeInt32BE(target.processID, 8);
  packet.writeInt32BE(target.secretKey, 12);
  return new Promise((resolve) => {
    const socket = target.host?.startsWith("/") === true ? connect(`${target.host}/.s.PGSQL.${target.port ?? 5432}`) : connect(target.port ?? 5432, target.host);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    timer.unref?.();
    socket.on("connect", () => socket.end(packet));
    socket.on("error", done);
    socket.on("close", done);
  });
}
