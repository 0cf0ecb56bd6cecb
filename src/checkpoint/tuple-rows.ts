import {
  TASKS,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
  type Checkpoint,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { CheckpointError } from "../errors.js";
import { checkpointConfig } from "./config.js";
import { decodeValue } from "./value-codec.js";

/** One row of the tuple queries in sql.ts (see the column comment there). */
export interface TupleRow {
  kind: "c" | "b" | "w" | "s";
  ord: number;
  a: string;
  b: string;
  c: string | null;
  idx: number | null;
  type: string | null;
  json: string | null;
  bytes: Uint8Array | null;
  extra: string | null;
}

interface WriteRow {
  taskId: string;
  channel: string;
  taskPath: string;
  idx: number;
  type: string;
  json: string | null;
  bytes: Uint8Array | null;
}

interface Gathered {
  head: TupleRow | undefined;
  values: TupleRow[];
  writes: WriteRow[];
  sends: WriteRow[];
}

function toWrite(row: TupleRow): WriteRow {
  return { taskId: row.a, channel: row.b, taskPath: row.c ?? "", idx: Number(row.idx), type: row.type ?? "json", json: row.json, bytes: row.bytes };
}

/** Sorts writes in `writesSortKey` order (task path, task id, idx), the order LangGraph applies them. */
export function sortWrites<T extends { taskPath: string; taskId: string; idx: number }>(writes: T[]): T[] {
  return writes.sort((x, y) => compareWritesSortKeys(writesSortKey(x.taskPath, x.taskId, x.idx), writesSortKey(y.taskPath, y.taskId, y.idx)));
}

/**
 * Turns the rows of one tuple query into checkpoint tuples, in `ord` order. Values are decoded
 * with the saver's serde; checkpoints older than format v4 get their parent's pending sends
 * migrated into the `__pregel_tasks` channel, as LangGraph expects.
 */
export async function assembleTuples(
  rows: readonly TupleRow[],
  serde: SerializerProtocol,
  nextVersion: (current: undefined) => string | number,
): Promise<CheckpointTuple[]> {
  const byOrd = new Map<number, Gathered>();
  for (const row of rows) {
    const ord = Number(row.ord);
    let entry = byOrd.get(ord);
    if (entry === undefined) {
      entry = { head: undefined, values: [], writes: [], sends: [] };
      byOrd.set(ord, entry);
    }
    if (row.kind === "c") entry.head = row;
    else if (row.kind === "b") entry.values.push(row);
    else if (row.kind === "w") entry.writes.push(toWrite(row));
    else entry.sends.push(toWrite(row));
  }
  // decoded one after another: interleaving many message revivals with Promise.all measured
  // about 40% slower than running them in sequence
  const tuples: CheckpointTuple[] = [];
  for (const ord of [...byOrd.keys()].sort((x, y) => x - y)) tuples.push(await assembleOne(byOrd.get(ord) as Gathered, serde, nextVersion));
  return tuples;
}

async function assembleOne(entry: Gathered, serde: SerializerProtocol, nextVersion: (current: undefined) => string | number): Promise<CheckpointTuple> {
  const head = entry.head;
  if (head === undefined || head.c === null || head.json === null) {
    throw new CheckpointError("CHECKPOINT_CORRUPT", "checkpoint query returned values without their checkpoint row");
  }
  const [threadId, namespace, checkpointId, parentId] = [head.a, head.b, head.c, head.type];
  const stored = JSON.parse(head.json) as Omit<Checkpoint, "id" | "channel_values">;
  const channelValues: Record<string, unknown> = {};
  for (const row of entry.values) channelValues[row.a] = await decodeValue(serde, row.type ?? "json", row.json, row.bytes);
  const checkpoint: Checkpoint = {
    ...stored,
    v: stored.v,
    id: checkpointId,
    ts: stored.ts,
    channel_values: channelValues,
    channel_versions: stored.channel_versions ?? {},
    versions_seen: stored.versions_seen ?? {},
  };
  if (entry.sends.length > 0) {
    const sends: unknown[] = [];
    for (const w of sortWrites(entry.sends)) sends.push(await decodeValue(serde, w.type, w.json, w.bytes));
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : nextVersion(undefined);
  }
  const pendingWrites: CheckpointPendingWrite[] = [];
  for (const w of sortWrites(entry.writes)) pendingWrites.push([w.taskId, w.channel, await decodeValue(serde, w.type, w.json, w.bytes)]);
  const metadata = head.extra === null ? undefined : await serde.loadsTyped("json", head.extra);
  return {
    config: checkpointConfig(threadId, namespace, checkpointId),
    checkpoint,
    metadata,
    parentConfig: parentId === null ? undefined : checkpointConfig(threadId, namespace, parentId),
    pendingWrites,
  };
}
