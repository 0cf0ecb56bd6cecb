import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { CHECKPOINT_LIST_PAGE_SIZE } from "../constants.js";
import type { Database } from "../db/types.js";
import { checkpointConfig, readAddress, readCheckpointAddress } from "./config.js";
import { LeaseLostError } from "../errors.js";
import { readDeltaHistory } from "./delta-history.js";
import { readFence, type CheckpointFence } from "./fence-config.js";
import { runCheckpointMetadata } from "./run-metadata.js";
import { checkpointSql, type CheckpointSql, type ListQueryShape } from "./sql.js";
import { assembleTuples, type TupleRow } from "./tuple-rows.js";
import { encodeMetadata, encodeValue } from "./value-codec.js";
import { isUniqueViolation, valueParams, writeStatements, type WriteMode } from "./write-sql.js";
import { nextChannelVersion } from "./versions.js";

function checkHeld(fence: CheckpointFence | undefined, result: { rows: { held?: boolean }[] }): void {
  if (fence !== undefined && result.rows[0]?.held !== true) throw new LeaseLostError(fence.runId, fence.epoch);
}

/** Options of `PostgresCheckpointSaver`. */
export interface PostgresCheckpointSaverOptions {
  /** Serializer for channel values and writes; LangGraph's JsonPlusSerializer by default. */
  serde?: SerializerProtocol;
}

/**
 * A LangGraph `BaseCheckpointSaver` on PostgreSQL or embedded PGlite (any `Database` from
 * `openDatabase`, migrated with `migrate`). Every `put`, `putWrites` and `getTuple` is exactly
 * one SQL statement; each (channel, version) value is stored once, so unchanged channels cost
 * nothing; `list` pages with a keyset instead of loading everything; `getDeltaChannelHistory`
 * is one recursive query. A config carrying a run's lease (see `fenceConfigurable`) makes every
 * write conditional on it, in the same statement: after a takeover nothing more is written.
 *
 * @example
 *   const db = await openDatabase({ url: process.env.DATABASE_URL });
 *   await migrate(db);
 *   const graph = builder.compile({ checkpointer: new PostgresCheckpointSaver(db) });
 */
/** The key of one checkpoint's task writes in flight. */
function writesKey(threadId: string, namespace: string, checkpointId: string): string {
  return `${threadId}\u0000${namespace}\u0000${checkpointId}`;
}

export class PostgresCheckpointSaver extends BaseCheckpointSaver {
  private readonly sql: CheckpointSql;
  private readonly writes: ReturnType<typeof writeStatements>;
  /**
   * Task writes still being stored, by the checkpoint they belong to. LangGraph stores a step's
   * task writes and then, without waiting, the next checkpoint; on a pool they could commit in
   * the other order, and a reader that sees a checkpoint must also see its parent's writes (the
   * server streams a step's results once the next checkpoint exists). `put` waits for them.
   */
  private readonly pendingWrites = new Map<string, Set<Promise<unknown>>>();

  constructor(
    private readonly db: Database,
    options: PostgresCheckpointSaverOptions = {},
  ) {
    super(options.serde);
    this.sql = checkpointSql(db.schema);
    this.writes = writeStatements(db.schema);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config?.configurable?.["thread_id"];
    if (threadId === undefined || threadId === null || threadId === "") return undefined;
    const address = readAddress(config, "getTuple");
    const result =
      address.checkpointId === undefined
        ? await this.db.query<TupleRow>(this.sql.getTupleLatest, [address.threadId, address.namespace])
        : await this.db.query<TupleRow>(this.sql.getTupleById, [address.threadId, address.namespace, address.checkpointId]);
    if (result.rows.length === 0) return undefined;
    const [tuple] = await assembleTuples(result.rows, this.serde, () => this.getNextVersion(undefined));
    return tuple;
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const configurable = config?.configurable ?? {};
    const threadId = configurable["thread_id"];
    const namespace = configurable["checkpoint_ns"];
    const exactId = configurable["checkpoint_id"];
    const beforeId = options.before?.configurable?.["checkpoint_id"];
    const filter = options.filter !== undefined && Object.keys(options.filter).length > 0 ? JSON.stringify(options.filter) : undefined;
    const base: unknown[] = [];
    const shape: ListQueryShape = { thread: false, namespace: false, checkpoint: false, before: false, filter: false, after: false };
    if (threadId !== undefined && threadId !== null && threadId !== "") (shape.thread = true), base.push(String(threadId));
    if (namespace !== undefined && namespace !== null) (shape.namespace = true), base.push(String(namespace));
    if (exactId !== undefined && exactId !== null && exactId !== "") (shape.checkpoint = true), base.push(String(exactId));
    if (beforeId !== undefined && beforeId !== null) (shape.before = true), base.push(String(beforeId));
    if (filter !== undefined) (shape.filter = true), base.push(filter);

    let remaining = options.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, Math.floor(options.limit));
    let cursor: [string, string, string] | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(remaining, CHECKPOINT_LIST_PAGE_SIZE);
      const statement = this.sql.listPage({ ...shape, after: cursor !== undefined });
      const values = cursor === undefined ? [...base, pageSize] : [...base, ...cursor, pageSize];
      const result = await this.db.query<TupleRow>(statement, values);
      const tuples = await assembleTuples(result.rows, this.serde, () => this.getNextVersion(undefined));
      for (const tuple of tuples) yield tuple;
      if (tuples.length < pageSize) return;
      remaining -= tuples.length;
      const last = tuples[tuples.length - 1]?.config.configurable ?? {};
      cursor = [String(last["checkpoint_id"]), String(last["thread_id"]), String(last["checkpoint_ns"])];
    }
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const address = readAddress(config, "put");
    if (address.checkpointId !== undefined) {
      const parentWrites = this.pendingWrites.get(writesKey(address.threadId, address.namespace, address.checkpointId));
      if (parentWrites !== undefined) await Promise.allSettled([...parentWrites]);
    }
    const { channel_values: channelValues, id, ...rest } = checkpoint;
    const rows: [string, string, string, string | null, Uint8Array | null][] = [];
    for (const [channel, version] of Object.entries(newVersions)) {
      // a channel absent from channel_values was cleared or is a delta channel: no value row
      if (!Object.prototype.hasOwnProperty.call(channelValues, channel) || channelValues[channel] === undefined) continue;
      const value = await encodeValue(this.serde, channelValues[channel]);
      rows.push([channel, String(version), value.type, value.json, value.bytes]);
    }
    const fence = readFence(config);
    const params = [
      address.threadId,
      address.namespace,
      id,
      address.checkpointId ?? null,
      JSON.stringify(rest),
      // a checkpoint written under a run's lease names the run (LangGraph Platform's `run_id`): a
      // later attempt tells its own checkpoints from the previous run's on the thread; and it
      // carries the run's ids and metadata, as the Platform's checkpoints do (history filters)
      await encodeMetadata(this.serde, fence === undefined ? metadata : { ...runCheckpointMetadata(config), ...metadata, run_id: fence.runId }),
      ...valueParams(rows),
      ...(fence === undefined ? [] : [fence.runId, fence.epoch]),
    ];
    await this.withConflictRetry(fence, (mode) => this.db.query<{ held?: boolean }>(this.writes.put(rows.length, mode, fence !== undefined), params));
    return checkpointConfig(address.threadId, address.namespace, id);
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const address = readCheckpointAddress(config, "putWrites");
    if (writes.length === 0) return;
    const key = writesKey(address.threadId, address.namespace, address.checkpointId);
    const pending = this.pendingWrites.get(key) ?? new Set<Promise<unknown>>();
    this.pendingWrites.set(key, pending);
    const stored = this.storeWrites(address, config, writes, taskId, taskPath);
    pending.add(stored);
    try {
      await stored;
    } finally {
      pending.delete(stored);
      if (pending.size === 0 && this.pendingWrites.get(key) === pending) this.pendingWrites.delete(key);
    }
  }

  private async storeWrites(address: ReturnType<typeof readCheckpointAddress>, config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath: string): Promise<void> {
    const rows: [number, string, string, string | null, Uint8Array | null][] = [];
    for (const [index, [channel, value]] of writes.entries()) {
      const encoded = await encodeValue(this.serde, value);
      rows.push([WRITES_IDX_MAP[channel] ?? index, channel, encoded.type, encoded.json, encoded.bytes]);
    }
    const fence = readFence(config);
    const params = [address.threadId, address.namespace, address.checkpointId, taskId, taskPath, ...valueParams(rows), ...(fence === undefined ? [] : [fence.runId, fence.epoch])];
    if (writes.every(([channel]) => channel in WRITES_IDX_MAP)) {
      checkHeld(fence, await this.db.query<{ held?: boolean }>(this.writes.putWrites(rows.length, "replace", fence !== undefined), params));
      return;
    }
    await this.withConflictRetry(fence, (mode) => this.db.query<{ held?: boolean }>(this.writes.putWrites(rows.length, mode, fence !== undefined), params));
  }

  /**
   * Runs the plain-INSERT fast path; on a unique violation, the same call with ON CONFLICT rules.
   * A fenced write that finds the lease moved wrote nothing and throws LeaseLostError.
   */
  private async withConflictRetry(fence: CheckpointFence | undefined, run: (mode: WriteMode) => Promise<{ rows: { held?: boolean }[] }>): Promise<void> {
    let result: { rows: { held?: boolean }[] };
    try {
      result = await run("insert");
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      result = await run("conflict");
    }
    checkHeld(fence, result);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.db.query(this.sql.deleteThread, [String(threadId)]);
  }

  /**
   * Rolls a thread back from one run (LangGraph Platform's rollback): removes the checkpoints the
   * run wrote (their metadata names `runId`) with their writes, and the pending writes the run
   * left on the checkpoint it started from (that checkpoint's when the run continued the thread
   * without input, the newest remaining one when it wrote none). Values stay: unreferenced, they
   * cost space only. Returns how many checkpoints were removed.
   */
  async deleteRunCheckpoints(threadId: string, runId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const gone = (await tx.query(this.sql.deleteRunCheckpoints, [String(threadId), String(runId)])).rows;
      const root = gone.filter((row) => row["checkpoint_ns"] === "").sort((a, b) => String(a["checkpoint_id"]).localeCompare(String(b["checkpoint_id"])));
      const first = root[0];
      if (first === undefined) await tx.query(this.sql.deletePendingWrites, [String(threadId), null]);
      else if (first["source"] !== "input" && first["parent_checkpoint_id"] !== null) await tx.query(this.sql.deletePendingWrites, [String(threadId), String(first["parent_checkpoint_id"])]);
      return gone.length;
    });
  }

  override async getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Record<string, DeltaChannelHistory>> {
    if (options.channels.length === 0) return {};
    const address = readAddress(options.config, "getDeltaChannelHistory");
    return readDeltaHistory(this.db, this.sql, this.serde, address, options.channels);
  }

  /** Versions that stay unique across forks; see `nextChannelVersion`. */
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current);
  }
}
