import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";

/** The LangChain messages of a snapshot's `messages` channel (a user graph's may hold anything else). */
export function messagesOf(snapshot: StateSnapshot | undefined): BaseMessage[] {
  const messages = (snapshot?.values as { messages?: unknown } | undefined)?.messages;
  // a user graph's `messages` channel may hold anything: only LangChain messages are streamed as such
  return Array.isArray(messages) ? (messages as unknown[]).filter((message): message is BaseMessage => typeof (message as BaseMessage | null)?.getType === "function") : [];
}

/** AI messages the run has produced so far (in its checkpoints): the model rounds that are complete. */
export function roundsDone(snapshot: StateSnapshot | undefined): number {
  const start = Number((snapshot?.values as { run_start?: unknown } | undefined)?.run_start ?? 0);
  return messagesOf(snapshot)
    .slice(start)
    .filter((message) => message.getType() === "ai").length;
}

/**
 * The last token chunk of an AI message whose first tokens this stream sent (`sent`): the rest of
 * its text and its tool calls (as whole `tool_call_chunks`), so that the chunks a client
 * concatenates by id make the stored message, as the official server's `messages-tuple` does
 * (it never sends a streamed message again whole). Text that is not a prefix of the stored
 * content (a retried model call) cannot be taken back: the `values` part that follows has it.
 */
export function closingChunk(wire: Record<string, unknown>, sent: string): Record<string, unknown> {
  const content = typeof wire["content"] === "string" && wire["content"].startsWith(sent) ? wire["content"].slice(sent.length) : "";
  const calls = Array.isArray(wire["tool_calls"]) ? (wire["tool_calls"] as { id?: string; name: string; args: unknown }[]) : [];
  return {
    ...wire,
    type: "AIMessageChunk",
    content,
    tool_call_chunks: calls.map((call, index) => ({ type: "tool_call_chunk", id: call.id, name: call.name, args: JSON.stringify(call.args ?? {}), index })),
  };
}

/**
 * The internal name of LangGraph's older `messages` stream mode (`messages/metadata`,
 * `messages/partial`, `messages/complete` events), kept apart from `messages`, which is how the
 * server names `messages-tuple` inside.
 */
export const MESSAGES_EVENTS_MODE = "messages/events";

/**
 * `messages/complete` of the `messages` mode for a checkpoint: every message with an id in its
 * state that the previous checkpoint of the stream did not hold (all of them for the first), whole,
 * as the official server sends each message of a root `values` chunk once.
 */
export function completedMessages(snapshot: StateSnapshot, previous: StateSnapshot | undefined, toWire: (value: unknown) => unknown): { event: string; data: unknown } | undefined {
  const known = new Set(messagesOf(previous).map((message) => message.id));
  const fresh = messagesOf(snapshot).filter((message) => message.id !== undefined && !known.has(message.id));
  return fresh.length === 0 ? undefined : { event: "messages/complete", data: fresh.map((message) => toWire(message)) };
}
