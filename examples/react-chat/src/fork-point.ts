import type { AnyStream } from "@langchain/react";

/** How far back the lineage of the thread's head is read (one history request). */
const HISTORY_LIMIT = 200;

/**
 * The checkpoint to fork from to edit `messageId`, or undefined when there is none (the thread's
 * first message: start a new thread instead). It is the newest checkpoint on the current branch
 * (the head's `parent_checkpoint` lineage in the thread's history) that does not hold the message
 * and is not a run's input checkpoint: a checkpoint whose next task is `__start__` still holds
 * that run's input as a pending write, and a run forked from it replays that input instead of the
 * edited one (LangGraph's resume semantics), so the fork starts from the checkpoint before it.
 *
 * Why not `useMessageMetadata(stream, id).parentCheckpointId` alone: that is the parent of the
 * first values event that carried the message (an input checkpoint, see above), and a page that
 * hydrated the thread (a reload) stamps every message with the parent of the latest state.
 */
export async function checkpointBefore(stream: AnyStream, messageId: string): Promise<string | undefined> {
  const threadId = stream.threadId;
  if (threadId === null) return undefined;
  const history = await stream.client.threads.getHistory(threadId, { limit: HISTORY_LIMIT });
  const byId = new Map(history.map((state) => [state.checkpoint.checkpoint_id, state]));
  let state = history[0];
  let holdsMessage = true;
  while (state !== undefined) {
    const messages = (state.values as { messages?: { id?: string }[] } | null)?.messages ?? [];
    if (holdsMessage) holdsMessage = messages.some((message) => message.id === messageId);
    if (!holdsMessage && !state.next.includes("__start__")) return state.checkpoint.checkpoint_id ?? undefined;
    const parentId = state.parent_checkpoint?.checkpoint_id;
    state = parentId === undefined || parentId === null ? undefined : byId.get(parentId);
  }
  return undefined;
}
