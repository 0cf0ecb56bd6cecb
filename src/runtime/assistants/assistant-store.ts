import { randomUUID } from "node:crypto";
import { accessJson, type AccessFilter } from "../../vocabulary/access-filter.js";
import type { GraphRunHooks } from "../../graphs/run-hooks.js";
import { assistantIdFor } from "../../graphs/assistant-id.js";
import { ASSISTANT_DEFAULTS } from "../../constants.js";
import type { Database, Queryable, Row } from "../../db/types.js";
import { AssistantNotFoundError, RunConflictError } from "../../errors.js";
import { assistantSql, ASSISTANT_SORT_KEYS, type AssistantSortKey, type AssistantSql } from "./assistant-sql.js";
import { checkRunGraphConfig } from "../queue/run-config.js";
import { runInputError, serializeJson, type RunGraphConfig } from "../queue/run-record.js";

/** An assistant (LangGraph Platform's Assistant): a graph with its own config, context and metadata, versioned. */
export interface AssistantRecord {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  /** The config every run of the assistant starts from (a run's own config is merged over it). */
  config: RunGraphConfig;
  /** The context every run starts from (a run's own context object is merged over it). */
  context: unknown;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One stored version of an assistant. */
export type AssistantVersion = Omit<AssistantRecord, "updated_at">;

/** What an assistant is made of when created or changed. */
export interface AssistantFields {
  graphId?: string | undefined;
  name?: string | undefined;
  description?: string | undefined;
  config?: unknown;
  context?: unknown;
  metadata?: Record<string, unknown> | undefined;
}

/** Filters, order and page of `search` (LangGraph's `POST /assistants/search`). */
export interface AssistantSearchOptions {
  graphId?: string | undefined;
  /** Assistants whose name contains this text, ignoring case. */
  name?: string | undefined;
  /** Assistants whose metadata contains this object (jsonb `@>`). */
  metadata?: Record<string, unknown> | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  sortBy?: AssistantSortKey | undefined;
  sortOrder?: "asc" | "desc" | undefined;
  /** Only assistants the caller may see (the auth handler's filter over their metadata, in the same statement). */
  access?: AccessFilter | undefined;
}

/** The graphs a runtime loaded, as the assistant store needs to know them. */
export interface LoadedGraphs {
  ids(): string[];
  /** The graph's run hooks: its description, and the check of the config and context its runs take. */
  hooks(id: string): Pick<GraphRunHooks, "checkInput" | "description">;
}

/**
 * What `runtime.assistants` offers (the HTTP API's /assistants and the CLI use only this), so
 * callers depend on the operations, not on the store class behind them (AssistantStore).
 */
export interface AssistantsApi {
  /** Creates an assistant (a new uuid unless `assistantId`); an existing id: `ifExists` "raise" (409) or "do_nothing" (the stored one). */
  create(fields: AssistantFields & { assistantId?: string | undefined; ifExists?: "raise" | "do_nothing" | undefined }): Promise<AssistantRecord>;
  /** The assistant an id names: its uuid, or a loaded graph's id (its default assistant). ASSISTANT_NOT_FOUND otherwise. */
  get(idOrGraph: string, access?: AccessFilter): Promise<AssistantRecord>;
  /** Changes the given fields (metadata is merged), making a new version that becomes the current one. */
  update(idOrGraph: string, fields: AssistantFields, access?: AccessFilter): Promise<AssistantRecord>;
  /** Deletes the assistant and its versions; returns its id. */
  delete(idOrGraph: string, access?: AccessFilter): Promise<string>;
  /** Makes stored `version` the current one. */
  setLatest(idOrGraph: string, version: number, access?: AccessFilter): Promise<AssistantRecord>;
  /** The assistant's versions, newest first, optionally only those whose metadata contains `metadata`. */
  versions(idOrGraph: string, options?: { metadata?: Record<string, unknown> | undefined; limit?: number | undefined; offset?: number | undefined; access?: AccessFilter | undefined }): Promise<AssistantVersion[]>;
  /** A page of assistants matching every filter and how many match in all. */
  search(options?: AssistantSearchOptions): Promise<{ assistants: AssistantRecord[]; total: number }>;
  /** How many assistants match every filter. */
  count(options?: Pick<AssistantSearchOptions, "graphId" | "name" | "metadata" | "access">): Promise<number>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The assistants table (migration 0009), as `runtime.assistants`. Every loaded graph has its
 * default assistant (id `assistantIdFor(graphId)`, name the graph id, metadata
 * `{created_by: "system"}`), written the first time this store is used; it can be updated like
 * any other. Only assistants of loaded graphs are found: another graph's cannot run here. An
 * assistant of the built-in agent carries no config or context (the agent takes `limits`).
 *
 * @example
 *   const bot = await runtime.assistants.create({ graphId: "echo", name: "loud", context: { volume: 11 } });
 *   await runtime.runs.create({ assistantId: bot.assistant_id, input: { text: "hi" } });
 */
export class AssistantStore implements AssistantsApi {
  private readonly sql: AssistantSql;
  private defaults: Promise<void> | undefined;

  /**
   * `defaults`: per graph id, the config and context its default assistant is created with
   * (LANGGRAPH_CONFIG, `config.graphDefaults`); applied when the default assistant is first written,
   * never over one that exists (LangGraph's `if_exists: do_nothing`). The built-in agent takes none.
   */
  constructor(
    private readonly db: Database,
    private readonly graphs: LoadedGraphs,
    private readonly defaultValues: Readonly<Record<string, { config: Record<string, unknown>; context?: unknown }>> = {},
  ) {
    this.sql = assistantSql(db.schema);
  }

  /** Creates an assistant (a new uuid unless `assistantId`); an existing id: `ifExists` "raise" (409) or "do_nothing" (the stored one). */
  async create(fields: AssistantFields & { assistantId?: string | undefined; ifExists?: "raise" | "do_nothing" | undefined }): Promise<AssistantRecord> {
    await this.ensureDefaults();
    const graphId = this.checkGraph(fields.graphId);
    const assistantId = fields.assistantId === undefined ? randomUUID() : checkUuid(fields.assistantId);
    const values = this.values(graphId, fields);
    const row = (await this.db.query(this.sql.create, [assistantId, graphId, fields.name ?? graphId, fields.description ?? null, values.config ?? "{}", values.context ?? "{}", values.metadata ?? "{}"])).rows[0];
    if (row !== undefined) return assistantFromRow(row);
    if ((fields.ifExists ?? "raise") === "raise") throw new RunConflictError(`assistant ${assistantId} already exists`, { assistantId, conflict: "assistant_exists" });
    return this.get(assistantId);
  }

  /** The assistant an id names: its uuid, or a loaded graph's id (its default assistant). ASSISTANT_NOT_FOUND otherwise. */
  async get(idOrGraph: string, access?: AccessFilter, tx?: Queryable): Promise<AssistantRecord> {
    await this.ensureDefaults();
    const assistantId = this.idOf(idOrGraph);
    const row = (await (tx ?? this.db).query(this.sql.get, [assistantId, accessJson(access)])).rows[0];
    if (row === undefined) throw new AssistantNotFoundError(idOrGraph);
    const assistant = assistantFromRow(row);
    if (!this.graphs.ids().includes(assistant.graph_id)) throw new AssistantNotFoundError(idOrGraph, `: its graph ${assistant.graph_id} is not loaded here`);
    return assistant;
  }

  /** Changes the given fields (metadata is merged), making a new version that becomes the current one. */
  async update(idOrGraph: string, fields: AssistantFields, access?: AccessFilter): Promise<AssistantRecord> {
    const current = await this.get(idOrGraph, access);
    const graphId = fields.graphId === undefined ? current.graph_id : this.checkGraph(fields.graphId);
    const values = this.values(graphId, { ...fields, ...(fields.graphId !== undefined && fields.config === undefined ? { config: current.config } : {}) });
    const row = await this.db.transaction(async (tx) => {
      await tx.query(this.sql.lock, [current.assistant_id]);
      const result = await tx.query(this.sql.patch, [current.assistant_id, fields.graphId ?? null, fields.name ?? null, fields.description ?? null, values.config, values.context, values.metadata]);
      return result.rows[0];
    });
    if (row === undefined) throw new AssistantNotFoundError(idOrGraph);
    return assistantFromRow(row);
  }

  /** Deletes the assistant and its versions; its runs keep their records. */
  async delete(idOrGraph: string, access?: AccessFilter): Promise<string> {
    const { assistant_id: assistantId } = await this.get(idOrGraph, access);
    const row = (await this.db.query(this.sql.delete, [assistantId])).rows[0];
    if (row === undefined) throw new AssistantNotFoundError(idOrGraph);
    return assistantId;
  }

  /** Makes stored `version` the current one; ASSISTANT_NOT_FOUND for an unknown version. */
  async setLatest(idOrGraph: string, version: number, access?: AccessFilter): Promise<AssistantRecord> {
    const { assistant_id: assistantId } = await this.get(idOrGraph, access);
    if (!Number.isInteger(version) || version < 1) throw runInputError("version must be a positive integer", { field: "version" });
    const row = (await this.db.query(this.sql.setLatest, [assistantId, version])).rows[0];
    if (row === undefined) throw new AssistantNotFoundError(idOrGraph, ` version ${version}`);
    return assistantFromRow(row);
  }

  /** The assistant's versions, newest first, optionally only those whose metadata contains `metadata`. */
  async versions(idOrGraph: string, options: { metadata?: Record<string, unknown> | undefined; limit?: number | undefined; offset?: number | undefined; access?: AccessFilter | undefined } = {}): Promise<AssistantVersion[]> {
    const { assistant_id: assistantId } = await this.get(idOrGraph, options.access);
    const { limit, offset } = page(options.limit, options.offset);
    const metadata = options.metadata === undefined ? null : serializeJson(options.metadata, "metadata");
    const result = await this.db.query(this.sql.versions, [assistantId, metadata, limit, offset]);
    return result.rows.map((row) => {
      const { updated_at: _updated, ...version } = assistantFromRow({ ...row, updated_at: row["created_at"] });
      return version;
    });
  }

  /** A page of assistants matching every filter (newest first by default) and how many match in all. */
  async search(options: AssistantSearchOptions = {}): Promise<{ assistants: AssistantRecord[]; total: number }> {
    await this.ensureDefaults();
    const { limit, offset } = page(options.limit, options.offset);
    const sortBy = options.sortBy ?? "created_at";
    if (!ASSISTANT_SORT_KEYS.includes(sortBy)) throw runInputError(`sort_by must be one of ${ASSISTANT_SORT_KEYS.join(", ")}`, { field: "sort_by" });
    const { shape, values } = this.filters(options);
    const result = await this.db.query(this.sql.search({ ...shape, sortBy, order: options.sortOrder ?? "desc" }), [...values, limit, offset]);
    const total = result.rows.length > 0 ? Number(result.rows[0]?.["total"]) : offset === 0 ? 0 : await this.count(options);
    return { assistants: result.rows.map(assistantFromRow), total };
  }

  /** How many assistants match every filter. */
  async count(options: Pick<AssistantSearchOptions, "graphId" | "name" | "metadata" | "access"> = {}): Promise<number> {
    await this.ensureDefaults();
    const { shape, values } = this.filters(options);
    return Number((await this.db.query(this.sql.count(shape), values)).rows[0]?.["total"] ?? 0);
  }

  private filters(options: Pick<AssistantSearchOptions, "graphId" | "name" | "metadata" | "access">) {
    const values: unknown[] = [this.graphs.ids()];
    if (options.graphId !== undefined) values.push(options.graphId);
    if (options.name !== undefined) values.push(options.name);
    if (options.metadata !== undefined) values.push(serializeJson(options.metadata, "metadata"));
    if (options.access !== undefined) values.push(accessJson(options.access));
    return { shape: { graphId: options.graphId !== undefined, name: options.name !== undefined, metadata: options.metadata !== undefined, access: options.access !== undefined }, values };
  }

  /** Writes the default assistant of every loaded graph that has none (once per store). */
  /**
   * Writes every loaded graph's default assistant once (memoised). Call it before `get` with a
   * transaction: the first write goes through the database itself, which an embedded database's
   * one connection would only serve after that transaction.
   */
  ready(): Promise<void> {
    return this.ensureDefaults();
  }

  private ensureDefaults(): Promise<void> {
    this.defaults ??= (async () => {
      // newest first is the search order: written last to first, the first loaded graph lists first
      for (const graphId of [...this.graphs.ids()].reverse()) {
        const description = this.graphs.hooks(graphId).description ?? null;
        // LANGGRAPH_CONFIG's config and context for the graph, checked as the graph's runs take them
        const given = this.defaultValues[graphId];
        const values = given === undefined ? { config: null, context: null } : this.values(graphId, { config: given.config, context: given.context });
        await this.db.query(this.sql.create, [assistantIdFor(graphId), graphId, graphId, description, values.config ?? "{}", values.context ?? "{}", JSON.stringify(ASSISTANT_DEFAULTS.defaultMetadata)]);
      }
    })();
    this.defaults.catch(() => (this.defaults = undefined));
    return this.defaults;
  }

  private idOf(idOrGraph: string): string {
    if (this.graphs.ids().includes(idOrGraph)) return assistantIdFor(idOrGraph);
    if (!UUID.test(idOrGraph)) throw new AssistantNotFoundError(idOrGraph, `; give an assistant id or a loaded graph (${this.graphs.ids().join(", ") || "none"})`);
    return idOrGraph.toLowerCase();
  }

  private checkGraph(graphId: string | undefined): string {
    if (graphId === undefined || !this.graphs.ids().includes(graphId)) {
      throw runInputError(`graph_id ${JSON.stringify(String(graphId).slice(0, 100))} is not a graph loaded here (${this.graphs.ids().join(", ") || "none"})`, { field: "graph_id" });
    }
    return graphId;
  }

  /** The JSON of the given config, context and metadata (null when not given), as the graph's runs take them. */
  private values(graphId: string, fields: AssistantFields): { config: string | null; context: string | null; metadata: string | null } {
    const config = fields.config === undefined || fields.config === null ? null : checkRunGraphConfig(fields.config);
    const context = fields.context === undefined || fields.context === null ? null : fields.context;
    // an assistant's config and context go to every run of it: the graph's own check applies
    this.graphs.hooks(graphId).checkInput?.(null, { config, context });
    if (fields.metadata !== undefined && (fields.metadata === null || typeof fields.metadata !== "object" || Array.isArray(fields.metadata))) {
      throw runInputError("metadata must be an object", { field: "metadata" });
    }
    return {
      config: config === null ? null : JSON.stringify(config),
      context: context === null ? null : serializeJson(context, "context"),
      metadata: fields.metadata === undefined ? null : serializeJson(fields.metadata, "metadata"),
    };
  }
}

function checkUuid(id: string): string {
  if (!UUID.test(id)) throw runInputError("assistant_id must be a uuid", { field: "assistant_id" });
  return id.toLowerCase();
}

function page(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  const checkedLimit = limit ?? ASSISTANT_DEFAULTS.pageSize;
  const checkedOffset = offset ?? 0;
  if (!Number.isInteger(checkedLimit) || checkedLimit < 1 || checkedLimit > ASSISTANT_DEFAULTS.pageMax) throw runInputError(`limit must be an integer from 1 to ${ASSISTANT_DEFAULTS.pageMax}`, { field: "limit" });
  if (!Number.isInteger(checkedOffset) || checkedOffset < 0) throw runInputError("offset must be a non-negative integer", { field: "offset" });
  return { limit: checkedLimit, offset: checkedOffset };
}

function assistantFromRow(row: Row): AssistantRecord {
  return {
    assistant_id: String(row["assistant_id"]),
    graph_id: String(row["graph_id"]),
    name: String(row["name"]),
    description: (row["description"] as string | null) ?? null,
    config: (row["config"] as RunGraphConfig | null) ?? {},
    context: row["context"] ?? {},
    metadata: (row["metadata"] as Record<string, unknown> | null) ?? {},
    version: Number(row["version"]),
    created_at: String(row["created_at"]),
    updated_at: String(row["updated_at"]),
  };
}
