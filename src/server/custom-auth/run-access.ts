import type { Context } from "hono";
import { hasErrorCode, RunNotFoundError } from "../../errors.js";
import type { AccessFilter } from "../../vocabulary/access-filter.js";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import type { RunCreateBody } from "../validation.js";
import { authorize, refuseForgedMetadata } from "./authorize.js";
import { visibleThread } from "./thread-access.js";

type Ctx = Context<{ Variables: AuthVariables }>;

/** What a run request may touch: the filter its thread must pass, and metadata a thread it creates gets (the handler's owner). */
export interface RunAccess {
  filter: AccessFilter | undefined;
  threadMetadata: Record<string, unknown>;
}

/**
 * Asks the auth handler about `threads:create_run` as the official server does (the value carries
 * the thread, assistant, metadata, multitask options and the request's kwargs); the handler may
 * add metadata (the run's and, for a thread the run creates, the thread's) and return the filter
 * an existing thread must pass (applied in SQL by `startRun`: another user's thread is 404).
 * Metadata naming another user in a filtered key is refused (403, nothing created).
 */
export async function authorizeRunCreate(c: Ctx, threadId: string | null, body: RunCreateBody): Promise<{ body: RunCreateBody; access: RunAccess }> {
  if (c.get("authHandler") === undefined) return { body, access: { filter: undefined, threadMetadata: {} } };
  const value = {
    thread_id: threadId ?? undefined,
    assistant_id: body.assistant_id,
    status: "pending",
    metadata: { ...(body.metadata ?? {}) } as Record<string, unknown>,
    multitask_strategy: body.multitask_strategy ?? "reject",
    if_not_exists: body.if_not_exists ?? "reject",
    after_seconds: body.after_seconds ?? 0,
    kwargs: { input: body.input, command: body.command, config: body.config, context: body.context, stream_mode: body.stream_mode, webhook: body.webhook },
  };
  const { filter } = await authorize(c, "threads:create_run", value);
  const metadata = value.metadata ?? {};
  refuseForgedMetadata(metadata, filter);
  // the run records who started it (the audit's "who"), over anything the body sent under that name
  const identity = c.get("auth")?.user.identity;
  const runMetadata = identity === undefined ? metadata : { ...metadata, langgraph_auth_user_id: identity };
  return { body: { ...body, metadata: runMetadata }, access: { filter, threadMetadata: metadata } };
}

/**
 * A run the caller may see: the run by id (of `threadId` when the path names one), whose thread
 * passes the handler's `threads:{action}` filter in SQL (`visibleThread`); a run of another user's
 * thread is RUN_NOT_FOUND (404), like one that does not exist.
 */
export async function visibleRun(c: Ctx, runtime: Runtime, action: "read" | "update" | "delete", runId: string, threadId?: string): Promise<RunRecord> {
  const run = await runtime.runs.get(runId);
  if (threadId !== undefined && run.thread_id !== threadId) throw new RunNotFoundError(run.run_id);
  if (c.get("authHandler") === undefined) return run;
  try {
    await visibleThread(c, runtime, action, run.thread_id);
  } catch (error) {
    if (hasErrorCode(error, "THREAD_NOT_FOUND")) throw new RunNotFoundError(run.run_id);
    throw error;
  }
  return run;
}

/**
 * The filter the runs a request lists must pass (their threads', applied in SQL by
 * `runs.list({threadAccess})`); undefined without a handler.
 */
export async function runListAccess(c: Ctx, action: "read" | "update"): Promise<AccessFilter | undefined> {
  if (c.get("authHandler") === undefined) return undefined;
  return (await authorize(c, action === "read" ? "threads:search" : "threads:update", {})).filter ?? {};
}

/**
 * The user as the official server hands it to a run's graph: `config.configurable`'s
 * `langgraph_auth_user` (the object `authenticate` returned, normalised), `langgraph_auth_user_id`
 * and `langgraph_auth_permissions`, over whatever the body sent under those names (a caller cannot
 * pose as another user). Unchanged without an auth handler.
 */
export function withAuthUser(c: Ctx, body: RunCreateBody): RunCreateBody {
  const auth = c.get("auth");
  if (auth === undefined) return body;
  const config = body.config ?? {};
  const configurable = (config["configurable"] as Record<string, unknown> | null | undefined) ?? {};
  const user = JSON.parse(JSON.stringify(auth.user)) as Record<string, unknown>;
  return { ...body, config: { ...config, configurable: { ...configurable, langgraph_auth_user: user, langgraph_auth_user_id: auth.user.identity, langgraph_auth_permissions: [...auth.scopes] } } };
}
