import { RUNTIME_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import { throughQueryable, type Database, type Queryable, type Statement } from "../../db/types.js";
import { faultSummary } from "./fault-recovery.js";

/** What one process tells the others of its writes (STORAGE_CHANNEL): refused for want of storage, or stored again. */
export interface StorageNotice {
  state: "failing" | "ok";
  /** The devmind schema (channels are per database: other deployments on it are ignored). */
  schema: string;
  /** The process that saw it. */
  process: string;
  error?: { code: string; message: string } | undefined;
}

interface Failure {
  at: number;
  error: { code: string; message: string };
}

/**
 * The last write refused for want of storage (a full disk, a read-only server, a revoked
 * permission) by any devmind process of the deployment, for `/health`: this process's own, and
 * those the others announced (`heard`, over STORAGE_CHANNEL). A full disk often refuses only
 * writes that need new space (a checkpoint, a new event page) while small inserts and in-place
 * updates (the health probe's) still fit, so this process's failure stands until every kind of
 * write refused lately (see `stored`) has succeeded here, and another's until it announces the same — for RUNTIME_DEFAULTS.healthWriteFailureMs after the last failure at most.
 * So `/health` does not flip back to ok while the disk stays full because a small write fit.
 */
export class WriteFaults {
  /** This process's last refused write, standing until every kind of write refused since has succeeded here. */
  private local: Failure | null = null;
  /** The last refusal another process announced, standing until one announces storage works again. */
  private remote: Failure | null = null;
  /** Kinds of writes (see `kindOf`) refused since storage last worked here. */
  private readonly refused = new Set<string>();
  /** The inserts (by table) and probes among them, each with when it was last refused. */
  private readonly needSpace = new Map<string, number>();
  private announcedAt = 0;

  /**
   * @param announce told when this process sees storage fail (at most every
   *   RUNTIME_DEFAULTS.healthAnnounceMs) and when it sees it work again after a failure: the
   *   runtime sends it to every process (a NOTIFY).
   */
  constructor(private readonly announce: (state: "failing" | "ok", error?: { code: string; message: string }) => void = () => undefined) {}

  /** Notes a failed statement or transaction if it failed for want of storage (`sql`: the statement, when known). */
  record(error: unknown, sql?: string | Statement): void {
    if (databaseFaultOf(error) !== "storage") return;
    const summary = faultSummary(error);
    this.local = { at: Date.now(), error: summary };
    const kind = sql === undefined ? null : kindOf(sql);
    if (kind !== null) {
      this.refused.add(kind);
      if (takesSpace(kind)) this.needSpace.set(kind, Date.now());
    }
    if (Date.now() - this.announcedAt >= RUNTIME_DEFAULTS.healthAnnounceMs) {
      this.announcedAt = Date.now();
      this.announce("failing", summary);
    }
  }

  /**
   * `sql` succeeded. A full disk takes small writes and refuses big ones, so one success proves
   * little: storage works again when a kind of write that was refused succeeds and every insert
   * (by table) and probe refused in the last RUNTIME_DEFAULTS.healthRefusedKindMs has succeeded
   * since (one refused once and never tried again stops counting then). A failure seen without
   * its statement only: any insert will do.
   */
  stored(sql: string | Statement): void {
    if (this.local === null) return;
    const kind = kindOf(sql);
    if (kind === null) return;
    this.needSpace.delete(kind);
    const since = Date.now() - RUNTIME_DEFAULTS.healthRefusedKindMs;
    for (const [other, at] of this.needSpace) if (at < since) this.needSpace.delete(other);
    const proves = this.refused.size === 0 ? takesSpace(kind) && kind !== "probe" : this.refused.has(kind);
    if (!proves || this.needSpace.size > 0) return;
    this.local = null;
    this.refused.clear();
    this.announcedAt = 0;
    this.announce("ok");
  }

  /** What another process announced (STORAGE_CHANNEL). */
  heard(notice: Pick<StorageNotice, "state" | "error">): void {
    if (notice.state === "ok") {
      this.remote = null;
      return;
    }
    this.remote = { at: Date.now(), error: notice.error ?? { code: "DATABASE_WRITE_FAILED", message: "another devmind process saw the database refuse a write" } };
  }

  /** The last failure (this process's or another's) if it still stands and happened within `windowMs`, else null. */
  recent(windowMs: number = RUNTIME_DEFAULTS.healthWriteFailureMs): { at: string; error: { code: string; message: string } } | null {
    const standing = [this.local, this.remote].filter((failure): failure is Failure => failure !== null && Date.now() - failure.at <= windowMs);
    const last = standing.sort((a, b) => b.at - a.at)[0];
    return last === undefined ? null : { at: new Date(last.at).toISOString(), error: last.error };
  }
}

const INSERT_TABLE = /\bINSERT\s+INTO\s+(?:"?[\w$]+"?\.)?"?([\w$]+)"?/i;
const kindCache = new WeakMap<Statement, string>();

/**
 * The kind of a write, for "did a write of a kind that was refused succeed": `probe` for the
 * health probe, the table an insert first goes to, else the statement's name; null for an
 * unnamed statement that inserts nothing (a read, most likely).
 */
function takesSpace(kind: string): boolean {
  return kind === "probe" || !kind.startsWith("dm_");
}

function kindOf(sql: string | Statement): string | null {
  if (typeof sql === "string") return INSERTS.test(sql) ? (INSERT_TABLE.exec(sql)?.[1] ?? sql) : null;
  let kind = kindCache.get(sql);
  if (kind === undefined) {
    kind = sql.name.includes(PROBE_STATEMENT) ? "probe" : INSERTS.test(sql.text) ? (INSERT_TABLE.exec(sql.text)?.[1] ?? sql.name) : sql.name;
    kindCache.set(sql, kind);
  }
  return kind;
}

/** The health probe's own statement: its success proves nothing about space (an in-place update). */
const PROBE_STATEMENT = "health_probe_write";
const INSERTS = /\bINSERT\s+INTO\b/i;
/**
 * `db` with every statement and transaction that fails for want of storage noted in `faults`,
 * and every successful insert or probe (maybe space again); everything else passes through unchanged.
 */
export function observeWriteFaults(db: Database, faults: WriteFaults): Database {
  const noted = <T>(sql: string | Statement, promise: Promise<T>): Promise<T> =>
    promise.then(
      (value) => {
        faults.stored(sql);
        return value;
      },
      (error: unknown) => {
        faults.record(error, sql);
        throw error;
      },
    );
  const wrap = (target: Queryable): Queryable => throughQueryable(target, (sql, send) => noted(sql, send()));
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "query") return (sql: string | Statement, values?: readonly unknown[]) => noted(sql, target.query(sql, values));
      if (key === "execScript") return (sql: string) => noted(sql, target.execScript(sql));
      if (key === "transaction") {
        return <T>(fn: (tx: Queryable) => Promise<T>) =>
          target.transaction((tx) => fn(wrap(tx))).catch((error: unknown) => {
            faults.record(error);
            throw error;
          });
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
