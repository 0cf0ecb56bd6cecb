import { quoteIdentifier } from "../db/identifiers.js";
import { statement } from "../db/statement.js";
import type { Statement } from "../db/types.js";
import { rowsSource, SCALAR_ROWS_LIMIT, VALUE_PARAMS } from "./write-sql.js";

/**
 * One part of a group statement: the pending writes of one task (`special`: LangGraph's error,
 * interrupt and resume writes, which replace a stored row), or a checkpoint with `count` values.
 */
export type GroupPart = { kind: "writes"; count: number; special: boolean } | { kind: "put"; count: number };

/** Parameters a part takes: its fixed ones, then its value rows (five arrays past SCALAR_ROWS_LIMIT). */
export function partParams(part: GroupPart): number {
  return (part.kind === "put" ? 6 : 5) + VALUE_PARAMS * (part.count > SCALAR_ROWS_LIMIT ? 1 : part.count);
}

/**
 * Builds and caches, per schema, the statements that store several parts at once: the task
 * writes of one checkpoint that arrived together, and the checkpoint that follows them (group
 * commit: one statement, one commit, where the parts alone cost one each). Each part's
 * parameters follow the previous part's, in the order of `writeStatements`' own statements;
 * when fenced, the run id and lease epoch come last and the statement returns `held` (false:
 * nothing was written, the lease moved). Plain INSERTs as in `insert` mode (special writes
 * replace): a unique violation means a part was stored before, and the caller stores the parts
 * one by one with their own conflict rules.
 */
export function groupStatements(schema: string) {
  const s = quoteIdentifier(schema);
  const cache = new Map<string, Statement>();
  const holds = "EXISTS (SELECT 1 FROM fence)";
  const shape = (part: GroupPart): string =>
    `${part.kind === "put" ? "p" : part.special ? "s" : "w"}${part.count > SCALAR_ROWS_LIMIT ? "n" : String(part.count)}`;

  function partCtes(part: GroupPart, index: number, first: number, fenced: boolean): string[] {
    const p = (i: number): string => `$${first + i}`;
    if (part.kind === "writes") {
      const source = rowsSource(first + 5, part.count, `${p(0)}::text, ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text`, ["idx", "channel", "type", "json", "bytes"], "integer,text,text,text,bytea");
      const rows = fenced ? `SELECT * FROM (${source}) AS v WHERE ${holds}` : source;
      const conflict = part.special
        ? ` ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET channel = EXCLUDED.channel,
              type = EXCLUDED.type, json = EXCLUDED.json, bytes = EXCLUDED.bytes, task_path = EXCLUDED.task_path`
        : "";
      return [
        `w${index} AS (INSERT INTO ${s}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, json, bytes) ${rows}${conflict})`,
      ];
    }
    const ctes: string[] = [];
    if (part.count > 0) {
      const source = rowsSource(first + 6, part.count, `${p(0)}::text, ${p(1)}::text`, ["channel", "version", "type", "json", "bytes"], "text,text,text,text,bytea");
      const rows = fenced ? `SELECT * FROM (${source}) AS v WHERE ${holds}` : source;
      ctes.push(`b${index} AS (INSERT INTO ${s}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, json, bytes) ${rows})`);
    }
    const values = `SELECT ${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}::json, ${p(5)}::jsonb`;
    ctes.push(
      `c${index} AS (INSERT INTO ${s}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) ${values}${fenced ? ` WHERE ${holds}` : ""})`,
    );
    return ctes;
  }

  return {
    /** The statement storing `parts` in one commit (see above). */
    group(parts: readonly GroupPart[], fenced: boolean): Statement {
      const key = `${parts.map(shape).join(".")}:${fenced}`;
      let found = cache.get(key);
      if (found !== undefined) return found;
      const ctes: string[] = [];
      let first = 1;
      parts.forEach((part, index) => {
        ctes.push(...partCtes(part, index, first, fenced));
        first += partParams(part);
      });
      if (fenced) {
        ctes.unshift(`fence AS (SELECT 1 FROM ${s}.runs WHERE run_id = $${first}::uuid AND lease_epoch = $${first + 1}::bigint AND status = 'running' FOR SHARE)`);
      }
      found = statement(`group${parts.length}${fenced ? "_fenced" : ""}`, `WITH ${ctes.join(", ")} SELECT ${fenced ? holds : "true"} AS held`);
      cache.set(key, found);
      return found;
    },
  };
}
