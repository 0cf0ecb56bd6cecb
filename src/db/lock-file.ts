import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { DatabaseError } from "../errors.js";

/** What a lock file records about its holder. */
interface LockOwner {
  pid: number;
  host: string;
  token: string;
  startedAt: string;
  /** The holder is a `devmind serve` / `dev` listening here (`HeldLock.announce`). */
  url?: string;
  /** That server's local owner key: a caller presenting it acts as the owner of the database (`localOwnerGate`). */
  ownerKey?: string;
}

/** A held lock; `release()` removes the file if it is still ours. */
export interface HeldLock {
  readonly path: string;
  /**
   * Records in the file that the holder serves the HTTP API at `url`, with the server's local owner
   * key (replaced atomically: a reader sees the old or the new file; mode 0600, so only the user
   * who could open the database directly reads the key).
   */
  announce(url: string, ownerKey?: string): void;
  release(): void;
}

/** Who holds a lock file, as `readLockHolder` finds it. */
export type LockHolder =
  | { state: "free" }
  /** A live process on this host (or one on another host, which cannot be checked); `url` (and its local owner key) when it is a server. */
  | { state: "held"; pid: number; host: string; startedAt: string; url: string | null; path: string; ownerKey: string | null }
  /** The recorded process no longer exists on this host: the next opener takes the lock over. */
  | { state: "stale"; pid: number; host: string; startedAt: string; url: string | null; path: string };

/**
 * Reads who holds the lock file at `path` without taking it: a CLI command uses it to go through
 * the server holding an embedded database instead of failing with DATABASE_LOCKED.
 */
export function readLockHolder(path: string): LockHolder {
  const owner = readOwner(path);
  if (owner === "missing" || owner === "unreadable") return { state: "free" };
  const fields = { pid: owner.pid, host: owner.host, startedAt: owner.startedAt, url: owner.url ?? null, path };
  return isLive(owner) ? { state: "held", ...fields, ownerKey: owner.ownerKey ?? null } : { state: "stale", ...fields };
}

/**
 * Takes an exclusive lock file (created with O_EXCL) so that only one process opens an embedded
 * database directory. PGlite itself does not lock its files, and two processes writing one data
 * directory silently diverge. A lock left by a process that no longer exists on this host is
 * taken over; a live holder gives `DATABASE_LOCKED` naming its pid.
 */
export function acquireLockFile(path: string, what: string): HeldLock {
  const owner: LockOwner = { pid: process.pid, host: hostname(), token: randomUUID(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (tryCreate(path, owner)) return holdLock(path, owner);
    const existing = readOwner(path);
    if (existing === "missing") continue;
    if (existing !== "unreadable" && isLive(existing)) throw lockedError(path, what, existing);
    if (existing !== "unreadable" && existing.host !== owner.host) throw lockedError(path, what, existing);
    removeIfUnchanged(path, existing);
  }
  throw lockedError(path, what, readOwner(path));
}

function tryCreate(path: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  return true;
}

function readOwner(path: string): LockOwner | "missing" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    return "unreadable";
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockOwner>;
    if (typeof parsed.pid === "number" && typeof parsed.host === "string" && typeof parsed.token === "string") {
      return {
        pid: parsed.pid,
        host: parsed.host,
        token: parsed.token,
        startedAt: String(parsed.startedAt ?? ""),
        ...(typeof parsed.url === "string" ? { url: parsed.url } : {}),
        ...(typeof parsed.ownerKey === "string" && parsed.ownerKey !== "" ? { ownerKey: parsed.ownerKey } : {}),
      };
    }
  } catch {
    // a torn write of a crashed holder: treated as stale below
  }
  return "unreadable";
}

function isLive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeIfUnchanged(path: string, seen: LockOwner | "unreadable"): void {
  const now = readOwner(path);
  const same = seen === "unreadable" ? now === "unreadable" : now !== "missing" && now !== "unreadable" && now.token === seen.token;
  if (!same) return;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

function holdLock(path: string, owner: LockOwner): HeldLock {
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.removeListener("exit", release);
    const now = readOwner(path);
    if (now !== "missing" && now !== "unreadable" && now.token === owner.token) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
  };
  process.once("exit", release);
  const announce = (url: string, ownerKey?: string): void => {
    if (released) return;
    const staging = `${path}.${process.pid}.tmp`;
    // a fresh file (O_EXCL) of mode 0600: never a leftover someone else made, whose mode would stay
    rmSync(staging, { force: true });
    writeFileSync(staging, JSON.stringify({ ...owner, url, ...(ownerKey === undefined ? {} : { ownerKey }) }), { mode: 0o600, flag: "wx" });
    renameSync(staging, path);
  };
  return { path, announce, release };
}

function lockedError(path: string, what: string, owner: LockOwner | "missing" | "unreadable"): DatabaseError {
  const holder = typeof owner === "object" ? `process ${owner.pid} on ${owner.host} (since ${owner.startedAt}${owner.url === undefined ? "" : `, serving ${owner.url}`})` : "another process";
  return new DatabaseError(
    "DATABASE_LOCKED",
    `${what} is in use by ${holder}: only one process may open the embedded database at a time. ` +
      (typeof owner === "object" && owner.url !== undefined
        ? `It is a devmind server: \`devmind runs\`, \`show\`, \`events\`, \`approve\`, \`reject\`, \`resume\`, \`cancel\` and \`run --detach\` go through it; stop it to run this command, ` +
          `or set DATABASE_URL to share a PostgreSQL server between processes. `
        : `Stop that process, or set DATABASE_URL to share a PostgreSQL server between processes. `) +
      `If no such process exists, delete ${path}.`,
    { details: { lockFile: path, owner: typeof owner === "object" ? { pid: owner.pid, host: owner.host } : null } },
  );
}
