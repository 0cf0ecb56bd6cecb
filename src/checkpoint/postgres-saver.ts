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
import type { Database, Queryable } from "../db/types.js";
import { checkpointConfig, readAddress, readCheckpointAddress } from "./config.js";
import { LeaseLostError } from "../errors.js";
import { readDeltaHistory } from "./delta-history.js";
import { readFence, readRider, withRider, type CheckpointFence, type CheckpointRider } from "./fence-config.js";
import { runCheckpointMetadata } from "./run-metadata.js";
import { checkpointSql, type CheckpointSql, type ListQueryShape } from "./sql.js";
import { assembleTuples, type TupleRow } from "./tuple-rows.js";
import { encodeMetadata, encodeValue } from "./value-codec.js";
import { isUniqueViolation, valueParams, writeStatements, type WriteMode } from "./write-sql.js";
import { nextChannelVersion } from "./versions.js";
import { groupStatements, type GroupPart } from "./group-sql.js";
import { laneKey, WriteQueue, type QueuedWrites, type WriteRow } from "./write-queue.js";
import { readMemo } from "./checkpoint-memo.js";

/** The run id and lease epoch closing a fenced statement's parameters (none unfenced). */
function fenceParams(fence: CheckpointFence | undefined): unknown[] {
  return fence === undefined ? [] : [fence.runId, fence.epoch];
}

/** A `putWrites` statement's parameters before the fence's: address, task, then the value rows. */
function writeParams(item: QueuedWrites): unknown[] {
  const { address } = item;
  return [address.threadId, address.namespace, address.checkpointId, item.taskId, item.taskPath, ...valueParams(item.rows)];
}

/** PostgreSQL's cardinality_violation: one statement upserting a row twice. */
function isCardinalityViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "21000";
}

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
 * `openDatabase`, migrated with `migrate`). Every `put` and `getTuple` is exactly one SQL
 * statement, and the task writes a step stores just before its next checkpoint go in that
 * checkpoint's statement (group commit: one commit per step; `putWrites` resolves once its rows
 * are durable, written with the checkpoint or on their own on the next turn); each (channel,
 * version) value is stored once, so unchanged channels cost
 * nothing; `list` pages with a keyset instead of loading everything; `getDeltaChannelHistory`
 * is one recursive query. A config carrying a run's lease (see `fenceConfigurable`) makes every
 * write conditional on it, in the same statement: after a takeover nothing more is written.
 *
 * @example
 *   const db = await openDatabase({ url: process.env.DATABASE_URL });
 *   await migrate(db);
 *   const graph = builder.compile({ checkpointer: new PostgresCheckpointSaver(db) });
 */
export class PostgresCheckpointSaver extends BaseCheckpointSaver {
  private readonly sql: CheckpointSql;
  private readonly writes: ReturnType<typeof writeStatements>;
  private readonly groups: ReturnType<typeof groupStatements>;
  /** Task writes waiting for the checkpoint that follows them, or in flight (see `WriteQueue`). */
  private readonly queue = new WriteQueue((items) => this.storeGroup(items));

  constructor(
    private readonly db: Database,
    options: PostgresCheckpointSaverOptions = {},
  ) {
    super(options.serde);
    this.sql = checkpointSql(db.schema);
    this.writes = writeStatements(db.schema);
    this.groups = groupStatements(db.schema);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config?.configurable?.["thread_id"];
    if (threadId === undefined || threadId === null || threadId === "") return undefined;
    const address = readAddress(config, "getTuple");
    await this.flush(address.threadId);
    // a run's attempt knows its thread's newest checkpoint (its claim read it, it stored every one since)
    const memo = readMemo(config);
    if (memo?.answers(address) === true) {
      const rows = memo.rows();
      return rows.length === 0 ? undefined : (await assembleTuples(rows, this.serde, () => this.getNextVersion(undefined)))[0];
    }
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

    await this.flush(shape.thread ? String(threadId) : undefined);
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
    const fence = readFence(config);
    // a reader that sees a checkpoint must also see its parent's writes (the server streams a
    // step's results once the next checkpoint exists): those still queued go in this statement,
    // those in flight are waited for
    const lane = laneKey(address.threadId, address.namespace);
    const counters = (metadata as { counters_since_delta_snapshot?: Record<string, unknown> } | undefined)?.counters_since_delta_snapshot;
    if (counters !== null && typeof counters === "object") this.queue.noteDeltaChannels(Object.keys(counters));
    const parentWrites = await this.queue.take(lane, address.checkpointId, fence);
    const memo = readMemo(config);
    try {
      // a delta write of the parent answered early but not stored: this checkpoint must not be
      this.queue.assertStored(address.checkpointId, fence);
      const { channel_values: channelValues, id, ...rest } = checkpoint;
      const rows: [string, string, string, string | null, Uint8Array | null][] = [];
      for (const [channel, version] of Object.entries(newVersions)) {
        // a channel absent from channel_values was cleared or is a delta channel: no value row
        if (!Object.prototype.hasOwnProperty.call(channelValues, channel) || channelValues[channel] === undefined) continue;
        const value = await encodeValue(this.serde, channelValues[channel]);
        rows.push([channel, String(version), value.type, value.json, value.bytes]);
      }
      const head = [
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
      ];
      const rider = fence === undefined ? undefined : readRider(config);
      // stored over a checkpoint stored before (a replay): what the thread holds is no longer known here
      let replayed = false;
      const single = (db: Queryable): Promise<void> =>
        this.withConflictRetry(fence, (mode) => {
          if (mode === "conflict") replayed = true;
          return db.query<{ held?: boolean }>(this.writes.put(rows.length, mode, fence !== undefined), [...head, ...fenceParams(fence)]);
        });
      if (parentWrites.length === 0) await withRider(this.db, rider, single);
      else await this.storeGroup(parentWrites, { count: rows.length, params: head, single, rider, replayed: () => void (replayed = true) });
      if (replayed) memo?.forget();
      else memo?.notePut(address, id, head[4] as string, head[5] as string, rest.channel_versions ?? {}, rows, (channel) => channelValues[channel] !== undefined);
      return checkpointConfig(address.threadId, address.namespace, id);
    } catch (error) {
      memo?.forget();
      for (const item of parentWrites) item.settle(error);
      throw error;
    } finally {
      this.queue.putDone(lane);
    }
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const address = readCheckpointAddress(config, "putWrites");
    if (writes.length === 0) return;
    const rows: WriteRow[] = [];
    for (const [index, [channel, value]] of writes.entries()) {
      const encoded = await encodeValue(this.serde, value);
      rows.push([WRITES_IDX_MAP[channel] ?? index, channel, encoded.type, encoded.json, encoded.bytes]);
    }
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const fence = readFence(config);
    const rider = fence === undefined ? undefined : readRider(config);
    const memo = readMemo(config);
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: unknown): void => {
        if (error === undefined) {
          memo?.noteWrites(address, taskId, taskPath, rows, special);
          resolve();
        } else {
          memo?.forget();
          reject(error);
        }
      };
      this.queue.add({ address, fence, rider, rows, taskId, taskPath, special, settle });
    });
  }

  /**
   * Stores all pending task writes now (of `threadId` only, when given) and resolves once every
   * one is durable (or failed): for a caller that must know nothing is left in memory (writes are
   * otherwise flushed on the next turn of the event loop, or with the following checkpoint).
   */
  async flush(threadId?: string): Promise<void> {
    if (!this.queue.idleFor(threadId)) await this.queue.flushAll(threadId);
  }

  /**
   * Stores queued writes of one checkpoint, all under one fence, and `put` (the checkpoint that
   * follows them) if given, in one statement, and settles the writes. A unique violation (a part
   * stored before) stores them one by one with their own conflict rules instead.
   */
  private async storeGroup(
    items: QueuedWrites[],
    put?: { count: number; params: unknown[]; single: (db: Queryable) => Promise<void>; rider: CheckpointRider | undefined; replayed: () => void },
  ): Promise<void> {
    const fence = items[0]?.fence;
    const rider = put?.rider ?? items[0]?.rider;
    try {
      if (items.length === 1 && put === undefined) await withRider(this.db, rider, (db) => this.storeWrites(db, items[0] as QueuedWrites));
      else {
        const parts: GroupPart[] = items.map((item) => ({ kind: "writes", count: item.rows.length, special: item.special }));
        const params: unknown[] = items.flatMap((item) => writeParams(item));
        if (put !== undefined) parts.push({ kind: "put", count: put.count }), params.push(...put.params);
        const statement = this.groups.group(parts, fence !== undefined);
        try {
          await withRider(this.db, rider, async (db) => checkHeld(fence, await db.query<{ held?: boolean }>(statement, [...params, ...fenceParams(fence)])));
        } catch (error) {
          if (!isUniqueViolation(error) && !isCardinalityViolation(error)) throw error;
          put?.replayed();
          for (const item of items) {
            await this.storeWrites(this.db, item);
            item.settle();
          }
          await put?.single(this.db);
        }
      }
    } catch (error) {
      for (const item of items) item.settle(error);
      throw error;
    }
    for (const item of items) item.settle();
  }

  private async storeWrites(db: Queryable, item: QueuedWrites): Promise<void> {
    const { fence, rows } = item;
    const params = [...writeParams(item), ...fenceParams(fence)];
    if (item.special) {
      checkHeld(fence, await db.query<{ held?: boolean }>(this.writes.putWrites(rows.length, "replace", fence !== undefined), params));
      return;
    }
    await this.withConflictRetry(fence, (mode) => db.query<{ held?: boolean }>(this.writes.putWrites(rows.length, mode, fence !== undefined), params));
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
    await this.flush(String(threadId));
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
    await this.flush(String(threadId));
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
    await this.flush(address.threadId);
    return readDeltaHistory(this.db, this.sql, this.serde, address, options.channels);
  }

  /** Versions that stay unique across forks; see `nextChannelVersion`. */
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current);
  }
}
