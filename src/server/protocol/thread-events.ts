import type { Context } from "hono";
import type { Event as ProtocolEvent } from "@langchain/protocol";
import { hasErrorCode } from "../../errors.js";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import type { EventFilter } from "../../runtime/protocol/command-schema.js";
import { matchesFilter } from "../../runtime/protocol/event-filter.js";
import { threadProjection, type ProjectionFrom } from "./thread-projection.js";

type Ctx = Context<{ Variables: AuthVariables }>;

/**
 * Whether the caller may follow the thread: a thread it may see (its auth handler's filter, as
 * every thread route), or one that does not exist yet (a client subscribes before its first
 * `run.start` creates it: the subscription waits, and is checked again when the thread appears).
 * Another user's thread is THREAD_NOT_FOUND (404), as on the other routes.
 */
export async function threadFollowable(c: Ctx, deps: AppDeps, threadId: string): Promise<"visible" | "absent"> {
  try {
    await visibleThread(c, deps.runtime, "read", threadId);
    return "visible";
  } catch (error) {
    if (!hasErrorCode(error, "THREAD_NOT_FOUND")) throw error;
    const exists = await deps.runtime.threads.get(threadId).then(
      () => true,
      () => false,
    );
    if (exists) throw error;
    return "absent";
  }
}

/**
 * A thread's protocol events that pass `filter`, from `from` (`startOrdinal`; see `threadProjection`); for a
 * thread that was absent when the subscription opened, the caller's access is checked once it
 * exists (an `error` part and the end when it may not see it). `reached`: told the `seq` of every
 * event the projection comes to, passed or not (a WebSocket session orders its subscriptions by it).
 */
export async function* filteredEvents(c: Ctx, deps: AppDeps, threadId: string, filter: EventFilter, from: ProjectionFrom, absent: boolean, signal: AbortSignal, reached?: (seq: number) => void): AsyncGenerator<ProtocolEvent> {
  let checked = !absent;
  for await (const event of threadProjection(deps.runtime, threadId, from, filter.since, signal)) {
    if (!checked) {
      await visibleThread(c, deps.runtime, "read", threadId);
      checked = true;
    }
    if (typeof event.seq === "number") reached?.(event.seq);
    if (matchesFilter(filter, event as never)) yield event;
  }
}

