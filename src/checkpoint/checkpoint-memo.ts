import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointAddress } from "./config.js";
import type { TupleRow } from "./tuple-rows.js";
import type { WriteRow } from "./write-queue.js";

/**
 * Key of `config.configurable` carrying a `CheckpointMemo` (keys starting with `__` never reach
 * checkpoint metadata).
 */
export const CHECKPOINT_MEMO_KEY = "__devmind_checkpoint_memo";

/** A stored value as the tuple queries return it. */
interface StoredValue {
  version: string;
  type: string | null;
  json: string | null;
  bytes: Uint8Array | null;
}

/** What the memo knows: the newest root checkpoint of its thread, as `get_tuple_latest` would read it. */
interface Known {
  /** The checkpoint's row (kind `c`), or null: the thread has no checkpoint. */
  head: TupleRow | null;
  /** Its channels' stored values, by channel (a row of kind `b` each). */
  values: Map<string, StoredValue>;
  /** Its pending writes, by task id and idx (a row of kind `w` each). */
  writes: Map<string, TupleRow>;
  /** Writes stored for newer checkpoints whose put has not been stored yet, by checkpoint id. */
  early: Map<string, Map<string, TupleRow>>;
}

/**
 * What one attempt of a run knows of its thread's newest root checkpoint, so the saver answers
 * `getTuple` for it without a read: seeded by the read its claim made (in the claim's transaction),
 * then kept up to date by the saver with every checkpoint and pending write the attempt stores
 * under its lease (no one else writes the thread meanwhile: the lease fences every writer, and a
 * thread runs one run at a time). It holds the values as stored (encoded), so a read from it is
 * the same as a read from the database, decoded afresh. Anything it cannot follow (a write that
 * failed, a seed with sends of a pre-v4 parent) makes it forget: reads go to the database again.
 */
export class CheckpointMemo {
  private known: Known | null = null;

  constructor(readonly threadId: string) {}

  /** Seeds it with the rows of `get_tuple_latest` for (thread, root namespace): none, the thread has no checkpoint. */
  seed(rows: readonly TupleRow[]): void {
    const known: Known = { head: null, values: new Map(), writes: new Map(), early: new Map() };
    for (const row of rows) {
      if (row.kind === "c") known.head = row;
      else if (row.kind === "b") known.values.set(row.a, { version: row.b, type: row.type, json: row.json, bytes: row.bytes });
      else if (row.kind === "w") known.writes.set(writeKey(row.a, Number(row.idx)), row);
      else return this.forget();
    }
    if (rows.length > 0 && known.head === null) return this.forget();
    this.known = known;
  }

  /** Whether `getTuple` of `address` (the newest checkpoint of the root namespace) may be answered from it. */
  answers(address: { threadId: string; namespace: string; checkpointId?: string | undefined }): boolean {
    return this.known !== null && this.covers(address) && (address.checkpointId === undefined || address.checkpointId === this.known.head?.c);
  }

  /** The rows `get_tuple_latest` would return now (empty: no checkpoint); call only when `answers`. */
  rows(): TupleRow[] {
    const known = this.known;
    if (known === null || known.head === null) return [];
    const rows: TupleRow[] = [known.head];
    for (const [channel, value] of known.values) rows.push({ kind: "b", ord: 0, a: channel, b: value.version, c: null, idx: null, type: value.type, json: value.json, bytes: value.bytes, extra: null });
    rows.push(...known.writes.values());
    return rows;
  }

  /**
   * A checkpoint of this thread was stored: `checkpointJson` and `metadataJson` as stored, `stored`
   * the values its statement stored (channel, version, type, json, bytes), `versions` its channel
   * versions, `present` whether a channel has a value in it.
   */
  notePut(
    address: CheckpointAddress,
    id: string,
    checkpointJson: string,
    metadataJson: string,
    versions: Record<string, unknown>,
    stored: readonly [string, string, string, string | null, Uint8Array | null][],
    present: (channel: string) => boolean,
  ): void {
    if (this.known === null || !this.covers(address)) return;
    const values = new Map<string, StoredValue>();
    const fresh = new Map(stored.map(([channel, version, type, json, bytes]) => [channel, { version, type, json, bytes }]));
    for (const [channel, raw] of Object.entries(versions)) {
      const version = String(raw);
      const value = fresh.get(channel) ?? this.known.values.get(channel);
      if (value !== undefined && value.version === version) values.set(channel, value);
      // a value present at a version this memo never saw stored: it cannot say what a read returns
      else if (present(channel)) return this.forget();
    }
    const head: TupleRow = { kind: "c", ord: 0, a: address.threadId, b: address.namespace, c: id, idx: null, type: address.checkpointId ?? null, json: checkpointJson, bytes: null, extra: metadataJson };
    const early = new Map([...this.known.early].filter(([checkpointId]) => checkpointId > id));
    this.known = { head, values, writes: this.known.early.get(id) ?? new Map(), early };
  }

  /** A task's writes to checkpoint `address.checkpointId` were stored (`special`: they replace rows of the same idx, else the first stored stays). */
  noteWrites(address: CheckpointAddress & { checkpointId: string }, taskId: string, taskPath: string, rows: readonly WriteRow[], special: boolean): void {
    const known = this.known;
    if (known === null || !this.covers(address)) return;
    let writes: Map<string, TupleRow> | undefined;
    if (known.head?.c === address.checkpointId) writes = known.writes;
    else if (known.head === null || (known.head.c ?? "") < address.checkpointId) {
      // LangGraph runs a step's tasks while its checkpoint's put still waits for the one before:
      // their writes may be stored first, and belong to that checkpoint once it is
      writes = known.early.get(address.checkpointId) ?? new Map<string, TupleRow>();
      known.early.set(address.checkpointId, writes);
    } else return;
    for (const [idx, channel, type, json, bytes] of rows) {
      const key = writeKey(taskId, idx);
      if (!special && writes.has(key)) continue;
      writes.set(key, { kind: "w", ord: 0, a: taskId, b: channel, c: taskPath, idx, type, json, bytes, extra: null });
    }
  }

  /** Forgets what it knew (a write it could not follow): reads go to the database. */
  forget(): void {
    this.known = null;
  }

  private covers(address: { threadId: string; namespace: string }): boolean {
    return address.threadId === this.threadId && address.namespace === "";
  }
}

function writeKey(taskId: string, idx: number): string {
  return `${taskId}\u0000${idx}`;
}

/** The memo a config carries, if any. */
export function readMemo(config: RunnableConfig): CheckpointMemo | undefined {
  const memo = config?.configurable?.[CHECKPOINT_MEMO_KEY];
  return memo instanceof CheckpointMemo ? memo : undefined;
}
