import { Hono, type Context } from "hono";
import type { AccessFilter } from "../../vocabulary/access-filter.js";
import { hasErrorCode, RunConflictError } from "../../errors.js";
import { authorize, refuseForgedMetadata } from "../custom-auth/authorize.js";
import type { AssistantRecord } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { httpError } from "../http-errors.js";
import {
  AssistantCountBody,
  AssistantCreateBody,
  AssistantLatestBody,
  AssistantPatchBody,
  AssistantSearchBody,
  AssistantVersionsBody,
  readBody,
} from "../validation.js";

type Env = { Variables: AuthVariables };

/** A query flag as the SDK sends it (`true` / `false`), absent as undefined; 422 for anything else. */
function flagQuery(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  throw httpError("REQUEST_INVALID", `${name} must be true or false`, { field: name });
}

/** Only the fields a search asked for (`select`), all of them without one. */
function selected(assistant: AssistantRecord, select: readonly string[] | null | undefined): Record<string, unknown> {
  if (select === undefined || select === null) return { ...assistant };
  return Object.fromEntries(Object.entries(assistant).filter(([field]) => select.includes(field)));
}

/**
 * LangGraph Platform's assistants (CONTRACT sections 8 and 10), as the SDK's `client.assistants`
 * calls them, over `runtime.assistants`. Every loaded graph has a default assistant (id the uuid5
 * of the graph id; the graph id is accepted wherever an assistant id is); others are created.
 *
 * - `POST /assistants {graph_id, assistant_id?, config?, context?, metadata?, if_exists?, name?,
 *   description?}` -> Assistant; `GET|PATCH|DELETE /assistants/{id}` (PATCH merges metadata and
 *   makes a new version; DELETE answers `[id]`; with `delete_threads=true` it first deletes the
 *   assistant's threads — tagged `metadata.assistant_id` or with a run of it — stopping their runs).
 * - `POST /assistants/search {graph_id?, name?, metadata?, limit?, offset?, sort_by?, sort_order?,
 *   select?}` -> Assistant[] newest first (`X-Pagination-Total`, `X-Pagination-Next`);
 *   `POST /assistants/count` -> number.
 * - `POST /assistants/{id}/versions {metadata?, limit?, offset?}` -> versions newest first;
 *   `POST /assistants/{id}/latest {version}` -> the assistant at that version.
 * - `GET /assistants/{id}/graph?xray`, `/schemas` (`{graph_id, input_schema, output_schema,
 *   state_schema, config_schema, context_schema}`), `/subgraphs[/{namespace}]?recurse` (`{namespace:
 *   {state, input, output, config}}`, as the official server answers it).
 * Assistant: `{assistant_id, graph_id, name, description, config, context, metadata, version,
 * created_at, updated_at}`; its config and context are the defaults of its runs.
 */
export function langgraphAssistantRoutes(deps: AppDeps): Hono<Env> {
  const { runtime } = deps;
  const app = new Hono<Env>();
  // the assistant a request names, as the caller may see it (the auth handler's filter, in SQL): another user's is 404
  const visible = async (c: Context<Env>, action: "read" | "update" | "delete", extra: Record<string, unknown> = {}): Promise<{ assistant: AssistantRecord; filter: AccessFilter | undefined }> => {
    const { filter } = await authorize(c, `assistants:${action}`, { assistant_id: c.req.param("id") ?? "", ...extra });
    return { assistant: await runtime.assistants.get(c.req.param("id") ?? "", filter), filter };
  };

  app.post("/assistants", async (c) => {
    const body = await readBody(c, AssistantCreateBody);
    const { filter, value } = await authorize(c, "assistants:create", {
      assistant_id: body.assistant_id ?? undefined,
      graph_id: body.graph_id,
      config: body.config ?? undefined,
      context: body.context ?? undefined,
      metadata: { ...(body.metadata ?? {}) } as Record<string, unknown>,
      if_exists: body.if_exists ?? undefined,
      name: body.name ?? undefined,
      description: body.description ?? undefined,
    });
    refuseForgedMetadata(value.metadata, filter);
    const created = await runtime.assistants.create({
      graphId: body.graph_id,
      assistantId: body.assistant_id ?? undefined,
      config: body.config ?? undefined,
      context: body.context ?? undefined,
      metadata: c.get("authHandler") === undefined ? (body.metadata ?? undefined) : value.metadata,
      ifExists: body.if_exists ?? undefined,
      name: body.name ?? undefined,
      description: body.description ?? undefined,
    });
    // if_exists "do_nothing" on another user's assistant: refused as existing, never returned
    if (filter !== undefined) {
      await runtime.assistants.get(created.assistant_id, filter).catch((error: unknown) => {
        if (!hasErrorCode(error, "ASSISTANT_NOT_FOUND")) throw error;
        throw new RunConflictError(`assistant ${created.assistant_id} already exists`, { assistantId: created.assistant_id, conflict: "assistant_exists" });
      });
    }
    return c.json(created);
  });
  app.post("/assistants/search", async (c) => {
    const body = await readBody(c, AssistantSearchBody);
    const offset = body.offset ?? 0;
    const { filter } = await authorize(c, "assistants:search", { graph_id: body.graph_id ?? undefined, metadata: body.metadata ?? undefined, limit: body.limit ?? undefined, offset });
    const { assistants, total } = await runtime.assistants.search({
      access: filter,
      graphId: body.graph_id ?? undefined,
      name: body.name ?? undefined,
      metadata: body.metadata ?? undefined,
      limit: body.limit ?? undefined,
      offset,
      sortBy: body.sort_by ?? undefined,
      sortOrder: body.sort_order ?? undefined,
    });
    c.header("X-Pagination-Total", String(total));
    if (offset + assistants.length < total) c.header("X-Pagination-Next", String(offset + assistants.length));
    return c.json(assistants.map((assistant) => selected(assistant, body.select)));
  });
  app.post("/assistants/count", async (c) => {
    const body = await readBody(c, AssistantCountBody);
    const { filter } = await authorize(c, "assistants:search", { graph_id: body.graph_id ?? undefined, metadata: body.metadata ?? undefined });
    return c.json(await runtime.assistants.count({ graphId: body.graph_id ?? undefined, name: body.name ?? undefined, metadata: body.metadata ?? undefined, access: filter }));
  });
  app.get("/assistants/:id", async (c) => c.json((await visible(c, "read")).assistant));
  app.patch("/assistants/:id", async (c) => {
    const body = await readBody(c, AssistantPatchBody);
    const { filter, value } = await authorize(c, "assistants:update", {
      assistant_id: c.req.param("id"),
      graph_id: body.graph_id ?? undefined,
      config: body.config ?? undefined,
      context: body.context ?? undefined,
      metadata: body.metadata === undefined || body.metadata === null ? undefined : ({ ...body.metadata } as Record<string, unknown>),
      name: body.name ?? undefined,
      description: body.description ?? undefined,
    });
    refuseForgedMetadata(value.metadata, filter);
    return c.json(
      await runtime.assistants.update(
        c.req.param("id"),
        {
          graphId: body.graph_id ?? undefined,
          config: body.config ?? undefined,
          context: body.context ?? undefined,
          metadata: c.get("authHandler") === undefined ? (body.metadata ?? undefined) : value.metadata,
          name: body.name ?? undefined,
          description: body.description ?? undefined,
        },
        filter,
      ),
    );
  });
  app.delete("/assistants/:id", async (c) => {
    const deleteThreads = flagQuery(c.req.query("delete_threads"), "delete_threads") === true;
    // another user's threads may run this assistant: with an auth handler they are not the deleter's to remove
    if (deleteThreads && c.get("authHandler") !== undefined) throw httpError("REQUEST_INVALID", "delete_threads is not supported with an auth handler: delete your threads with DELETE /threads/{id}", { field: "delete_threads" });
    const { assistant, filter } = await visible(c, "delete");
    const assistantId = assistant.assistant_id;
    // its threads first: a thread whose run does not stop (409) leaves the assistant for a retry
    if (deleteThreads) await runtime.deleteAssistantThreads(assistantId);
    return c.json([await runtime.assistants.delete(assistantId, filter)]);
  });
  app.post("/assistants/:id/versions", async (c) => {
    const body = await readBody(c, AssistantVersionsBody);
    const { filter } = await visible(c, "read");
    return c.json(await runtime.assistants.versions(c.req.param("id"), { metadata: body.metadata ?? undefined, limit: body.limit ?? undefined, offset: body.offset ?? undefined, access: filter }));
  });
  app.post("/assistants/:id/latest", async (c) => {
    const body = await readBody(c, AssistantLatestBody);
    const { filter } = await visible(c, "update", { version: body.version });
    return c.json(await runtime.assistants.setLatest(c.req.param("id"), body.version, filter));
  });
  app.get("/assistants/:id/graph", async (c) => {
    const { graph_id: graphId } = (await visible(c, "read")).assistant;
    const raw = c.req.query("xray");
    if (raw !== undefined && !/^(true|false|\d{1,2})$/.test(raw)) throw httpError("REQUEST_INVALID", "xray must be true, false or a depth");
    const xray = raw === undefined || raw === "false" ? undefined : raw === "true" ? true : Number(raw);
    return c.json(await runtime.graphs.drawing(graphId, xray === undefined ? {} : { xray }));
  });
  app.get("/assistants/:id/schemas", async (c) => {
    const { graph_id: graphId } = (await visible(c, "read")).assistant;
    const schemas = await runtime.graphs.schemas(graphId);
    // as the official JS server: JavaScript graphs do not tell config and context schemas apart
    return c.json({ graph_id: graphId, input_schema: schemas.input, output_schema: schemas.output, state_schema: schemas.state, config_schema: schemas.config, context_schema: schemas.config });
  });
  const subgraphs = async (c: Context<Env>, namespace: string | undefined, recurse: string | undefined) => {
    const { graph_id: graphId } = (await visible(c, "read")).assistant;
    const found = await runtime.graphs.subgraphs(graphId, { ...(namespace === undefined ? {} : { namespace }), recurse: flagQuery(recurse, "recurse") === true });
    // as the official server: each subgraph's schemas under LangGraph's own names (not /schemas' *_schema ones)
    return Object.fromEntries(Object.entries(found).map(([ns, schemas]) => [ns, { state: schemas.state, input: schemas.input, output: schemas.output, config: schemas.config }]));
  };
  app.get("/assistants/:id/subgraphs", async (c) => c.json(await subgraphs(c, undefined, c.req.query("recurse"))));
  app.get("/assistants/:id/subgraphs/:namespace", async (c) => c.json(await subgraphs(c, c.req.param("namespace"), c.req.query("recurse"))));
  return app;
}
