import { Hono } from "hono";
import type { StateSnapshot } from "@langchain/langgraph";
import type { StateOptions, ThreadRecord } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { httpError } from "../http-errors.js";
import { hasErrorCode } from "../../errors.js";
import {
  CheckpointId,
  HistoryBody,
  intQuery,
  readBody,
  ThreadCountBody,
  ThreadCreateBody,
  ThreadPatchBody,
  ThreadPruneBody,
  ThreadSearchBody,
  ThreadStateAtBody,
  ThreadStatePatchBody,
  ThreadStateUpdateBody,
  validate,
} from "../validation.js";
import { stateWire, threadWire } from "../wire.js";
import { authorize, refuseForgedMetadata } from "../custom-auth/authorize.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import { RunConflictError } from "../../errors.js";
import { THREAD_STATE_LIMITS } from "../../runtime/threads/thread-state.js";

/** A `values` filter (state contents) is refused unless empty: threads are filtered by metadata, ids and status. */
/** The state of a thread without a checkpoint, as LangGraph's getState gives it: no values, no tasks. */
const EMPTY_STATE: StateSnapshot = { values: {}, next: [], tasks: [], config: { configurable: {} }, metadata: undefined, createdAt: undefined, parentConfig: undefined };

function refuseValuesFilter(values: Record<string, unknown> | null | undefined): void {
  if (values !== undefined && values !== null && Object.keys(values).length > 0) throw httpError("REQUEST_INVALID", "values filters are not supported by devmind serve: filter threads by metadata, ids or status", { field: "values" });
}

/** The `subgraphs` query flag of the state routes (`true` / `false`, as the SDK sends it); anything else 400. */
function subgraphsQuery(value: string | undefined): boolean {
  if (value === undefined || value === "" || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw httpError("REQUEST_INVALID", "subgraphs must be true or false", { field: "subgraphs" });
}

/**
 * LangGraph Platform's threads (CONTRACT section 8), as the SDK's `client.threads` calls them
 * (assistants: `langgraphAssistantRoutes`):
 *
 * - `POST /threads {thread_id?, metadata?, if_exists?, supersteps?}` -> Thread; `GET|PATCH|DELETE /threads/{id}`;
 *   `POST /threads/search {metadata?, ids?, status?, limit?, offset?, sort_by?, sort_order?, select?}` -> Thread[];
 *   `POST /threads/count {metadata?, status?}` -> number; `POST /threads/prune {thread_ids, strategy:
 *   delete|keep_latest}` -> `{pruned_count}`; `POST /threads/{id}/copy` -> Thread (409 while a run
 *   of it is active); `ttl: {strategy: delete, ttl: minutes}` on create and PATCH. `values` filters
 *   are refused naming them.
 *   Thread: `{thread_id, created_at, updated_at, metadata, status: idle|busy|interrupted|error,
 *   values: {messages: [...], …} | null, interrupts: {task_id: [{id, value}]}}`.
 * - `GET /threads/{id}/state` -> ThreadState `{values, next, tasks: [{id, name, interrupts}],
 *   checkpoint, parent_checkpoint, metadata, created_at}`; `GET /threads/{id}/state/{checkpoint_id}`;
 *   `POST /threads/{id}/state/checkpoint {checkpoint}`; `POST /threads/{id}/history {limit?, before?,
 *   metadata?, checkpoint?}` -> ThreadState[] newest first (`GET /threads/{id}/history?limit&before`
 *   too, as the official server has it); `POST /threads/{id}/state {values,
 *   as_node?, checkpoint_id?|checkpoint?}` (`updateState`) -> `{checkpoint, configurable}`;
 *   `PATCH /threads/{id}/state {metadata}` (`patchState`) -> 204.
 */
export function langgraphThreadRoutes(deps: AppDeps): Hono<{ Variables: AuthVariables }> {
  const { runtime } = deps;
  const app = new Hono<{ Variables: AuthVariables }>();

  // the thread's visibility is checked by the caller (visibleThread) before
  const stateAtOr404 = async (threadId: string, checkpointId: string, options: StateOptions = {}): Promise<StateSnapshot> => {
    const state = await runtime.threads.stateAt(threadId, validate(CheckpointId, checkpointId), options);
    if (state.createdAt === undefined) throw httpError("NOT_FOUND", "no such checkpoint on this thread", { checkpoint_id: checkpointId.slice(0, 100) });
    return state;
  };

  const withState = async (thread: ThreadRecord): Promise<Record<string, unknown>> => {
    const state: StateSnapshot = await runtime.threads.state(thread.thread_id);
    return threadWire(thread, state);
  };

  app.post("/threads", async (c) => {
    const body = await readBody(c, ThreadCreateBody);
    const supersteps = body.supersteps ?? [];
    if (supersteps.some((step) => step.updates.some((update) => update.command !== undefined && update.command !== null))) {
      throw httpError("REQUEST_INVALID", "supersteps[].updates[].command is not supported: give values and as_node", { field: "supersteps" });
    }
    const graphId = body.metadata?.["graph_id"];
    if (supersteps.length > 0 && (typeof graphId !== "string" || !runtime.graphs.has(graphId))) {
      throw httpError("REQUEST_INVALID", "supersteps need metadata.graph_id naming a loaded graph (the SDK's graphId)", { field: "metadata.graph_id" });
    }
    // the handler may add owner metadata; a body naming someone else in a filtered key is refused
    const { filter, value } = await authorize(c, "threads:create", { thread_id: body.thread_id ?? undefined, metadata: { ...(body.metadata ?? {}) } as Record<string, unknown>, if_exists: body.if_exists ?? "raise" });
    refuseForgedMetadata(value.metadata, filter);
    const thread = await runtime.threads.create({
      threadId: body.thread_id ?? undefined,
      metadata: value.metadata ?? {},
      ifExists: body.if_exists ?? "raise",
      ...(body.ttl === undefined || body.ttl === null ? {} : { ttlMinutes: body.ttl.ttl }),
    });
    // if_exists "do_nothing" on another user's thread: refused as an existing thread, never returned
    if (filter !== undefined) {
      await runtime.threads.get(thread.thread_id, filter).catch((error: unknown) => {
        if (!hasErrorCode(error, "THREAD_NOT_FOUND")) throw error;
        throw new RunConflictError(`thread ${thread.thread_id} already exists`, { threadId: thread.thread_id, conflict: "thread_exists" });
      });
    }
    if (supersteps.length > 0) {
      await runtime.threads.applySupersteps(
        thread.thread_id,
        supersteps.map((step) => ({ updates: step.updates.map((update) => ({ values: update.values, asNode: update.as_node ?? undefined })) })),
      );
    }
    // a thread this request made under a new id has no checkpoint and is as `create` returned it:
    // its empty state needs no read (a client-chosen id may name checkpoints written without a thread row)
    if (supersteps.length === 0 && (body.thread_id === undefined || body.thread_id === null)) return c.json(threadWire(thread, EMPTY_STATE));
    return c.json(await withState(await runtime.threads.get(thread.thread_id)));
  });
  app.post("/threads/count", async (c) => {
    const body = await readBody(c, ThreadCountBody);
    refuseValuesFilter(body.values);
    const { filter } = await authorize(c, "threads:search", { metadata: body.metadata ?? undefined, status: body.status ?? undefined });
    return c.json(await runtime.threads.count({ metadata: body.metadata ?? undefined, status: body.status ?? undefined, access: filter }));
  });
  app.post("/threads/prune", async (c) => {
    const body = await readBody(c, ThreadPruneBody);
    const keepLatest = body.strategy === "keep_latest";
    let pruned = 0;
    const { filter } = await authorize(c, keepLatest ? "threads:update" : "threads:delete", { thread_ids: body.thread_ids });
    for (const threadId of body.thread_ids) {
      try {
        // another user's thread counts as absent: not pruned
        await runtime.threads.get(threadId, filter);
        if (keepLatest) await runtime.threads.keepLatest(threadId);
        else await runtime.threads.delete(threadId);
        pruned += 1;
      } catch (error) {
        if (!hasErrorCode(error, "THREAD_NOT_FOUND")) throw error;
      }
    }
    return c.json({ pruned_count: pruned });
  });
  app.post("/threads/:id/copy", async (c) => {
    const threadId = c.req.param("id");
    // as the official server: read access to the source, and the create handler asked about the copy
    const { filter: readable } = await authorize(c, "threads:read", { thread_id: threadId });
    const source = await runtime.threads.get(threadId, readable);
    await authorize(c, "threads:create", { thread_id: undefined, metadata: { ...source.metadata } });
    return c.json(await withState(await runtime.threads.copy(threadId, readable)));
  });
  app.post("/threads/search", async (c) => {
    const body = await readBody(c, ThreadSearchBody);
    refuseValuesFilter(body.values);
    const { filter } = await authorize(c, "threads:search", { metadata: body.metadata ?? undefined, ids: body.ids ?? undefined, status: body.status ?? undefined, limit: body.limit ?? 10, offset: body.offset ?? 0 });
    const threads = await runtime.threads.search({
      access: filter,
      metadata: body.metadata ?? undefined,
      ids: body.ids ?? undefined,
      status: body.status ?? undefined,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sortBy: body.sort_by ?? undefined,
      sortOrder: body.sort_order ?? undefined,
    });
    const found = await Promise.all(threads.map(withState));
    const select = body.select;
    return c.json(select === undefined || select === null ? found : found.map((thread) => Object.fromEntries(Object.entries(thread).filter(([field]) => select.includes(field as never)))));
  });
  app.get("/threads/:id", async (c) => c.json(await withState(await visibleThread(c, runtime, "read", c.req.param("id")))));
  app.patch("/threads/:id", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, ThreadPatchBody);
    const ttlMinutes = body.ttl === undefined || body.ttl === null ? undefined : body.ttl.ttl;
    const { filter, value } = await authorize(c, "threads:update", { thread_id: threadId, metadata: { ...(body.metadata ?? {}) } as Record<string, unknown> });
    refuseForgedMetadata(value.metadata, filter);
    return c.json(await withState(await runtime.threads.patch(threadId, value.metadata ?? {}, ttlMinutes, filter)));
  });
  app.delete("/threads/:id", async (c) => {
    await visibleThread(c, runtime, "delete", c.req.param("id"));
    await runtime.threads.delete(c.req.param("id"));
    return c.body(null, 204);
  });

  app.get("/threads/:id/state", async (c) => {
    const threadId = c.req.param("id");
    await visibleThread(c, runtime, "read", threadId);
    return c.json(stateWire(await runtime.threads.state(threadId, { subgraphs: subgraphsQuery(c.req.query("subgraphs")) }), threadId));
  });
  app.post("/threads/:id/state", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, ThreadStateUpdateBody);
    const checkpointId = body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? undefined;
    const checkpointNs = body.checkpoint?.checkpoint_ns ?? "";
    await visibleThread(c, runtime, "update", threadId);
    if (checkpointId !== undefined) await stateAtOr404(threadId, checkpointId, { checkpointNs });
    const newId = await runtime.threads.updateState(threadId, body.values, { asNode: body.as_node ?? undefined, checkpointId, checkpointNs });
    // the official server answers {checkpoint}; the SDK's type reads {configurable}: both, the same ids
    const checkpoint = { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: newId };
    return c.json({ checkpoint, configurable: checkpoint });
  });
  app.patch("/threads/:id/state", async (c) => {
    const body = await readBody(c, ThreadStatePatchBody);
    await visibleThread(c, runtime, "update", c.req.param("id"));
    await runtime.threads.patchStateMetadata(c.req.param("id"), body.metadata);
    return c.body(null, 204);
  });
  app.post("/threads/:id/state/checkpoint", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, ThreadStateAtBody);
    const options: StateOptions = { checkpointNs: body.checkpoint?.checkpoint_ns ?? "", subgraphs: body.subgraphs === true };
    const checkpointId = body.checkpoint?.checkpoint_id ?? undefined;
    await visibleThread(c, runtime, "read", threadId);
    if (checkpointId !== undefined) return c.json(stateWire(await stateAtOr404(threadId, checkpointId, options), threadId));
    return c.json(stateWire(await runtime.threads.state(threadId, options), threadId));
  });
  app.get("/threads/:id/state/:checkpoint", async (c) => {
    const threadId = c.req.param("id");
    await visibleThread(c, runtime, "read", threadId);
    const state = await runtime.threads.stateAt(threadId, validate(CheckpointId, c.req.param("checkpoint")), { subgraphs: subgraphsQuery(c.req.query("subgraphs")) });
    if (state.createdAt === undefined) throw httpError("NOT_FOUND", "no such checkpoint on this thread");
    return c.json(stateWire(state, threadId));
  });
  // the official server's GET form: `?limit=` (default 10) and `?before=` (a checkpoint id), the graph's own states
  app.get("/threads/:id/history", async (c) => {
    const threadId = c.req.param("id");
    const limit = intQuery(c.req.query("limit"), "limit", 10, THREAD_STATE_LIMITS.historyMax);
    const before = c.req.query("before");
    await visibleThread(c, runtime, "read", threadId);
    const states = await runtime.threads.history(threadId, { limit, ...(before === undefined || before === "" ? {} : { before: validate(CheckpointId, before) }) });
    return c.json(states.map((state) => stateWire(state, threadId)));
  });
  app.post("/threads/:id/history", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, HistoryBody);
    await visibleThread(c, runtime, "read", threadId);
    const before = typeof body.before === "string" ? body.before : body.before?.configurable.checkpoint_id;
    const checkpointId = body.checkpoint?.checkpoint_id ?? undefined;
    const checkpointNs = body.checkpoint?.checkpoint_ns ?? undefined;
    const states = await runtime.threads.history(threadId, {
      limit: body.limit ?? 10,
      before,
      ...(body.metadata === undefined || body.metadata === null ? {} : { metadata: body.metadata }),
      ...(checkpointId === undefined ? {} : { checkpointId }),
      ...(checkpointNs === undefined ? {} : { checkpointNs }),
    });
    return c.json(states.map((state) => stateWire(state, threadId)));
  });
  return app;
}
