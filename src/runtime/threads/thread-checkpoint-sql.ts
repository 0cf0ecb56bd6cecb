import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";

/**
 * Statements over a whole thread's checkpoints (migration 0001's tables) for one schema: the
 * LangGraph Platform thread operations `copy`, prune `keep_latest` and `patchState`. Each is one
 * statement; the callers run them in one transaction where several belong together.
 */
export function threadCheckpointSql(schema: string) {
  const s = quoteIdentifier(schema);
  const checkpoints = `${s}.checkpoints`;
  const blobs = `${s}.checkpoint_blobs`;
  const writes = `${s}.checkpoint_writes`;
  // each namespace's newest checkpoint of thread $1 (LangGraph's ids sort by time)
  const latest = `SELECT DISTINCT ON (l.checkpoint_ns) l.checkpoint_ns, l.checkpoint_id
                    FROM ${checkpoints} l WHERE l.thread_id = $1::text
                   ORDER BY l.checkpoint_ns, l.checkpoint_id DESC`;
  return {
    /**
     * $1 source thread, $2 new thread: copies every checkpoint (same ids, same parents; a
     * `thread_id` key of the metadata names the new thread, as the official server's copy does),
     * value and write. Returns how many checkpoints were copied.
     */
    copy: statement(
      "thread_checkpoints_copy",
      `WITH c AS (
         INSERT INTO ${checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
         SELECT $2::text, x.checkpoint_ns, x.checkpoint_id, x.parent_checkpoint_id, x.checkpoint,
                CASE WHEN x.metadata ? 'thread_id' THEN jsonb_set(x.metadata, '{thread_id}', to_jsonb($2::text)) ELSE x.metadata END
           FROM ${checkpoints} x WHERE x.thread_id = $1::text
         RETURNING 1
       ), b AS (
         INSERT INTO ${blobs} (thread_id, checkpoint_ns, channel, version, type, json, bytes)
         SELECT $2::text, x.checkpoint_ns, x.channel, x.version, x.type, x.json, x.bytes FROM ${blobs} x WHERE x.thread_id = $1::text
       ), w AS (
         INSERT INTO ${writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, json, bytes, task_path)
         SELECT $2::text, x.checkpoint_ns, x.checkpoint_id, x.task_id, x.idx, x.channel, x.type, x.json, x.bytes, x.task_path
           FROM ${writes} x WHERE x.thread_id = $1::text
       )
       SELECT count(*)::integer AS copied FROM c`,
    ),
    /**
     * $1 thread: the newest root checkpoint's id and channel versions (none without checkpoints),
     * and which of those channels have no stored value at their version (delta channels, cleared ones).
     */
    latestRoot: statement(
      "thread_checkpoints_latest_root",
      `SELECT c.checkpoint_id, c.checkpoint -> 'channel_versions' AS versions,
              ARRAY(SELECT v.key FROM json_each_text(c.checkpoint -> 'channel_versions') v
                     WHERE NOT EXISTS (SELECT 1 FROM ${blobs} b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = ''
                                          AND b.channel = v.key AND b.version = v.value)) AS unstored
         FROM ${checkpoints} c WHERE c.thread_id = $1::text AND c.checkpoint_ns = ''
        ORDER BY c.checkpoint_id DESC LIMIT 1`,
    ),
    /** $1 thread, $2 channel, $3 version, $4 type, $5 json, $6 bytes: stores a root value unless one is there. */
    putRootValue: statement(
      "thread_checkpoints_put_root_value",
      `INSERT INTO ${blobs} (thread_id, checkpoint_ns, channel, version, type, json, bytes)
       VALUES ($1::text, '', $2::text, $3::text, $4::text, $5::text, $6::bytea) ON CONFLICT DO NOTHING`,
    ),
    /**
     * $1 thread: keeps only each namespace's newest checkpoint (with its pending writes and the
     * values it references); that checkpoint loses its parent. Returns how many checkpoints went.
     */
    keepLatest: statement(
      "thread_checkpoints_keep_latest",
      `WITH latest AS (${latest}),
       gone AS (
         DELETE FROM ${checkpoints} c WHERE c.thread_id = $1::text
            AND NOT EXISTS (SELECT 1 FROM latest l WHERE l.checkpoint_ns = c.checkpoint_ns AND l.checkpoint_id = c.checkpoint_id)
         RETURNING 1
       ), w AS (
         DELETE FROM ${writes} w WHERE w.thread_id = $1::text
            AND NOT EXISTS (SELECT 1 FROM latest l WHERE l.checkpoint_ns = w.checkpoint_ns AND l.checkpoint_id = w.checkpoint_id)
       ), b AS (
         DELETE FROM ${blobs} b WHERE b.thread_id = $1::text
            AND NOT EXISTS (SELECT 1 FROM latest l JOIN ${checkpoints} c
                              ON c.thread_id = $1::text AND c.checkpoint_ns = l.checkpoint_ns AND c.checkpoint_id = l.checkpoint_id
                             WHERE l.checkpoint_ns = b.checkpoint_ns AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)
       ), p AS (
         UPDATE ${checkpoints} c SET parent_checkpoint_id = NULL FROM latest l
          WHERE c.thread_id = $1::text AND c.checkpoint_ns = l.checkpoint_ns AND c.checkpoint_id = l.checkpoint_id
       )
       SELECT count(*)::integer AS removed FROM gone`,
    ),
    /** $1 thread, $2 metadata json: merged into the newest root checkpoint's metadata; returns its id (no row: no checkpoint). */
    patchLatestMetadata: statement(
      "thread_checkpoints_patch_metadata",
      `UPDATE ${checkpoints} c SET metadata = c.metadata || $2::jsonb
        WHERE c.thread_id = $1::text AND c.checkpoint_ns = ''
          AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM ${checkpoints} m WHERE m.thread_id = $1::text AND m.checkpoint_ns = '')
       RETURNING c.checkpoint_id`,
    ),
  };
}

/** The statements of `threadCheckpointSql` for one schema. */
export type ThreadCheckpointSql = ReturnType<typeof threadCheckpointSql>;
