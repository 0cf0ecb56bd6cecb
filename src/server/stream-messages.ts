import { AIMessageChunk, type BaseMessage, type ToolCallChunk } from "@langchain/core/messages";
import { callIdPrefix, ToolCallChunker, type ToolCallSource } from "../model/tool-call-chunks.js";
import type { StateSnapshot } from "@langchain/langgraph";
import { toWire } from "./wire.js";

/** The LangChain messages of a snapshot's `messages` channel (a user graph's may hold anything else). */
export function messagesOf(snapshot: StateSnapshot | undefined): BaseMessage[] {
  const messages = (snapshot?.values as { messages?: unknown } | undefined)?.messages;
  // a user graph's `messages` channel may hold anything: only LangChain messages are streamed as such
  return Array.isArray(messages) ? (messages as unknown[]).filter((message): message is BaseMessage => typeof (message as BaseMessage | null)?.getType === "function") : [];
}

/**
 * The tool calls of a message dict as `tool_call_chunks`: its chunks, or its whole calls (a model
 * without native streaming streams its one message, whose calls come whole, none in chunks).
 */
function callChunksOf(chunk: Record<string, unknown>): ToolCallChunk[] {
  // deltas as they came: a later delta of a call has no id and joins its first by index
  if (Array.isArray(chunk["tool_call_chunks"]) && chunk["tool_call_chunks"].length > 0) return chunk["tool_call_chunks"] as ToolCallChunk[];
  const chunker = new ToolCallChunker(typeof chunk["id"] === "string" ? callIdPrefix(chunk["id"]) : "x");
  return chunker.chunksOf(chunk as ToolCallSource);
}

/**
 * What one stream sent of a message as live chunks (`messages-tuple`): its metadata (LangGraph's,
 * from its first chunk), the index of the chunk expected next, its text so far, the tool calls
 * its chunks started, whether they carried usage, and for the `messages` mode the message so far.
 */
export class SentMessage {
  /** The next chunk index expected (a chunk with another one was lost: the message is `broken`). */
  next = 0;
  broken = false;
  text = "";
  readonly calls = new Set<string>();
  usage = false;
  /** The chunks joined (for `messages/partial`), as LangChain joins them. */
  joined: AIMessageChunk | undefined;

  constructor(readonly metadata: Record<string, unknown>) {}

  /** Notes chunk `chunk` (a message dict) as sent. */
  add(chunk: Record<string, unknown>): void {
    if (typeof chunk["content"] === "string") this.text += chunk["content"];
    for (const call of callChunksOf(chunk)) if (typeof call.id === "string") this.calls.add(call.id);
    if (chunk["usage_metadata"] !== undefined && chunk["usage_metadata"] !== null) this.usage = true;
  }

  /** The message so far once `chunk` joins it (AI message chunks only; another kind stays as it came). */
  join(chunk: Record<string, unknown>): Record<string, unknown> {
    if (chunk["type"] !== "ai" && chunk["type"] !== "AIMessageChunk") return chunk;
    const next = new AIMessageChunk({
      content: chunk["content"] as never,
      ...(typeof chunk["id"] === "string" ? { id: chunk["id"] } : {}),
      tool_call_chunks: callChunksOf(chunk),
      additional_kwargs: (chunk["additional_kwargs"] as never) ?? {},
      response_metadata: (chunk["response_metadata"] as never) ?? {},
      ...(chunk["usage_metadata"] === undefined || chunk["usage_metadata"] === null ? {} : { usage_metadata: chunk["usage_metadata"] as never }),
    });
    this.joined = this.joined === undefined ? next : this.joined.concat(next);
    return toWire(this.joined) as Record<string, unknown>;
  }
}

/**
 * The last chunk of a message whose first chunks this stream sent live (`sent`), once the
 * checkpoint that stores it comes: what they lacked — the rest of its text, its tool calls that
 * no chunk started (as whole `tool_call_chunks`), its usage if none came — so that the chunks a
 * client concatenates by id make the stored message, as with the official server's
 * `messages-tuple` (which never sends a streamed message again whole). Undefined when nothing
 * lacks (the usual case: the chunks were the message). Text that is not a prefix of the stored
 * content (a model call retried) cannot be taken back: the `values` part has it.
 */
export function closingChunk(wire: Record<string, unknown>, sent: SentMessage): Record<string, unknown> | undefined {
  const content = typeof wire["content"] === "string" && wire["content"].startsWith(sent.text) ? wire["content"].slice(sent.text.length) : "";
  const calls = (Array.isArray(wire["tool_calls"]) ? (wire["tool_calls"] as { id?: string; name: string; args: unknown }[]) : []).filter((call) => call.id === undefined || !sent.calls.has(call.id));
  const usage = sent.usage ? undefined : wire["usage_metadata"];
  if (content === "" && calls.length === 0 && (usage === undefined || usage === null)) return undefined;
  return {
    // as LangChain's chunks are sent (`toDict()`: an AIMessageChunk's type is "ai")
    type: "ai",
    id: wire["id"],
    content,
    tool_calls: [],
    invalid_tool_calls: [],
    // after the indexes the streamed chunks may have used
    tool_call_chunks: calls.map((call, index) => ({ type: "tool_call_chunk", id: call.id, name: call.name, args: JSON.stringify(call.args ?? {}), index: sent.calls.size + index })),
    additional_kwargs: {},
    response_metadata: {},
    ...(usage === undefined || usage === null ? {} : { usage_metadata: usage }),
  };
}

/**
 * The top-level task a chunk's LangGraph metadata names (`langgraph_checkpoint_ns`: `node:task_id`,
 * nested ones after `|`): `{id}`, or `{node}` alone for a subgraph compiled with
 * `checkpointer: true`, whose namespace LangGraph keeps without task ids (`node|inner:task_id`).
 */
export function rootTaskOf(metadata: Record<string, unknown>): { id: string } | { node: string } | undefined {
  const ns = metadata["langgraph_checkpoint_ns"] ?? metadata["checkpoint_ns"];
  if (typeof ns !== "string" || ns === "") return undefined;
  const root = ns.split("|")[0] as string;
  const colon = root.lastIndexOf(":");
  return colon < 0 ? { node: root } : { id: root.slice(colon + 1) };
}

/** Whether `value` (a task's writes) holds the message with id `id`, itself or in a list. */
function holdsMessage(value: unknown, id: string): boolean {
  if (value === null || typeof value !== "object") return false;
  const isIt = (item: unknown): boolean => item !== null && typeof item === "object" && (item as { id?: unknown }).id === id;
  return Object.values(value).some((item) => isIt(item) || (Array.isArray(item) && item.some(isIt)));
}

/**
 * LangGraph's metadata of a message a node returned, for `messages-tuple` when the message comes
 * whole with the checkpoint that stores it: `base` (the run's metadata) and the keys LangGraph
 * gives a task — its step, node, triggers, path and checkpoint namespace — of the task of
 * `previous` (the checkpoint that started it) whose writes hold the message.
 */
export function nodeMetadata(base: Record<string, unknown>, snapshot: StateSnapshot, previous: StateSnapshot | undefined, messageId: string | undefined, parentNs: readonly string[] = []): Record<string, unknown> {
  const step = snapshot.metadata?.step ?? null;
  const task = messageId === undefined ? undefined : previous?.tasks.find((candidate) => holdsMessage(candidate.result, messageId));
  if (task === undefined) return { ...base, langgraph_step: step };
  const pushed = task.path?.[0] === "__pregel_push";
  // a subgraph's task: under its namespace (`parentNs`), as LangGraph names it
  const ns = [...parentNs, `${task.name}:${task.id}`].join("|");
  return {
    ...base,
    langgraph_step: step,
    langgraph_node: task.name,
    langgraph_triggers: pushed ? ["__pregel_push"] : [`branch:to:${task.name}`],
    langgraph_path: toWire(task.path ?? ["__pregel_pull", task.name]),
    langgraph_checkpoint_ns: ns,
    checkpoint_ns: ns,
  };
}

/**
 * The messages a step wrote (`snapshot`'s that `before` did not hold), but the human ones: what
 * LangGraph's `messages` mode streams of a node's output, never its input's.
 */
export function freshMessages(before: StateSnapshot | undefined, snapshot: StateSnapshot): BaseMessage[] {
  const known = new Set(messagesOf(before).map((message) => message.id));
  return messagesOf(snapshot).filter((message) => !known.has(message.id) && message.getType() !== "human");
}

/**
 * The messages of `fresh` that a task's writes (`result`) hold and `placed` does not yet: they go
 * with that task (before its update, as LangGraph streams a node's messages); marked placed.
 */
export function takeHeld(fresh: readonly BaseMessage[], placed: Set<BaseMessage>, result: unknown): BaseMessage[] {
  const held = fresh.filter((message) => !placed.has(message) && message.id !== undefined && holdsMessage(result, message.id));
  for (const message of held) placed.add(message);
  return held;
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
