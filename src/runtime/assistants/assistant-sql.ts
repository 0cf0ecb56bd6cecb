import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";

/** A timestamptz as ISO-8601 UTC text with milliseconds. */
function iso(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Sort keys of assistant search (LangGraph's `sort_by`), each a fixed column. */
export const ASSISTANT_SORT_KEYS = ["assistant_id", "graph_id", "name", "created_at", "updated_at"] as const;
/** One of ASSISTANT_SORT_KEYS. */
export type AssistantSortKey = (typeof ASSISTANT_SORT_KEYS)[number];

/** Which optional filters a search or count statement has, and its order. */
export interface AssistantSearchShape {
  graphId: boolean;
  name: boolean;
  metadata: boolean;
  /** An access filter (AccessFilter) applies. */
  access: boolean;
  sortBy: AssistantSortKey;
  order: "asc" | "desc";
}

const VERSION_COLUMNS = "assistant_id, version, graph_id, name, description, config, context, metadata";

/**
 * Statements of the assistant store (migration 0009) for one schema. Every write of an assistant
 * also writes the version it becomes, in the same statement or transaction.
 */
export function assistantSql(schema: string) {
  const s = quoteIdentifier(schema);
  const assistants = `${s}.assistants`;
  const versions = `${s}.assistant_versions`;
  const columns = (a: string) =>
    `${a}.assistant_id::text AS assistant_id, ${a}.graph_id, ${a}.name, ${a}.description, ${a}.config, ${a}.context, ${a}.metadata, ${a}.version,
     ${iso(`${a}.created_at`)} AS created_at, ${iso(`${a}.updated_at`)} AS updated_at`;
  const searchCache = new Map<string, Statement>();
  const where = (shape: Omit<AssistantSearchShape, "sortBy" | "order">, next: () => string): string => {
    // only assistants of graphs this runtime loaded: the others cannot run here
    const clauses = [`a.graph_id = ANY(${next()}::text[])`];
    if (shape.graphId) clauses.push(`a.graph_id = ${next()}::text`);
    if (shape.name) clauses.push(`strpos(lower(a.name), lower(${next()}::text)) > 0`);
    if (shape.metadata) clauses.push(`a.metadata @> ${next()}::jsonb`);
    if (shape.access) clauses.push(`a.metadata @> ${next()}::jsonb`);
    return clauses.join(" AND ");
  };
  return {
    /**
     * $1 id, $2 graph, $3 name, $4 description, $5 config, $6 context, $7 metadata: inserts the
     * assistant and its version 1 unless the id exists. Returns the new row, or no row.
     */
    create: statement(
      "assistants_create",
      `WITH ins AS (
         INSERT INTO ${assistants} AS a (assistant_id, graph_id, name, description, config, context, metadata)
         VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, $7::jsonb)
         ON CONFLICT (assistant_id) DO NOTHING
         RETURNING a.*
       ), ver AS (
         INSERT INTO ${versions} (${VERSION_COLUMNS}, created_at)
         SELECT ${VERSION_COLUMNS}, created_at FROM ins
       )
       SELECT ${columns("ins")} FROM ins`,
    ),
    /** $1 id. */
    /** $1 id, $2 access filter json (`{}`: any; see AccessFilter). */
    get: statement("assistants_get", `SELECT ${columns("a")} FROM ${assistants} a WHERE a.assistant_id = $1::uuid AND a.metadata @> $2::jsonb`),
    /** $1 id: the row locked until the transaction ends (updates of one assistant take turns). */
    lock: statement("assistants_lock", `SELECT a.assistant_id::text AS assistant_id FROM ${assistants} a WHERE a.assistant_id = $1::uuid FOR UPDATE`),
    /**
     * $1 id, then each nullable (null keeps the stored value): $2 graph, $3 name, $4 description,
     * $5 config, $6 context, $7 metadata merged into the stored one. Writes the next version.
     */
    patch: statement(
      "assistants_patch",
      `WITH nv AS (SELECT COALESCE(max(v.version), 0) + 1 AS version FROM ${versions} v WHERE v.assistant_id = $1::uuid),
       upd AS (
         UPDATE ${assistants} AS a
            SET graph_id = COALESCE($2::text, a.graph_id), name = COALESCE($3::text, a.name),
                description = COALESCE($4::text, a.description), config = COALESCE($5::jsonb, a.config),
                context = COALESCE($6::jsonb, a.context), metadata = a.metadata || COALESCE($7::jsonb, '{}'::jsonb),
                version = nv.version, updated_at = clock_timestamp()
           FROM nv WHERE a.assistant_id = $1::uuid
         RETURNING a.*
       ), ver AS (
         INSERT INTO ${versions} (${VERSION_COLUMNS}, created_at)
         SELECT ${VERSION_COLUMNS}, updated_at FROM upd
       )
       SELECT ${columns("upd")} FROM upd`,
    ),
    /** $1 id, $2 version: the assistant becomes that stored version (its graph, name, config, context, metadata). */
    setLatest: statement(
      "assistants_set_latest",
      `UPDATE ${assistants} AS a
          SET graph_id = v.graph_id, name = v.name, description = v.description, config = v.config,
              context = v.context, metadata = v.metadata, version = v.version, updated_at = clock_timestamp()
         FROM ${versions} v
        WHERE a.assistant_id = $1::uuid AND v.assistant_id = a.assistant_id AND v.version = $2::integer
       RETURNING ${columns("a")}`,
    ),
    /** $1 id: deletes the assistant (its versions cascade); returns the id when there was one. */
    delete: statement("assistants_delete", `DELETE FROM ${assistants} a WHERE a.assistant_id = $1::uuid RETURNING a.assistant_id::text AS assistant_id`),
    /** $1 id, $2 metadata json (null: any), $3 limit, $4 offset: versions newest first. */
    versions: statement(
      "assistants_versions",
      `SELECT v.assistant_id::text AS assistant_id, v.version, v.graph_id, v.name, v.description, v.config, v.context, v.metadata,
              ${iso("v.created_at")} AS created_at
         FROM ${versions} v
        WHERE v.assistant_id = $1::uuid AND ($2::jsonb IS NULL OR v.metadata @> $2::jsonb)
        ORDER BY v.version DESC LIMIT $3::integer OFFSET $4::integer`,
    ),
    /** Parameters in order: loaded graph ids text[], [graph id] [name] [metadata json] [access filter json] limit offset. Rows carry `total`. */
    search(shape: AssistantSearchShape): Statement {
      const key = JSON.stringify(shape);
      const cached = searchCache.get(key);
      if (cached !== undefined) return cached;
      let n = 0;
      const next = (): string => `$${(n += 1)}`;
      const filter = where(shape, next);
      const order = shape.order === "asc" ? "ASC" : "DESC";
      const built = statement(
        "assistants_search",
        `SELECT ${columns("a")}, count(*) OVER ()::integer AS total FROM ${assistants} a WHERE ${filter}
          ORDER BY a.${shape.sortBy} ${order}, a.assistant_id ${order}
          LIMIT ${next()}::integer OFFSET ${next()}::integer`,
      );
      searchCache.set(key, built);
      return built;
    },
    /** Parameters as `search` without limit and offset. */
    count(shape: Omit<AssistantSearchShape, "sortBy" | "order">): Statement {
      let n = 0;
      const next = (): string => `$${(n += 1)}`;
      return statement("assistants_count", `SELECT count(*)::integer AS total FROM ${assistants} a WHERE ${where(shape, next)}`);
    },
  };
}

/** The statements of `assistantSql` for one schema. */
export type AssistantSql = ReturnType<typeof assistantSql>;
