import { quoteIdentifier } from "../db/identifiers.js";
import { statement } from "../db/statement.js";
import type { Statement } from "../db/types.js";

/**
 * Up to this many values per statement are sent as plain scalar parameters; more go as arrays
 * through `unnest`. Scalars skip array escaping on both sides, and a LangGraph step rarely
 * changes more channels than this.
 */
export const SCALAR_ROWS_LIMIT = 4;

/**
 * `insert` is the fast path: plain INSERTs, which fail with a unique violation if a row already
 * exists. The caller then repeats the call in `conflict` mode, whose ON CONFLICT clauses give
 * the saver's semantics (checkpoints replaced, stored values kept, regular writes kept, special
 * writes replaced). Speculative insertion costs every call; a retry costs only the rare repeat.
 */
export type WriteMode = "insert" | "conflict";

/** Parameters per value row: channel/idx, …, type, json, bytes. */
export const VALUE_PARAMS = 5;

/** The rows of `count` values from parameter `firstParam` on: a VALUES list, or `unnest` of five arrays. */
export function rowsSource(firstParam: number, count: number, fixed: string, columns: [string, string, string, string, string], arrayTypes: string): string {
  if (count > SCALAR_ROWS_LIMIT) {
    const p = (i: number): string => `$${firstParam + i}`;
    return `SELECT ${fixed}, u.${columns.join(", u.")}
      FROM unnest(${[0, 1, 2, 3, 4].map((i) => `${p(i)}::${arrayTypes.split(",")[i]}[]`).join(", ")}) AS u(${columns.join(", ")})`;
  }
  const rows: string[] = [];
  for (let row = 0; row < count; row += 1) {
    const base = firstParam + row * VALUE_PARAMS;
    const casts = arrayTypes.split(",");
    rows.push(`(${fixed}, ${[0, 1, 2, 3, 4].map((i) => `$${base + i}::${casts[i]}`).join(", ")})`);
  }
  return `VALUES ${rows.join(", ")}`;
}

/** Builds and caches the `put` and `putWrites` statements of one schema by shape. */
export function writeStatements(schema: string) {
  const s = quoteIdentifier(schema);
  const cache = new Map<string, Statement>();
  const cached = (key: string, build: () => Statement): Statement => {
    let found = cache.get(key);
    if (found === undefined) {
      found = build();
      cache.set(key, found);
    }
    return found;
  };
  const shape = (count: number): string => (count > SCALAR_ROWS_LIMIT ? "n" : String(count));

  /** First parameter after the value rows that start at `first`. */
  const after = (first: number, count: number): number => first + VALUE_PARAMS * (count > SCALAR_ROWS_LIMIT ? 1 : count);
  /** The lease check of a fenced write; FOR SHARE makes a concurrent takeover wait or be seen. */
  const fenceCte = (first: number): string =>
    `fence AS (SELECT 1 FROM ${s}.runs WHERE run_id = $${first}::uuid AND lease_epoch = $${first + 1}::bigint AND status = 'running' FOR SHARE)`;
  const holds = "EXISTS (SELECT 1 FROM fence)";

  return {
    /**
     * One statement storing a checkpoint and its `count` new channel values.
     * $1 thread, $2 ns, $3 id, $4 parent id, $5 checkpoint json, $6 metadata json, then per value
     * (channel, version, type, json, bytes) as scalars, or as five arrays past SCALAR_ROWS_LIMIT;
     * when `fenced`, then the run id and lease epoch, and the statement returns `held`: false
     * means nothing was written because the lease moved.
     */
    put(count: number, mode: WriteMode, fenced = false): Statement {
      return cached(`put:${mode}:${shape(count)}:${fenced}`, () => {
        const conflict =
          mode === "conflict"
            ? ` ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
                  checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`
            : "";
        const columns = `${s}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)`;
        const checkpointInsert = fenced
          ? `INSERT INTO ${columns} SELECT $1, $2, $3, $4, $5::json, $6::jsonb WHERE ${holds}${conflict}`
          : `INSERT INTO ${columns} VALUES ($1, $2, $3, $4, $5::json, $6::jsonb)${conflict}`;
        const name = `put_${mode}_${shape(count)}${fenced ? "_fenced" : ""}`;
        const ctes: string[] = fenced ? [fenceCte(after(7, count))] : [];
        if (count > 0) {
          const source = rowsSource(7, count, "$1::text, $2::text", ["channel", "version", "type", "json", "bytes"], "text,text,text,text,bytea");
          const rows = fenced ? `SELECT * FROM (${source}) AS v WHERE ${holds}` : source;
          const blobConflict = mode === "conflict" ? " ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING" : "";
          ctes.push(`blobs AS (INSERT INTO ${s}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, json, bytes) ${rows}${blobConflict})`);
        }
        if (!fenced) return statement(name, ctes.length > 0 ? `WITH ${ctes.join(", ")} ${checkpointInsert}` : checkpointInsert);
        ctes.push(`cp AS (${checkpointInsert})`);
        return statement(name, `WITH ${ctes.join(", ")} SELECT ${holds} AS held`);
      });
    },
    /**
     * One statement storing `count` pending writes of one task.
     * $1 thread, $2 ns, $3 checkpoint id, $4 task id, $5 task path, then per write
     * (idx, channel, type, json, bytes) as scalars, or as five arrays past SCALAR_ROWS_LIMIT;
     * when `fenced`, then the run id and lease epoch (the statement returns `held`).
     * `replace` (special writes: errors, interrupts, resumes) overwrites an existing row.
     */
    putWrites(count: number, mode: WriteMode | "replace", fenced = false): Statement {
      return cached(`writes:${mode}:${shape(count)}:${fenced}`, () => {
        const source = rowsSource(6, count, "$1::text, $2::text, $3::text, $4::text, $5::text", ["idx", "channel", "type", "json", "bytes"], "integer,text,text,text,bytea");
        const conflict =
          mode === "insert"
            ? ""
            : mode === "conflict"
              ? " ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING"
              : ` ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET channel = EXCLUDED.channel,
                  type = EXCLUDED.type, json = EXCLUDED.json, bytes = EXCLUDED.bytes, task_path = EXCLUDED.task_path`;
        const table = `${s}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, json, bytes)`;
        const name = `writes_${mode}_${shape(count)}${fenced ? "_fenced" : ""}`;
        if (!fenced) return statement(name, `INSERT INTO ${table} ${source}${conflict}`);
        return statement(
          name,
          `WITH ${fenceCte(after(6, count))}, ins AS (INSERT INTO ${table} SELECT * FROM (${source}) AS v WHERE ${holds}${conflict}) SELECT ${holds} AS held`,
        );
      });
    },
  };
}

/** Flattens value rows into statement parameters matching `writeStatements` for `rows.length`. */
export function valueParams(rows: readonly (readonly [unknown, unknown, unknown, unknown, unknown])[]): unknown[] {
  if (rows.length > SCALAR_ROWS_LIMIT) return [0, 1, 2, 3, 4].map((column) => rows.map((row) => row[column]));
  return rows.flatMap((row) => [...row]);
}

/** True for PostgreSQL's unique_violation, from node-pg or PGlite. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23505";
}
