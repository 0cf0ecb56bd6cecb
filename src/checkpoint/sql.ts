import { TASKS } from "@langchain/langgraph-checkpoint";
import { quoteIdentifier } from "../db/identifiers.js";
import { statement } from "../db/statement.js";
import type { Statement } from "../db/types.js";

/**
 * Columns every tuple query returns (kind, ord, a, b, c, idx, type, json, bytes, extra), one row
 * per item, tagged by `kind`:
 * `c` the checkpoint itself (a thread, b ns, c id, type = parent id, json = checkpoint, extra = metadata),
 * `b` a channel value (ord, channel, version, type, json, bytes),
 * `w` a pending write (ord, task_id, channel, idx, type, json, bytes, task_path),
 * `s` a pending send of the parent, only for checkpoints older than format v4.
 * Rows instead of aggregated arrays: node-pg parses plain text columns without array unescaping.
 */
function tupleRows(s: string): string {
  return `
  SELECT 'c'::text AS kind, cp.ord, cp.thread_id AS a, cp.checkpoint_ns AS b, cp.checkpoint_id AS c,
         NULL::integer AS idx, cp.parent_checkpoint_id AS type, cp.checkpoint::text AS json, NULL::bytea AS bytes,
         cp.metadata::text AS extra
    FROM cp
  UNION ALL
  SELECT 'b', cp.ord, bl.channel, bl.version, NULL, NULL, bl.type, bl.json, bl.bytes, NULL
    FROM cp
    CROSS JOIN LATERAL json_each_text(cp.checkpoint -> 'channel_versions') AS v(channel, version)
    -- LIMIT 1 keeps this a per-version primary-key probe; as a plain join the generic plan
    -- hashes every stored version of the thread
    CROSS JOIN LATERAL (
      SELECT b.channel, b.version, b.type, b.json, b.bytes FROM ${s}.checkpoint_blobs b
       WHERE b.thread_id = cp.thread_id AND b.checkpoint_ns = cp.checkpoint_ns
         AND b.channel = v.channel AND b.version = v.version
       LIMIT 1
    ) AS bl
  UNION ALL
  SELECT 'w', cp.ord, w.task_id, w.channel, w.task_path, w.idx, w.type, w.json, w.bytes, NULL
    FROM cp
    JOIN ${s}.checkpoint_writes w
      ON w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns AND w.checkpoint_id = cp.checkpoint_id
  UNION ALL
  SELECT 's', cp.ord, w.task_id, w.channel, w.task_path, w.idx, w.type, w.json, w.bytes, NULL
    FROM cp
    JOIN ${s}.checkpoint_writes w
      ON w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
     AND w.checkpoint_id = cp.parent_checkpoint_id AND w.channel = '${TASKS}'
   WHERE (cp.checkpoint ->> 'v')::integer < 4`;
}

const CP_COLUMNS = `thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata`;

/** Where-clause fragments of `list`; values are always `$n` parameters. */
export interface ListQueryShape {
  thread: boolean;
  namespace: boolean;
  /** an exact checkpoint id from the config */
  checkpoint: boolean;
  before: boolean;
  filter: boolean;
  /** keyset cursor from the previous page */
  after: boolean;
}

/** Every statement of the checkpointer, for one schema (a validated identifier). */
export function checkpointSql(schema: string) {
  const s = quoteIdentifier(schema);
  const listCache = new Map<string, Statement>();
  return {
    /** $1 thread, $2 ns, $3 checkpoint id. */
    getTupleById: statement(
      "get_tuple_id",
      `WITH cp AS (
         SELECT 0 AS ord, ${CP_COLUMNS} FROM ${s}.checkpoints
          WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
       )${tupleRows(s)}`,
    ),
    /** $1 thread, $2 ns: the newest checkpoint. */
    getTupleLatest: statement(
      "get_tuple_latest",
      `WITH cp AS (
         SELECT 0 AS ord, ${CP_COLUMNS} FROM ${s}.checkpoints
          WHERE thread_id = $1 AND checkpoint_ns = $2
          ORDER BY checkpoint_id DESC LIMIT 1
       )${tupleRows(s)}`,
    ),
    /**
     * A keyset page of `list`, newest first, ordered by (checkpoint_id, thread_id, ns) descending.
     * Parameters in order: [thread] [ns] [before id] [filter json] [after id, after thread, after ns] limit.
     */
    listPage(shape: ListQueryShape): Statement {
      const key = JSON.stringify(shape);
      const cached = listCache.get(key);
      if (cached !== undefined) return cached;
      const where: string[] = [];
      let n = 0;
      const next = (): string => `$${(n += 1)}`;
      if (shape.thread) where.push(`thread_id = ${next()}`);
      if (shape.namespace) where.push(`checkpoint_ns = ${next()}`);
      if (shape.checkpoint) where.push(`checkpoint_id = ${next()}`);
      if (shape.before) where.push(`checkpoint_id < ${next()}`);
      if (shape.filter) where.push(`metadata @> ${next()}::jsonb`);
      if (shape.after) where.push(`(checkpoint_id, thread_id, checkpoint_ns) < (${next()}, ${next()}, ${next()})`);
      const limit = next();
      const text = `WITH cp AS (
         SELECT (row_number() OVER (ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC))::integer AS ord, page.* FROM (
           SELECT ${CP_COLUMNS} FROM ${s}.checkpoints
           ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
           LIMIT ${limit}
         ) AS page
       )${tupleRows(s)}`;
      const built = statement("list", text);
      listCache.set(key, built);
      return built;
    },
    /**
     * $1 thread, $2 run id: removes the checkpoints whose metadata names the run (every namespace)
     * and their writes; returns each removed one's namespace, id, parent id and source.
     */
    deleteRunCheckpoints: statement(
      "delete_run_checkpoints",
      `WITH gone AS (
         DELETE FROM ${s}.checkpoints c WHERE c.thread_id = $1 AND c.metadata->>'run_id' = $2
         RETURNING c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.metadata->>'source' AS source
       ), w AS (
         DELETE FROM ${s}.checkpoint_writes w USING gone g
          WHERE w.thread_id = $1 AND w.checkpoint_ns = g.checkpoint_ns AND w.checkpoint_id = g.checkpoint_id
       )
       SELECT * FROM gone`,
    ),
    /** $1 thread, $2 checkpoint id (null: the thread's newest root checkpoint): removes its pending writes. */
    deletePendingWrites: statement(
      "delete_pending_writes",
      `DELETE FROM ${s}.checkpoint_writes w
        WHERE w.thread_id = $1 AND w.checkpoint_ns = ''
          AND w.checkpoint_id = COALESCE($2::text, (SELECT max(c.checkpoint_id) FROM ${s}.checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = ''))`,
    ),
    /** $1 thread: removes every checkpoint, value and write of the thread in one statement. */
    deleteThread: statement(
      "delete_thread",
      `WITH w AS (DELETE FROM ${s}.checkpoint_writes WHERE thread_id = $1),
            b AS (DELETE FROM ${s}.checkpoint_blobs WHERE thread_id = $1)
       DELETE FROM ${s}.checkpoints WHERE thread_id = $1`,
    ),
    /**
     * Delta-channel history in one recursive query. $1 thread, $2 ns, $3 target checkpoint id (null: latest),
     * $4 channel names. Walks ancestors from the target's parent, stopping once every channel
     * has found its seed (nearest stored value); returns the seeds and the on-path writes above them.
     */
    deltaHistory: statement(
      "delta_history",
      `WITH RECURSIVE chain AS (
         SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, 0 AS depth,
                ARRAY(SELECT ch FROM unnest($4::text[]) AS ch
                       WHERE EXISTS (SELECT 1 FROM ${s}.checkpoint_blobs bl
                                      WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = ch
                                        AND bl.version = p.checkpoint -> 'channel_versions' ->> ch)) AS found
           FROM ${s}.checkpoints t
           JOIN ${s}.checkpoints p
             ON p.thread_id = t.thread_id AND p.checkpoint_ns = t.checkpoint_ns AND p.checkpoint_id = t.parent_checkpoint_id
          WHERE t.thread_id = $1 AND t.checkpoint_ns = $2
            AND t.checkpoint_id = COALESCE($3::text, (SELECT max(l.checkpoint_id) FROM ${s}.checkpoints l
                                                       WHERE l.thread_id = $1 AND l.checkpoint_ns = $2))
         UNION ALL
         SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, chain.depth + 1,
                chain.found || ARRAY(SELECT ch FROM unnest($4::text[]) AS ch
                       WHERE NOT ch = ANY (chain.found)
                         AND EXISTS (SELECT 1 FROM ${s}.checkpoint_blobs bl
                                      WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = ch
                                        AND bl.version = p.checkpoint -> 'channel_versions' ->> ch))
           FROM chain
           JOIN ${s}.checkpoints p
             ON p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = chain.parent_checkpoint_id
          WHERE cardinality(chain.found) < cardinality($4::text[])
       ),
       seeds AS (
         SELECT DISTINCT ON (ch) ch AS channel, chain.depth, bl.type, bl.json, bl.bytes
           FROM chain
           CROSS JOIN unnest($4::text[]) AS ch
           JOIN ${s}.checkpoint_blobs bl
             ON bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = ch
            AND bl.version = chain.checkpoint -> 'channel_versions' ->> ch
          ORDER BY ch, chain.depth
       )
       SELECT 's'::text AS kind, seeds.depth, seeds.channel, NULL::text AS task_id, NULL::text AS task_path,
              NULL::integer AS idx, seeds.type, seeds.json, seeds.bytes
         FROM seeds
       UNION ALL
       SELECT 'w', chain.depth, w.channel, w.task_id, w.task_path, w.idx, w.type, w.json, w.bytes
         FROM chain
         JOIN ${s}.checkpoint_writes w
           ON w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = chain.checkpoint_id
          AND w.channel = ANY ($4::text[])
         LEFT JOIN seeds ON seeds.channel = w.channel
        WHERE seeds.depth IS NULL OR chain.depth <= seeds.depth`,
    ),
  };
}

export type CheckpointSql = ReturnType<typeof checkpointSql>;
