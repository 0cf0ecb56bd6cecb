import { STORAGE_CHANNEL } from "../../constants.js";
import { notify } from "../../db/channels.js";
import { DevmindError } from "../../errors.js";
import type { Database } from "../../db/types.js";
import type { StorageNotice, WriteFaults } from "./write-faults.js";

/**
 * Makes `/health` answer for the deployment: what one process learns of its writes — refused
 * for want of storage, or stored again — goes to every other process of the same schema over
 * STORAGE_CHANNEL (NOTIFY; PostgreSQL only, where processes share a database), and what they
 * announce lands in this process's `WriteFaults`. Behind a transaction pooler without a direct
 * URL there is no LISTEN: each process then reports what it saw itself.
 */
export class StorageNotices {
  private faults: WriteFaults | null = null;
  private listening: Promise<unknown> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  /** `db`: the database unobserved (a failing announcement must not be recorded as a write fault). */
  constructor(
    private readonly db: Database,
    private readonly processId: string,
  ) {}

  /** Where heard notices go. */
  attach(faults: WriteFaults): void {
    this.faults = faults;
  }

  /** Tells the other processes (best effort: a database that refuses it is what they will see themselves). */
  announce(state: "failing" | "ok", error?: { code: string; message: string }): void {
    if (this.db.kind !== "postgres") return;
    const notice: StorageNotice = { state, schema: this.db.schema, process: this.processId, ...(error === undefined ? {} : { error: { code: error.code, message: error.message.slice(0, 500) } }) };
    void notify(this.db, STORAGE_CHANNEL, JSON.stringify(notice)).catch(() => undefined);
  }

  /** Starts hearing the other processes (once; PostgreSQL only). */
  listen(): Promise<unknown> {
    if (this.db.kind !== "postgres") return Promise.resolve();
    // a database that cannot LISTEN (a pooler, logged once by the database) is not asked again;
    // a fault is: the next look at /health tries once more
    this.listening ??= this.db
      .listen(STORAGE_CHANNEL, (payload) => this.hear(payload))
      .then((unlisten) => (this.unlisten = unlisten))
      .catch((error: unknown) => {
        if (!(error instanceof DevmindError && error.code === "DATABASE_LISTEN_UNAVAILABLE")) this.listening = null;
      });
    return this.listening;
  }

  async close(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.().catch(() => undefined);
  }

  private hear(payload: string): void {
    let notice: Partial<StorageNotice>;
    try {
      notice = JSON.parse(payload) as Partial<StorageNotice>;
    } catch {
      return;
    }
    if (notice.schema !== this.db.schema || notice.process === this.processId) return;
    if (notice.state !== "failing" && notice.state !== "ok") return;
    const error = notice.error !== undefined && typeof notice.error.code === "string" && typeof notice.error.message === "string" ? notice.error : undefined;
    this.faults?.heard({ state: notice.state, error });
  }
}
