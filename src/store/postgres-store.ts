import {
  BaseStore,
  validateNamespace,
  type GetOperation,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { accessJson, type AccessFilter } from "../vocabulary/access-filter.js";
import { STORE_DEFAULTS } from "../constants.js";
import type { Database } from "../db/types.js";
import { StoreInputError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { indexTexts } from "./index-text.js";
import { checkCount, checkKey, checkNamespace, ttlMinutes, valueJson } from "./store-input.js";
import { filterConditions } from "./store-filter.js";
import { filterParams, namespacePattern, storeSql } from "./store-sql.js";
import { prepareVectors, vectorText, type SemanticSearchStatus } from "./store-vectors.js";
import { startTtlSweeper, type TtlSweeper } from "./ttl-sweeper.js";

/** Expiry of items (all times in minutes, as in LangGraph). */
export interface StoreTtlConfig {
  /** TTL of a put that names none; default: items never expire. */
  defaultTtl?: number | undefined;
  /** Whether reads push an item's expiry forward by its TTL, unless a read says otherwise; default true. */
  refreshOnRead?: boolean | undefined;
  /** `start()` runs a sweep of expired items this often; default: no periodic sweep (call `sweepExpired()`). */
  sweepIntervalMinutes?: number | undefined;
}

/** Options of `new PostgresStore(db, options)`. */
export interface PostgresStoreOptions {
  /** Semantic search: LangGraph's `{ dims, embeddings, fields }` (fields default `["$"]`, the whole value). */
  index?: IndexConfig | undefined;
  ttl?: StoreTtlConfig | undefined;
  /** Where the store says that semantic search is unavailable, and sweep results; default silent. */
  logger?: Logger | undefined;
}

/** A put with devmind's TTL: minutes, `null` for none, omitted for the configured default. */
export type StorePutOperation = PutOperation & { ttl?: number | null | undefined };
/** A get or search that overrides the configured refresh-on-read. */
export type StoreReadOptions = { refreshTtl?: boolean | undefined };

type ItemRow = { ns_path: string; key: string; value: string; created_ms: number; updated_ms: number };
/** An item row with its TTL (minutes, or null), for refresh on read. */
type StoredRow = ItemRow & { ttl_minutes: number | null };

/** UTF-16 code-unit order: any fixed order serves, as long as every writer uses the same one. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toItem(row: ItemRow): Item {
  return {
    namespace: row.ns_path.split("."),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: new Date(Number(row.created_ms)),
    updatedAt: new Date(Number(row.updated_ms)),
  };
}

/**
 * LangGraph's long-term memory store (`BaseStore`) on devmind's database seam, so the same
 * statements serve PostgreSQL and embedded PGlite. Give it to a graph with
 * `graph.compile({ checkpointer, store })`; nodes reach it as `config.store` or `getStore()`.
 *
 * - `batch` runs its reads first (grouped gets in one statement, one statement per search and per
 *   namespace listing, plus one UPDATE refreshing the expiry of what they read that has a TTL),
 *   then all its puts and deletes in one statement, so reads see the store as it was before the
 *   batch and the last put of an item wins, as in LangGraph's in-memory store.
 * - Search: namespace prefix, `filter` on top-level value fields (`$eq $ne $gt $gte $lt $lte $in
 *   $nin`), limit/offset; newest-updated first, or by cosine similarity to `query` when semantic
 *   search is ready (`semanticSearch`; items without vectors follow, unscored).
 * - TTL in minutes per put (`put(ns, key, value, index, { ttl })` or `ttl` on a batch put) or
 *   `ttl.defaultTtl`; expired items are invisible at once, reads refresh the expiry
 *   (`ttl.refreshOnRead`, or `refreshTtl` per read), `sweepExpired()` deletes them, and `start()`
 *   runs that every `ttl.sweepIntervalMinutes` until `stop()`.
 * - Semantic search with `index: { dims, embeddings, fields }` needs pgvector: installable on the
 *   PostgreSQL server, or PGlite opened with `openDatabase({ vector: true })`. Without it a search
 *   with `query` falls back to namespace and filter only; `semanticSearch` (after `setup()`) says
 *   which, and the logger warns once.
 *
 * @example
 *   const store = new PostgresStore(db, { ttl: { defaultTtl: 60 * 24 } });
 *   await store.put(["users", "u1", "memories"], "lang", { text: "prefers TypeScript" });
 *   const graph = builder.compile({ checkpointer: new PostgresCheckpointSaver(db), store });
 */
export class PostgresStore extends BaseStore {
  private readonly sql: ReturnType<typeof storeSql>;
  private readonly index: IndexConfig | undefined;
  private readonly ttl: StoreTtlConfig;
  private readonly logger: Logger;
  private prepared: Promise<SemanticSearchStatus> | undefined;
  private status: SemanticSearchStatus;
  private warnedFallback = false;
  private sweeper: TtlSweeper | undefined;

  constructor(
    private readonly db: Database,
    options: PostgresStoreOptions = {},
  ) {
    super();
    this.sql = storeSql(db.schema);
    this.index = options.index;
    this.ttl = options.ttl ?? {};
    this.logger = options.logger ?? silentLogger;
    this.status = this.index === undefined ? { status: "off" } : { status: "unavailable", reason: "not prepared yet: call setup() or use the store" };
    if (this.ttl.defaultTtl !== undefined) ttlMinutes(this.ttl.defaultTtl, undefined);
  }

  /** Whether searches with a `query` are ranked by embeddings (final after `setup()` or the first batch). */
  get semanticSearch(): SemanticSearchStatus {
    return this.status;
  }

  /**
   * Prepares semantic search when an index is configured (loads pgvector, creates the vector
   * table) and reports the outcome; idempotent, and called by the first batch anyway. The store's
   * own table comes from devmind's migrations (`migrate(db)`).
   */
  async setup(): Promise<SemanticSearchStatus> {
    if (this.index === undefined) return this.status;
    this.prepared ??= prepareVectors(this.db, this.sql, this.index.dims).then(
      (status) => {
        this.status = status;
        if (status.status === "unavailable") {
          this.logger.warn({ event: "store.semantic_search_unavailable", reason: status.reason }, "semantic search is unavailable (no pgvector): searches with a query fall back to namespace and filter");
        }
        return status;
      },
      (error: unknown) => {
        this.prepared = undefined;
        throw error;
      },
    );
    return this.prepared;
  }

  /** Starts the periodic sweep when `ttl.sweepIntervalMinutes` is set. */
  override start(): void {
    const minutes = this.ttl.sweepIntervalMinutes;
    if (minutes === undefined || this.sweeper !== undefined) return;
    if (!Number.isFinite(minutes) || minutes <= 0) throw new StoreInputError("ttl.sweepIntervalMinutes must be a positive number");
    this.sweeper = startTtlSweeper(() => this.sweepExpired(), minutes * 60_000, this.logger);
  }

  /** Stops the periodic sweep (waiting for one in progress). The database stays open: its owner closes it. */
  override async stop(): Promise<void> {
    const sweeper = this.sweeper;
    this.sweeper = undefined;
    await sweeper?.stop();
  }

  /**
   * Deletes expired items, at most `STORE_DEFAULTS.sweepBatchSize` per statement and
   * `sweepMaxBatches` statements per call (the next call continues); returns how many.
   */
  async sweepExpired(): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < STORE_DEFAULTS.sweepMaxBatches; batch += 1) {
      const deleted = (await this.db.query<{ deleted: number }>(this.sql.sweep, [STORE_DEFAULTS.sweepBatchSize])).rows[0]?.deleted ?? 0;
      total += deleted;
      if (deleted < STORE_DEFAULTS.sweepBatchSize) break;
    }
    return total;
  }

  /** Stores `value` under `namespace`/`key`; `options.ttl` in minutes (`null`: never expires). */
  override async put(namespace: string[], key: string, value: Record<string, unknown>, index?: false | string[], options: { ttl?: number | null } = {}): Promise<void> {
    validateNamespace(namespace);
    await this.batch([{ namespace, key, value, index, ttl: options.ttl } as StorePutOperation]);
  }

  /** The item, or null; `options.refreshTtl` overrides the configured refresh-on-read. */
  override async get(namespace: string[], key: string, options: StoreReadOptions = {}): Promise<Item | null> {
    validateNamespace(namespace, { allowEmpty: true, allowReservedRoot: true });
    const [item] = await this.batch([{ namespace, key, refreshTtl: options.refreshTtl } as GetOperation]);
    return item ?? null;
  }

  /** Items under `namespacePrefix` (see the class comment); `options.refreshTtl` as for `get`. */
  override async search(
    namespacePrefix: string[],
    options: { filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string; access?: AccessFilter | undefined } & StoreReadOptions = {},
  ): Promise<SearchItem[]> {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { filter, limit = STORE_DEFAULTS.searchLimit, offset = 0, query, refreshTtl, access } = options;
    const [items] = await this.batch([{ namespacePrefix, filter, limit, offset, query, refreshTtl, access } as SearchOperation]);
    return items ?? [];
  }

  /**
   * Namespaces as `listNamespaces`, only those holding an item `access` lets the caller see
   * (the auth handler's filter over `accessDocument`, in the same statement).
   */
  async listVisibleNamespaces(
    options: { prefix?: string[] | undefined; suffix?: string[] | undefined; maxDepth?: number | undefined; limit?: number; offset?: number; access?: AccessFilter | undefined },
  ): Promise<string[][]> {
    const matchConditions = [
      ...(options.prefix === undefined ? [] : [{ matchType: "prefix" as const, path: options.prefix }]),
      ...(options.suffix === undefined ? [] : [{ matchType: "suffix" as const, path: options.suffix }]),
    ];
    return this.runList({ matchConditions, maxDepth: options.maxDepth, limit: options.limit ?? STORE_DEFAULTS.listLimit, offset: options.offset ?? 0 } as ListNamespacesOperation, options.access);
  }

  /**
   * Whether the live item `namespace`/`key` exists and whether `access` lets the caller see it,
   * decided in SQL (`accessDocument`): "absent", "visible" or "hidden".
   */
  async visibility(namespace: string[], key: string, access: AccessFilter | undefined): Promise<"absent" | "visible" | "hidden"> {
    const row = (await this.db.query<{ visible: boolean }>(this.sql.visibility, [checkNamespace(namespace, false).join("."), checkKey(key), accessJson(access)])).rows[0];
    return row === undefined ? "absent" : row.visible ? "visible" : "hidden";
  }

  /** Runs `operations` (see the class comment); results in the same order. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = operations.map(() => undefined);
    const gets: { index: number; namespace: string; key: string; refresh: boolean }[] = [];
    const searches: { index: number; op: SearchOperation & StoreReadOptions }[] = [];
    const lists: { index: number; op: ListNamespacesOperation }[] = [];
    const puts = new Map<string, StorePutOperation>();
    const refreshDefault = this.ttl.refreshOnRead ?? STORE_DEFAULTS.refreshOnRead;

    operations.forEach((op, index) => {
      if ("namespacePrefix" in op) {
        checkNamespace(op.namespacePrefix, true);
        searches.push({ index, op });
      } else if ("matchConditions" in op || ("limit" in op && !("namespace" in op))) {
        lists.push({ index, op: op as ListNamespacesOperation });
      } else if ("value" in op) {
        const put = op as StorePutOperation;
        const namespace = checkNamespace(put.namespace, false);
        puts.set(JSON.stringify([namespace, checkKey(put.key)]), put);
        results[index] = undefined;
      } else if ("key" in op) {
        const namespace = checkNamespace(op.namespace, false);
        const refresh = (op as GetOperation & StoreReadOptions).refreshTtl ?? refreshDefault;
        gets.push({ index, namespace: namespace.join("."), key: checkKey(op.key), refresh });
      } else {
        throw new StoreInputError(`unsupported store operation: ${JSON.stringify(op).slice(0, 200)}`);
      }
    });

    if (this.index !== undefined && (searches.length > 0 || puts.size > 0)) await this.setup();
    await Promise.all([
      gets.length > 0 ? this.runGets(gets, results) : undefined,
      ...searches.map(async ({ index, op }) => {
        results[index] = await this.runSearch(op, refreshDefault);
      }),
      ...lists.map(async ({ index, op }) => {
        results[index] = await this.runList(op);
      }),
    ]);
    if (puts.size > 0) await this.runPuts([...puts.values()]);
    return results as OperationResults<Op>;
  }

  private async runGets(gets: { index: number; namespace: string; key: string; refresh: boolean }[], results: unknown[]): Promise<void> {
    for (const get of gets) results[get.index] = null;
    const only = gets.length === 1 ? gets[0]! : undefined;
    const { rows } =
      only !== undefined
        ? await this.db.query<StoredRow & { ord: string | number }>(this.sql.getOne, [only.namespace, only.key])
        : await this.db.query<StoredRow & { ord: string | number }>(this.sql.getMany, [gets.map((get) => get.namespace), gets.map((get) => get.key)]);
    const touched: StoredRow[] = [];
    for (const row of rows) {
      const get = gets[Number(row.ord) - 1]!;
      results[get.index] = toItem(row);
      if (get.refresh && row.ttl_minutes !== null) touched.push(row);
    }
    await this.refresh(touched);
  }

  /** Refresh on read: one UPDATE for the items read that have a TTL, none when there are none. */
  private async refresh(rows: readonly StoredRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(this.sql.refresh, [rows.map((row) => row.ns_path), rows.map((row) => row.key)]);
  }

  private async runSearch(op: SearchOperation & StoreReadOptions, refreshDefault: boolean): Promise<SearchItem[]> {
    const conditions = filterConditions(op.filter as Record<string, unknown> | undefined);
    const limit = checkCount(op.limit, "limit", STORE_DEFAULTS.searchLimit);
    const offset = checkCount(op.offset, "offset", 0);
    let vector: string | null = null;
    if (typeof op.query === "string" && op.query !== "" && this.index !== undefined) {
      if (this.status.status === "pgvector") {
        vector = vectorText(await this.index.embeddings.embedQuery(op.query), this.index.dims);
      } else if (!this.warnedFallback && this.status.status === "unavailable") {
        this.warnedFallback = true;
        this.logger.warn({ event: "store.search_unranked", reason: this.status.reason }, "search query not ranked: semantic search is unavailable, returning the namespace and filter matches");
      }
    }
    const prefix = op.namespacePrefix.length > 0;
    const access = (op as { access?: AccessFilter | undefined }).access;
    const statement = this.sql.search({
      prefix,
      filters: conditions.map((condition) => condition.op),
      vectorSchema: vector === null || this.status.status !== "pgvector" ? null : this.status.extensionSchema,
      ...(access === undefined ? {} : { access: true }),
    });
    const params: unknown[] = [];
    if (prefix) params.push(op.namespacePrefix.join("."));
    for (const condition of conditions) params.push(...filterParams(condition));
    if (access !== undefined) params.push(accessJson(access));
    if (vector !== null) params.push(vector);
    params.push(limit, offset);
    const { rows } = await this.db.query<StoredRow & { score: number | null }>(statement, params);
    if (op.refreshTtl ?? refreshDefault) await this.refresh(rows.filter((row) => row.ttl_minutes !== null));
    return rows.map((row) => ({ ...toItem(row), score: row.score === null ? undefined : Number(row.score) }));
  }

  private async runList(op: ListNamespacesOperation, access?: AccessFilter): Promise<string[][]> {
    const conditions = op.matchConditions ?? [];
    for (const condition of conditions) {
      if (condition.matchType !== "prefix" && condition.matchType !== "suffix") throw new StoreInputError(`unsupported match type ${JSON.stringify(condition.matchType)}`);
      if (!Array.isArray(condition.path) || condition.path.some((label) => typeof label !== "string" || label === "" || label.includes("\0") || label.includes("."))) {
        throw new StoreInputError("a match condition's path must be an array of labels");
      }
    }
    const maxDepth = op.maxDepth === undefined || op.maxDepth === null ? null : checkCount(op.maxDepth, "maxDepth", 0);
    // the literal labels a prefix condition starts with narrow the scan to an index range
    const prefix = conditions.find((condition) => condition.matchType === "prefix")?.path ?? [];
    const wildcard = prefix.indexOf("*");
    const leading = (wildcard === -1 ? prefix : prefix.slice(0, wildcard)).join(".");
    // a prefix without wildcards is exactly its index range: no regex needed for it
    const patterns = conditions
      .filter((condition) => !(condition.matchType === "prefix" && !condition.path.includes("*") && condition.path.join(".") === leading))
      .map((condition) => namespacePattern(condition.matchType, condition.path));
    const params: unknown[] = [patterns, maxDepth, checkCount(op.limit, "limit", STORE_DEFAULTS.listLimit), checkCount(op.offset, "offset", 0)];
    if (leading !== "") params.push(leading);
    if (access !== undefined) params.push(accessJson(access));
    const statement = this.sql.listNamespaces(leading !== "", access !== undefined);
    const { rows } = await this.db.query<{ ns: string }>(statement, params);
    return rows.map((row) => JSON.parse(row.ns) as string[]);
  }

  private async runPuts(puts: StorePutOperation[]): Promise<void> {
    // serialise and embed before touching the database: no transaction waits on a model call
    // one order for every writer, so two batches upserting the same items lock them alike (no deadlock)
    const rows = puts
      .map((op) => ({
        namespace: op.namespace.join("."),
        key: op.key,
        value: op.value === null ? null : valueJson(op.value),
        ttl: op.value === null ? null : ttlMinutes(op.ttl, this.ttl.defaultTtl),
      }))
      .sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.key, b.key));
    const putParams = [rows.map((row) => row.namespace), rows.map((row) => row.key), rows.map((row) => row.value), rows.map((row) => row.ttl)];
    if (this.index === undefined || this.status.status !== "pgvector") {
      await this.db.query(this.sql.putMany, putParams);
      return;
    }
    const vectors = await this.embedPuts(puts);
    const extensionSchema = this.status.extensionSchema;
    await this.db.transaction(async (tx) => {
      await tx.query(this.sql.putMany, putParams);
      await tx.query(this.sql.deleteVectors, [putParams[0], putParams[1]]);
      if (vectors.length > 0) {
        await tx.query(this.sql.insertVectors(extensionSchema), [vectors.map((v) => v[0]), vectors.map((v) => v[1]), vectors.map((v) => v[2]), vectors.map((v) => v[3])]);
      }
    });
  }

  /** `[ns path, key, field, vector text]` for every text the puts index. */
  private async embedPuts(puts: StorePutOperation[]): Promise<[string, string, string, string][]> {
    const index = this.index!;
    const wanted: [string, string, string, string][] = [];
    for (const op of puts) {
      if (op.value === null || op.index === false) continue;
      const paths = op.index ?? index.fields ?? ["$"];
      for (const [field, text] of indexTexts(op.value, paths)) wanted.push([op.namespace.join("."), op.key, field, text]);
    }
    if (wanted.length === 0) return [];
    const texts = [...new Set(wanted.map((entry) => entry[3]))];
    const embedded = await index.embeddings.embedDocuments(texts);
    const byText = new Map(texts.map((text, i) => [text, vectorText(embedded[i] ?? [], index.dims)]));
    return wanted.map(([namespace, key, field, text]) => [namespace, key, field, byText.get(text)!]);
  }
}
