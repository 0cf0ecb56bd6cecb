import { createHash, randomInt } from "node:crypto";
import type { Database } from "../../db/types.js";
import type { SessionLock } from "../../db/session-lock.js";
import type { Logger } from "../../logger.js";
import { livenessSql } from "./liveness-sql.js";

/**
 * The advisory-lock namespace (first key) of a devmind schema: a stable non-negative int32 from
 * its name, so deployments on several schemas of one database never see each other's processes.
 */
export function livenessNamespace(schema: string): number {
  return createHash("sha256").update(`devmind-liveness:${schema}`).digest().readUInt32BE(0) & 0x7fffffff;
}

/** How this process shows it is alive: a held session lock, or only its leases (no session to hold one). */
export interface Liveness {
  readonly mode: "lock" | "lease";
  close(): Promise<void>;
}

/**
 * Makes this process's death visible through the database (PostgreSQL): it takes a session-level
 * advisory lock on a connection of its own and registers `processId` (the prefix of every lease
 * owner it uses) with the lock's key in `live_processes`. When the process dies the server frees
 * the lock, and any worker's reaper (`expireGoneOwners`) recovers its runs at once. Behind a
 * transaction pooler without DEVMIND_DATABASE_DIRECT_URL no session can hold a lock: the process
 * falls back to its leases and says so once in the log. PGlite: nothing to do (one process; its
 * data-directory lock already tells a dead owner).
 */
export async function startLiveness(db: Database, processId: string, logger: Logger): Promise<Liveness> {
  const lease: Liveness = { mode: "lease", close: async () => undefined };
  if (db.kind !== "postgres") return lease;
  // loaded only on PostgreSQL: the embedded database never loads the driver (pg)
  const { SessionLock: Lock } = await import("../../db/session-lock.js");
  const sql = livenessSql(db.schema);
  const namespace = livenessNamespace(db.schema);
  const fallback = (why: string): Liveness => {
    logger.info(
      { event: "database.liveness_lease", why },
      `crash detection falls back to the lease: ${why}; a dead process's runs are recovered when their leases expire (DEVMIND_LEASE_MS), not at once`,
    );
    return lease;
  };
  const target = db.sessionTarget?.() ?? null;
  if (target === null) return fallback("DATABASE_URL goes through a transaction pooler and DEVMIND_DATABASE_DIRECT_URL is not set (no session can hold a lock)");
  let taken: Awaited<ReturnType<typeof SessionLock.take>>;
  let key = 0;
  const register = async (): Promise<void> => {
    await db.transaction(async (tx) => {
      await tx.query(sql.forgetKey, [processId, key]);
      await tx.query(sql.register, [processId, key]);
    });
  };
  try {
    taken = await Lock.take(target, namespace, () => randomInt(0, 0x7fffffff), logger, register);
  } catch (error) {
    return fallback(`the liveness connection to ${target.printable} failed (${error instanceof Error ? error.message : String(error)})`);
  }
  if (taken.lock === null) return fallback(taken.why === "pooler" ? `${target.printable} goes through a pooler (no session can hold a lock)` : "no free lock key was found");
  const lock = taken.lock;
  key = lock.key;
  try {
    await register();
  } catch (error) {
    await lock.close();
    return fallback(`registering the process failed (${error instanceof Error ? error.message : String(error)})`);
  }
  logger.debug({ event: "liveness.held", process: processId, key }, "liveness lock held: this process's death is seen at once");
  return {
    mode: "lock",
    async close() {
      await db.query(sql.unregister, [processId]).catch(() => undefined);
      await lock.close();
    },
  };
}

/** A running run whose owner process is gone (its lock free), its lease ended for the reaper. */
export interface GoneOwnerRun {
  run_id: string;
  owner: string;
}

/**
 * Ends the lease of every running run whose owner process — another than `processId` — is gone (registered, lock free), so
 * `requeueExpired` recovers it now; forgets gone processes that own no running run. One
 * statement; nothing on PGlite.
 */
export async function expireGoneOwners(db: Database, processId: string): Promise<GoneOwnerRun[]> {
  if (db.kind !== "postgres") return [];
  const result = await db.query<GoneOwnerRun>(livenessSql(db.schema).expireGoneOwners, [livenessNamespace(db.schema), processId]);
  return result.rows;
}

/** A running run of another process as a starting process finds it, and when it will be taken. */
export interface FoundRunning {
  run_id: string;
  owner: string | null;
  lease_expires_at: string | null;
  /** `now`: its owner is gone; `at_lease_expiry`: its owner shows no lock (lease only); `not`: its owner is alive. */
  taken: "now" | "at_lease_expiry" | "not";
}

/** The running runs of other processes and when each will be taken (for the log of a starting process). */
export async function findRunning(db: Database, processId: string): Promise<FoundRunning[]> {
  if (db.kind !== "postgres") return [];
  const result = await db.query<{ run_id: string; owner: string | null; lease_expires_at: string | null; tracked: boolean; gone: boolean }>(livenessSql(db.schema).running, [
    livenessNamespace(db.schema),
    processId,
  ]);
  return result.rows.map((row) => ({
    run_id: row.run_id,
    owner: row.owner,
    lease_expires_at: row.lease_expires_at,
    taken: row.gone ? "now" : row.tracked ? "not" : "at_lease_expiry",
  }));
}
