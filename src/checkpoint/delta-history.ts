import type { DeltaChannelHistory, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { Database } from "../db/types.js";
import type { CheckpointAddress } from "./config.js";
import type { CheckpointSql } from "./sql.js";
import { sortWrites } from "./tuple-rows.js";
import { decodeValue } from "./value-codec.js";

interface HistoryRow {
  kind: "s" | "w";
  depth: number;
  channel: string;
  task_id: string | null;
  task_path: string | null;
  idx: number | null;
  type: string;
  json: string | null;
  bytes: Uint8Array | null;
}

/**
 * Runs the one recursive delta-history query and shapes its rows as LangGraph expects: per
 * channel, the on-path writes oldest to newest (within a checkpoint in `writesSortKey` order)
 * and the nearest stored value as `seed` when an ancestor has one.
 */
export async function readDeltaHistory(
  db: Database,
  sql: CheckpointSql,
  serde: SerializerProtocol,
  address: CheckpointAddress,
  channels: string[],
): Promise<Record<string, DeltaChannelHistory>> {
  const unique = [...new Set(channels)];
  const { rows } = await db.query<HistoryRow>(sql.deltaHistory, [address.threadId, address.namespace, address.checkpointId ?? null, unique]);
  const result: Record<string, DeltaChannelHistory> = {};
  for (const channel of unique) result[channel] = { writes: [] };
  const writesByChannel = new Map<string, { depth: number; taskId: string; taskPath: string; idx: number; row: HistoryRow }[]>();
  for (const row of rows) {
    const entry = result[row.channel];
    if (entry === undefined) continue;
    if (row.kind === "s") {
      entry.seed = await decodeValue(serde, row.type, row.json, row.bytes);
      continue;
    }
    const list = writesByChannel.get(row.channel) ?? [];
    list.push({ depth: Number(row.depth), taskId: row.task_id ?? "", taskPath: row.task_path ?? "", idx: Number(row.idx), row });
    writesByChannel.set(row.channel, list);
  }
  for (const [channel, list] of writesByChannel) {
    const byDepth = new Map<number, typeof list>();
    for (const item of list) byDepth.set(item.depth, [...(byDepth.get(item.depth) ?? []), item]);
    const ordered = [...byDepth.keys()].sort((x, y) => y - x).flatMap((depth) => sortWrites(byDepth.get(depth) ?? []));
    const writes: DeltaChannelHistory["writes"] = [];
    for (const item of ordered) writes.push([item.taskId, channel, await decodeValue(serde, item.row.type, item.row.json, item.row.bytes)]);
    (result[channel] as DeltaChannelHistory).writes = writes;
  }
  return result;
}
