import type { Context } from "hono";
import type { Runtime, ThreadRecord } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import { authorize } from "./authorize.js";

/**
 * The thread a request acts on, as the caller may see it: the auth handler is asked about
 * `threads:{action}` with `{thread_id}` (and `extra`), and the thread is read with its filter in
 * the same SQL statement (`runtime.threads.get(id, filter)`), so a thread of another user is
 * THREAD_NOT_FOUND (404), exactly like one that does not exist. Without a handler: any thread.
 */
export async function visibleThread(
  c: Context<{ Variables: AuthVariables }>,
  runtime: Runtime,
  action: "read" | "update" | "delete",
  threadId: string,
  extra: Record<string, unknown> = {},
): Promise<ThreadRecord> {
  const { filter } = await authorize(c, `threads:${action}`, { thread_id: threadId, ...extra });
  return runtime.threads.get(threadId, filter);
}
