import { Hono } from "hono";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { assistantWire, graphOfAssistant } from "../assistants.js";
import { httpError } from "../http-errors.js";
import { AssistantCountBody, AssistantSearchBody, readBody } from "../validation.js";

type Env = { Variables: AuthVariables };

/** Why assistants cannot be created, changed or versioned here (the same words for every such route). */
const FIXED = "devmind serves one assistant per loaded graph (langgraph.json); assistants cannot be created, changed, deleted or versioned";

/**
 * LangGraph Platform's assistants (CONTRACT sections 8 and 10), as the SDK's `client.assistants`
 * calls them. Every loaded graph is an assistant: id the uuid5 of the graph id (the graph id is
 * accepted wherever an assistant id is).
 *
 * - `GET /assistants/{id}` -> Assistant; `POST /assistants/search {graph_id?, name?, metadata?,
 *   limit?, offset?, sort_by?, sort_order?, select?}` -> Assistant[] (`X-Pagination-Total`);
 *   `POST /assistants/count` -> number.
 * - `GET /assistants/{id}/graph?xray` -> the graph's nodes and edges (LangGraph's drawable JSON).
 * - `GET /assistants/{id}/schemas` -> `{graph_id, input_schema, output_schema, state_schema,
 *   config_schema, context_schema}` as far as the graph declares them at runtime.
 * - create, patch, delete, versions, latest and subgraphs: 422 REQUEST_INVALID naming the feature.
 */
export function langgraphAssistantRoutes(deps: AppDeps): Hono<Env> {
  const { runtime } = deps;
  const app = new Hono<Env>();
  const startedAt = new Date().toISOString();

  const matching = (body: { graph_id?: string | null | undefined; name?: string | null | undefined; metadata?: Record<string, unknown> | null | undefined }): string[] =>
    runtime.graphs.ids().filter((graphId) => {
      if (body.graph_id !== undefined && body.graph_id !== null && body.graph_id !== graphId) return false;
      if (body.name !== undefined && body.name !== null && !graphId.toLowerCase().includes(body.name.toLowerCase())) return false;
      const metadata: Record<string, unknown> = { created_by: "system" };
      return Object.entries(body.metadata ?? {}).every(([key, value]) => JSON.stringify(metadata[key]) === JSON.stringify(value));
    });

  app.post("/assistants/search", async (c) => {
    const body = await readBody(c, AssistantSearchBody);
    const found = matching(body).map((graphId) => assistantWire(runtime, graphId, startedAt));
    const key = body.sort_by ?? "created_at";
    const ordered = [...found].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
    // the official server's default order is newest first; every assistant here has the same time, so graph order stays
    if (body.sort_by !== undefined && body.sort_by !== null && body.sort_order !== "asc") ordered.reverse();
    const offset = body.offset ?? 0;
    const page = (body.sort_by === undefined || body.sort_by === null ? found : ordered).slice(offset, offset + (body.limit ?? 10));
    const selected = body.select === undefined || body.select === null ? page : page.map((item) => Object.fromEntries(Object.entries(item).filter(([field]) => (body.select as readonly string[] | null | undefined)?.includes(field) === true)));
    c.header("X-Pagination-Total", String(found.length));
    if (offset + page.length < found.length) c.header("X-Pagination-Next", String(offset + page.length));
    return c.json(selected);
  });
  app.post("/assistants/count", async (c) => c.json(matching(await readBody(c, AssistantCountBody)).length));
  app.post("/assistants", () => {
    throw httpError("REQUEST_INVALID", `assistants create is not supported: ${FIXED}`);
  });
  app.get("/assistants/:id", (c) => c.json(assistantWire(runtime, graphOfAssistant(runtime, c.req.param("id")), startedAt)));
  app.get("/assistants/:id/graph", async (c) => {
    const graphId = graphOfAssistant(runtime, c.req.param("id"));
    const raw = c.req.query("xray");
    if (raw !== undefined && !/^(true|false|\d{1,2})$/.test(raw)) throw httpError("REQUEST_INVALID", "xray must be true, false or a depth");
    const xray = raw === undefined || raw === "false" ? undefined : raw === "true" ? true : Number(raw);
    return c.json(await runtime.graphs.drawing(graphId, xray === undefined ? {} : { xray }));
  });
  app.get("/assistants/:id/schemas", async (c) => {
    const graphId = graphOfAssistant(runtime, c.req.param("id"));
    const schemas = await runtime.graphs.schemas(graphId);
    return c.json({ graph_id: graphId, input_schema: schemas.input, output_schema: schemas.output, state_schema: schemas.state, config_schema: schemas.config, context_schema: schemas.config });
  });
  app.get("/assistants/:id/subgraphs/*", () => {
    throw httpError("REQUEST_INVALID", "assistants subgraphs is not supported: read the graph with GET /assistants/{id}/graph?xray=true");
  });
  app.get("/assistants/:id/subgraphs", () => {
    throw httpError("REQUEST_INVALID", "assistants subgraphs is not supported: read the graph with GET /assistants/{id}/graph?xray=true");
  });
  app.patch("/assistants/:id", () => {
    throw httpError("REQUEST_INVALID", `assistants update is not supported: ${FIXED}`);
  });
  app.delete("/assistants/:id", () => {
    throw httpError("REQUEST_INVALID", `assistants delete is not supported: ${FIXED}`);
  });
  app.post("/assistants/:id/versions", () => {
    throw httpError("REQUEST_INVALID", `assistants versions is not supported: ${FIXED}`);
  });
  app.post("/assistants/:id/latest", () => {
    throw httpError("REQUEST_INVALID", `assistants setLatest is not supported: ${FIXED}`);
  });
  return app;
}
