import { DeltaSnapshot, JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { encodeValue } from "../../checkpoint/value-codec.js";
import type { Database, Queryable } from "../../db/types.js";
import { RunConflictError } from "../../errors.js";
import { threadCheckpointSql, type ThreadCheckpointSql } from "./thread-checkpoint-sql.js";
import type { StateReadableGraph } from "./thread-state.js";

/** A graph's channels as LangGraph's compiled graphs expose them (to tell delta channels). */
type WithChannels = { channels?: Record<string, { lc_graph_name?: unknown } | undefined> };

/**
 * Whole-thread checkpoint operations of LangGraph Platform's threads API, on the checkpointer's
 * tables: `copy` (the history under a new thread id), `keepLatest` (prune strategy keep_latest)
 * and `patchLatestMetadata` (`patchState`).
 */
export class ThreadCheckpoints {
  private readonly sql: ThreadCheckpointSql;
  // the checkpointer's default serializer (PostgresCheckpointSaver is built without another)
  private readonly serde: SerializerProtocol = new JsonPlusSerializer();

  constructor(private readonly db: Database) {
    this.sql = threadCheckpointSql(db.schema);
  }

  /** Copies every checkpoint, value and write of `fromThread` to `toThread` (in `tx`); returns how many checkpoints. */
  async copy(tx: Queryable, fromThread: string, toThread: string): Promise<number> {
    const row = (await tx.query(this.sql.copy, [fromThread, toThread])).rows[0];
    return Number(row?.["copied"] ?? 0);
  }

  /**
   * Keeps only the newest checkpoint of the thread (and of each subgraph namespace): the state
   * stays readable, the history is that one checkpoint. A delta channel (the agent's `messages`)
   * whose newest value lives only in the older checkpoints' writes gets its full value stored
   * at the newest checkpoint first (a LangGraph DeltaSnapshot, as its periodic snapshots are).
   * Returns how many checkpoints were removed.
   */
  async keepLatest(threadId: string, graph: () => Promise<StateReadableGraph>): Promise<number> {
    const latest = (await this.db.query(this.sql.latestRoot, [threadId])).rows[0];
    const snapshots: [string, string, unknown][] = [];
    const unstored = (latest?.["unstored"] as string[] | null | undefined) ?? [];
    if (latest !== undefined && unstored.length > 0) {
      const compiled = await graph();
      const channels = (compiled as unknown as WithChannels).channels ?? {};
      const deltas = unstored.filter((channel) => channels[channel]?.lc_graph_name === "DeltaChannel");
      if (deltas.length > 0) {
        const state = await compiled.getState({ configurable: { thread_id: threadId } });
        const checkpointId = state.config?.configurable?.["checkpoint_id"];
        if (checkpointId !== latest["checkpoint_id"]) throw new RunConflictError(`thread ${threadId} changed while it was being pruned; prune it again`, { threadId });
        const values = (state.values ?? {}) as Record<string, unknown>;
        const versions = (latest["versions"] ?? {}) as Record<string, unknown>;
        for (const channel of deltas) if (channel in values) snapshots.push([channel, String(versions[channel]), values[channel]]);
      }
    }
    return this.db.transaction(async (tx) => {
      for (const [channel, version, value] of snapshots) {
        const encoded = await encodeValue(this.serde, new DeltaSnapshot(value));
        await tx.query(this.sql.putRootValue, [threadId, channel, version, encoded.type, encoded.json, encoded.bytes]);
      }
      return Number((await tx.query(this.sql.keepLatest, [threadId])).rows[0]?.["removed"] ?? 0);
    });
  }

  /** Merges `metadata` into the newest root checkpoint's metadata; its id, or undefined when the thread has none. */
  async patchLatestMetadata(threadId: string, metadata: Record<string, unknown>): Promise<string | undefined> {
    const row = (await this.db.query(this.sql.patchLatestMetadata, [threadId, JSON.stringify(metadata)])).rows[0];
    return row === undefined ? undefined : String(row["checkpoint_id"]);
  }
}
