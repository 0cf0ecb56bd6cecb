import { STORE_DEFAULTS } from "../constants.js";
import { quoteIdentifier } from "../db/identifiers.js";
import { statement } from "../db/statement.js";
import type { Statement } from "../db/types.js";

/** An item is visible while it has no expiry or its expiry is still ahead. */
function live(alias: string): string {
  return `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now())`;
}

/** Milliseconds since the epoch, so both engines hand back a plain number. */
function epochMs(expression: string): string {
  return `(extract(epoch FROM ${expression}) * 1000)::float8`;
}

/**
 * "The path is `p` or starts with `p.`": one index range `[p, p || '/')` (`/` follows `.` in byte
 * order) and a cheap recheck that drops siblings like `p-x` the range also holds. One range, not
 * an OR of two, so a prepared statement's generic plan stays a single index range scan.
 */
function underPrefix(alias: string, p: string): string {
  return `(${alias}.ns_path >= ${p}::text AND ${alias}.ns_path < ${p}::text || '/'
      AND (length(${alias}.ns_path) = length(${p}::text) OR substr(${alias}.ns_path, length(${p}::text) + 1, 1) = '.'))`;
}

/** Columns of an item row: ns_path, key, value (JSON text), created_ms, updated_ms. */
function itemColumns(alias: string): string {
  return `${alias}.ns_path, ${alias}.key, ${alias}.value::text AS value, ${epochMs(`${alias}.created_at`)} AS created_ms, ${epochMs(`${alias}.updated_at`)} AS updated_ms`;
}

/** One condition of a search's `filter`, already reduced to an SQL operator (values are parameters). */
export type FilterCondition =
  | { op: "eq" | "ne"; key: string; json: string }
  | { op: "has" | "lacks"; object: string }
  | { op: "gt" | "gte" | "lt" | "lte"; key: string; number: number }
  | { op: "in" | "nin"; key: string; json: string }
  | { op: "false" };

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/**
 * A namespace match condition as a regular expression over the stored path (labels joined with
 * `.`, which no label contains): a prefix matches the first labels, a suffix the last ones, `*`
 * any one label; every other label is matched literally.
 */
export function namespacePattern(matchType: "prefix" | "suffix", path: readonly string[]): string {
  const labels = path.map((label) => (label === "*" ? "[^.]+" : label.replace(REGEX_SPECIAL, "\\$&"))).join("\\.");
  if (path.length === 0) return "";
  return matchType === "prefix" ? `^${labels}(\\.|$)` : `(^|\\.)${labels}$`;
}

/** What changes the text of a search statement (never the values). */
export interface SearchShape {
  /** false: the whole store (`namespacePrefix: []`) */
  prefix: boolean;
  filters: readonly FilterCondition["op"][];
  /** rank by cosine similarity to a query vector (pgvector); the vector type's schema */
  vectorSchema: string | null;
  /** only items an access filter (AccessFilter over `accessDocument`) lets the caller see */
  access?: boolean | undefined;
}

/**
 * A stored item as an auth handler's filter sees it, as the official server builds it: its value
 * with `namespace` (the labels, an array) and `key` over any keys of the same names.
 */
export function accessDocument(alias: string): string {
  return `(${alias}.value || jsonb_build_object('namespace', to_jsonb(string_to_array(${alias}.ns_path, '.')), 'key', ${alias}.key))`;
}

const COMPARE = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;


/**
 * Statements of the memory store for one schema (a validated identifier). Namespaces are stored
 * as their labels joined with `.` (labels cannot contain it) in a `COLLATE "C"` column, so "under
 * prefix P" is an index range (see `underPrefix`).
 */
export function storeSql(schema: string) {
  const s = quoteIdentifier(schema);
  const items = `${s}.store_items`;
  const vectors = `${s}.store_vectors`;
  const searchCache = new Map<string, Statement>();
  const listText = (range: boolean, access = false): string => {
    const narrow = `${range ? `AND ${underPrefix("i", "$5")}` : ""}${access ? ` AND ${accessDocument("i")} @> ${range ? "$6" : "$5"}::jsonb` : ""}`;
    return `SELECT array_to_json(ns)::text AS ns FROM (
       SELECT DISTINCT CASE WHEN $2::integer IS NULL THEN a ELSE a[1:$2::integer] END AS ns
         FROM (
           SELECT string_to_array(p.ns_path, '.') AS a
             FROM (SELECT DISTINCT i.ns_path FROM ${items} i WHERE ${live("i")} ${narrow}) p
            WHERE p.ns_path ~ ALL ($1::text[])
         ) x
     ) n
     ORDER BY n.ns COLLATE "C"
     LIMIT $3 OFFSET $4`;
  };
  const listAll = statement("store_namespaces", listText(false));
  const listInRange = statement("store_namespaces_range", listText(true));
  const listAllVisible = statement("store_namespaces_visible", listText(false, true));
  const listInRangeVisible = statement("store_namespaces_range_visible", listText(true, true));

  return {
    vectorsTable: vectors,
    /** $1 ns path, $2 key: the live item (the common single get, without array parameters). */
    getOne: statement(
      "store_get_one",
      `SELECT 1 AS ord, ${itemColumns("i")}, i.ttl_minutes FROM ${items} i
        WHERE i.ns_path = $1::text AND i.key = $2::text AND ${live("i")}`,
    ),
    /**
     * $1 ns path, $2 key, $3 access filter json: whether the live item is there and whether the
     * filter lets the caller see it (`accessDocument`); no row when there is no such item.
     */
    visibility: statement(
      "store_visibility",
      `SELECT ${accessDocument("i")} @> $3::jsonb AS visible FROM ${items} i WHERE i.ns_path = $1::text AND i.key = $2::text AND ${live("i")}`,
    ),
    /** $1 ns paths, $2 keys (parallel arrays, one entry per get): the live items found, each with the 1-based `ord` of its request. */
    getMany: statement(
      "store_get",
      `SELECT r.ord, ${itemColumns("i")}, i.ttl_minutes
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(ns_path, key, ord)
         JOIN ${items} i ON i.ns_path = r.ns_path AND i.key = r.key
        WHERE ${live("i")}`,
    ),
    /**
     * $1 ns paths, $2 keys: pushes the expiry of those live items that have a TTL to now + TTL
     * (refresh on read; a separate statement so reads of items without TTL stay plain SELECTs).
     */
    refresh: statement(
      "store_refresh",
      `UPDATE ${items} i SET expires_at = now() + i.ttl_minutes * interval '1 minute'
         FROM unnest($1::text[], $2::text[]) AS k(ns_path, key)
        WHERE i.ns_path = k.ns_path AND i.key = k.key AND i.ttl_minutes IS NOT NULL AND ${live("i")}`,
    ),
    /**
     * $1 ns paths, $2 keys, $3 values as JSON text (NULL: delete), $4 TTLs in minutes (NULL: none),
     * one entry per distinct item: deletes and upserts them all. Writing over an expired item that
     * the sweep has not removed yet starts a new item (new created_at).
     */
    putMany: statement(
      "store_put",
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS t(ns_path, key, value, ttl)
       ),
       removed AS (
         DELETE FROM ${items} i USING input t
          WHERE t.value IS NULL AND i.ns_path = t.ns_path AND i.key = t.key
          RETURNING 1
       ),
       written AS (
         INSERT INTO ${items} AS i (ns_path, key, value, ttl_minutes, expires_at)
         SELECT ns_path, key, value::jsonb, ttl, now() + ttl * interval '1 minute' FROM input WHERE value IS NOT NULL
         ON CONFLICT (ns_path, key) DO UPDATE SET
           value = excluded.value,
           ttl_minutes = excluded.ttl_minutes,
           expires_at = excluded.expires_at,
           updated_at = now(),
           created_at = CASE WHEN i.expires_at IS NOT NULL AND i.expires_at <= now() THEN now() ELSE i.created_at END
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM removed)::integer AS removed, (SELECT count(*) FROM written)::integer AS written`,
    ),
    /** $1 limit: deletes up to $1 expired items; returns how many. */
    sweep: statement(
      "store_sweep",
      `WITH doomed AS (
         SELECT ns_path, key FROM ${items}
          WHERE expires_at IS NOT NULL AND expires_at <= now()
          LIMIT $1
          FOR UPDATE SKIP LOCKED
       ),
       gone AS (
         DELETE FROM ${items} i USING doomed d WHERE i.ns_path = d.ns_path AND i.key = d.key RETURNING 1
       )
       SELECT count(*)::integer AS deleted FROM gone`,
    ),
    /**
     * Search (see `SearchShape`): prefix, filter parameters, query vector, limit, offset. Rows carry
     * `ttl_minutes` and `score`. A prepared statement, or plain text once `STORE_DEFAULTS.preparedSearchShapes` shapes are.
     */
    search(shape: SearchShape): Statement | string {
      const cacheKey = JSON.stringify(shape);
      const cached = searchCache.get(cacheKey);
      if (cached !== undefined) return cached;
      let n = 0;
      const next = (): string => `$${++n}`;
      const where = [live("i")];
      if (shape.prefix) {
        const p = next();
        where.push(underPrefix("i", p));
      }
      for (const op of shape.filters) where.push(filterSql(op, next));
      if (shape.access === true) where.push(`${accessDocument("i")} @> ${next()}::jsonb`);
      const vectorParam = shape.vectorSchema === null ? null : next();
      const limit = next();
      const offset = next();
      const score =
        vectorParam === null
          ? "NULL::float8"
          : `(SELECT max(1 - (v.embedding OPERATOR(${quoteIdentifier(shape.vectorSchema!)}.<=>) ${vectorParam}::${quoteIdentifier(shape.vectorSchema!)}.vector))
                FROM ${vectors} v WHERE v.ns_path = i.ns_path AND v.key = i.key)`;
      const order = (alias: string): string =>
        `${vectorParam === null ? "" : `${alias}.score DESC NULLS LAST, `}${alias}.updated_at DESC, ${alias}.ns_path, ${alias}.key`;
      // the page is chosen on raw columns; only its rows are converted to text (not every match)
      const text = `SELECT ${itemColumns("h")}, h.ttl_minutes, h.score FROM (
         SELECT i.ns_path, i.key, i.value, i.created_at, i.updated_at, i.ttl_minutes, ${score} AS score
           FROM ${items} i
          WHERE ${where.join("\n            AND ")}
          ORDER BY ${order("i").replace("i.score", "score")}
          LIMIT ${limit} OFFSET ${offset}
       ) h
       ORDER BY ${order("h")}`;
      // filters shape the text, and callers choose filters: past a bound, new shapes run unprepared
      // rather than growing this cache and every connection's prepared statements without end
      if (searchCache.size >= STORE_DEFAULTS.preparedSearchShapes) return text;
      const built = statement("store_search", text);
      searchCache.set(cacheKey, built);
      return built;
    },
    /**
     * listNamespaces: $1 regular expressions the namespace path must all match (one per match
     * condition, see `namespacePattern`), $2 max depth (NULL: whole namespaces), $3 limit,
     * $4 offset, and with `range` $5: the literal leading labels of a prefix condition joined with
     * `.`, which narrows the scan to that index range; with `access` then an access filter json
     * (only namespaces with an item the caller may see). Rows: `ns` as JSON text of the labels.
     */
    listNamespaces(range: boolean, access = false): Statement {
      if (access) return range ? listInRangeVisible : listAllVisible;
      return range ? listInRange : listAll;
    },
    /** The schema and type (e.g. `vector(64)`) of the embedding column, or no row without the table. */
    vectorColumn: `SELECT format_type(a.atttypid, a.atttypmod) AS type
      FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = 'embedding' AND NOT a.attisdropped`,
    /** Where the pgvector extension lives, if it is installed. */
    vectorExtension: `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`,
    /** Creates the vector table for `dims` dimensions; vectorSchema holds the pgvector type. */
    createVectors(vectorSchema: string, dims: number): string {
      return `CREATE TABLE IF NOT EXISTS ${vectors} (
        ns_path   text COLLATE "C" NOT NULL,
        key       text COLLATE "C" NOT NULL,
        field     text COLLATE "C" NOT NULL,
        embedding ${quoteIdentifier(vectorSchema)}.vector(${Math.trunc(dims)}) NOT NULL,
        PRIMARY KEY (ns_path, key, field),
        FOREIGN KEY (ns_path, key) REFERENCES ${items} (ns_path, key) ON DELETE CASCADE
      )`;
    },
    /** $1 ns paths, $2 keys: removes every vector of those items (they are being rewritten). */
    deleteVectors: `DELETE FROM ${vectors} v USING unnest($1::text[], $2::text[]) AS k(ns_path, key)
      WHERE v.ns_path = k.ns_path AND v.key = k.key`,
    /** $1 ns paths, $2 keys, $3 fields, $4 vectors as pgvector text (`[0.1,0.2]`). */
    insertVectors(vectorSchema: string): string {
      return `INSERT INTO ${vectors} (ns_path, key, field, embedding)
        SELECT ns_path, key, field, embedding::${quoteIdentifier(vectorSchema)}.vector
          FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(ns_path, key, field, embedding)
        ON CONFLICT (ns_path, key, field) DO UPDATE SET embedding = excluded.embedding`;
    },
  };
}

/** The SQL of one filter condition; `next()` hands out its parameter placeholders. */
function filterSql(op: FilterCondition["op"], next: () => string): string {
  switch (op) {
    case "eq": {
      const [key, json] = [next(), next()];
      return `i.value -> ${key}::text = ${json}::jsonb`;
    }
    case "ne": {
      const [key, json] = [next(), next()];
      return `i.value -> ${key}::text IS DISTINCT FROM ${json}::jsonb`;
    }
    case "has":
      // containment of a one-field object: for a scalar it is exact equality, found without copying the field
      return `i.value @> ${next()}::jsonb`;
    case "lacks":
      return `NOT (i.value @> ${next()}::jsonb)`;
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const [key, number] = [next(), next()];
      // only JSON numbers compare (LangGraph's in-memory store compares Number(value): NaN for text)
      return `(CASE WHEN jsonb_typeof(i.value -> ${key}::text) = 'number' THEN (i.value ->> ${key}::text)::float8 END) ${COMPARE[op]} ${number}::float8`;
    }
    case "in": {
      const [key, json] = [next(), next()];
      return `EXISTS (SELECT 1 FROM jsonb_array_elements(${json}::jsonb) e(v) WHERE e.v = i.value -> ${key}::text)`;
    }
    case "nin": {
      const [key, json] = [next(), next()];
      return `NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${json}::jsonb) e(v) WHERE e.v = i.value -> ${key}::text)`;
    }
    case "false":
      return "false";
  }
}

/** The parameters of one filter condition, in `filterSql`'s order. */
export function filterParams(condition: FilterCondition): unknown[] {
  switch (condition.op) {
    case "eq":
    case "ne":
    case "in":
    case "nin":
      return [condition.key, condition.json];
    case "has":
    case "lacks":
      return [condition.object];
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return [condition.key, condition.number];
    case "false":
      return [];
  }
}
