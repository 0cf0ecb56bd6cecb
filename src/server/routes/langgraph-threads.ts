import { Hono } from "hono";
import type { StateSnapshot } from "@langchain/langgraph";
import type { ThreadRecord } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { httpError } from "../http-errors.js";
import { CheckpointId, HistoryBody, readBody, ThreadCreateBody, ThreadPatchBody, ThreadSearchBody, validate } from "../validation.js";
import { stateWire, threadWire } from "../wire.js";

/**
 * LangGraph Platform's threads (CONTRACT section 8), as the SDK's `client.threads` calls them
 * (assistants: `langgraphAssistantRoutes`):
 *
 * - `POST /threads {thread_id?, metadata?, if_exists?}` -> Thread; `GET|PATCH|DELETE /threads/{id}`;
 *   `POST /threads/search {metadata?, ids?, status?, limit?, offset?, sort_by?, sort_order?}` -> Thread[].
 *   Thread: `{thread_id, created_at, updated_at, metadata, status: idle|busy|interrupted|error,
 *   values: {messages: [...], …} | null, interrupts: {task_id: [{id, value}]}}`.
 * - `GET /threads/{id}/state` -> ThreadState `{values, next, tasks: [{id, name, interrupts}],
 *   checkpoint, parent_checkpoint, metadata, created_at}`; `GET /threads/{id}/state/{checkpoint_id}`;
 *   `POST /threads/{id}/history {limit?, before?}` -> ThreadState[] newest first.
 */
export function langgraphThreadRoutes(deps: AppDeps): Hono<{ Variables: AuthVariables }> {
  const { runtime } = deps;
  const app = new Hono<{ Variables: AuthVariables }>();

  const withState = async (thread: ThreadRecord): Promise<Record<string, unknown>> => {
    const state: StateSnapshot = await runtime.threads.state(thread.thread_id);
    return threadWire(thread, state);
  };

  app.post("/threads", async (c) => {
    const body = await readBody(c, ThreadCreateBody);
    if (body["supersteps"] !== undefined && body["supersteps"] !== null) throw httpError("REQUEST_INVALID", "supersteps are not supported");
    const thread = await runtime.threads.create({
      threadId: body.thread_id ?? undefined,
      metadata: body.metadata ?? {},
      ifExists: body.if_exists ?? "raise",
    });
    return c.json(await withState(thread));
  });
  app.post("/threads/search", async (c) => {
    const body = await readBody(c, ThreadSearchBody);
    const threads = await runtime.threads.search({
      metadata: body.metadata ?? undefined,
      ids: body.ids ?? undefined,
      status: body.status ?? undefined,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sortBy: body.sort_by ?? undefined,
      sortOrder: body.sort_order ?? undefined,
    });
    return c.json(await Promise.all(threads.map(withState)));
  });
  app.get("/threads/:id", async (c) => c.json(await withState(await runtime.threads.get(c.req.param("id")))));
  app.patch("/threads/:id", async (c) => {
    const body = await readBody(c, ThreadPatchBody);
    return c.json(await withState(await runtime.threads.patch(c.req.param("id"), body.metadata ?? {})));
  });
  app.delete("/threads/:id", async (c) => {
    await runtime.threads.delete(c.req.param("id"));
    return c.body(null, 204);
  });

  app.get("/threads/:id/state", async (c) => {
    const threadId = c.req.param("id");
    await runtime.threads.get(threadId);
    return c.json(stateWire(await runtime.threads.state(threadId), threadId));
  });
  app.get("/threads/:id/state/:checkpoint", async (c) => {
    const threadId = c.req.param("id");
    await runtime.threads.get(threadId);
    const state = await runtime.threads.stateAt(threadId, validate(CheckpointId, c.req.param("checkpoint")));
    if (state.createdAt === undefined) throw httpError("NOT_FOUND", "no such checkpoint on this thread");
    return c.json(stateWire(state, threadId));
  });
  app.post("/threads/:id/history", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, HistoryBody);
    await runtime.threads.get(threadId);
    const before = typeof body.before === "string" ? body.before : body.before?.configurable.checkpoint_id;
    const states = await runtime.threads.history(threadId, { limit: body.limit ?? 10, before });
    return c.json(states.map((state) => stateWire(state, threadId)));
  });
  return app;
}
