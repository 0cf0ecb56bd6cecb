import { DatabaseError } from "../errors.js";
import type { Queryable } from "./types.js";

/** LISTEN/NOTIFY channel names are fixed lower-case identifiers chosen in code, never input. */
export const CHANNEL_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Checks that `channel` is a plain lower-case identifier (see CHANNEL_NAME_PATTERN) and returns
 * it. Channel names end up in `LISTEN "<name>"` text (they cannot be parameters), so this gate
 * keeps anything but a fixed identifier out of SQL.
 */
export function validateChannelName(channel: string): string {
  if (typeof channel !== "string" || !CHANNEL_NAME_PATTERN.test(channel)) {
    throw new DatabaseError("SCHEMA_NAME_INVALID", `invalid notification channel ${JSON.stringify(channel)}: expected an identifier matching ${CHANNEL_NAME_PATTERN}`, {
      details: { channel },
    });
  }
  return channel;
}

/**
 * Sends `payload` to every listener of `channel` (`Database.listen`), on PostgreSQL across
 * processes, on PGlite within the process. Transactional like any NOTIFY: run it through a
 * transaction's Queryable and it is delivered only on commit. Identical notifications within one
 * transaction are delivered once, so listeners must treat a notification as "look again", not as
 * a count.
 */
export async function notify(db: Queryable, channel: string, payload: string): Promise<void> {
  await db.query("SELECT pg_notify($1, $2)", [validateChannelName(channel), payload]);
}
