import type { MessagesData } from "@langchain/protocol";

/** A message as the HTTP API sends it (`plainJson`: `{type: "ai" | "human" | "tool" | "system" | "AIMessageChunk", content, id, tool_calls, …}`). */
export type MessageDict = Record<string, unknown>;

/** The protocol's author role of a message dict; `tool` for a tool's answer, as LangGraph's protocol messages handler names it. */
export function roleOf(message: MessageDict): "ai" | "human" | "system" | "tool" {
  const type = String(message["type"] ?? "ai").toLowerCase();
  if (type.startsWith("human")) return "human";
  if (type.startsWith("system")) return "system";
  if (type.startsWith("tool")) return "tool";
  return "ai";
}

interface Block {
  type: string;
  [key: string]: unknown;
}

/** The content blocks of a whole message: its text (or its content's own blocks), then one `tool_call` block per tool call. */
export function contentBlocks(message: MessageDict): Block[] {
  const content = message["content"];
  const blocks: Block[] = [];
  if (typeof content === "string") {
    if (content.length > 0) blocks.push({ type: "text", text: content });
  } else if (Array.isArray(content)) {
    for (const block of content) if (block !== null && typeof block === "object" && typeof (block as Block).type === "string") blocks.push(block as Block);
  }
  const calls = Array.isArray(message["tool_calls"]) ? (message["tool_calls"] as Record<string, unknown>[]) : [];
  for (const call of calls) {
    if (blocks.some((block) => block.type === "tool_call" && block["id"] === call["id"])) continue;
    blocks.push({ type: "tool_call", id: call["id"], name: call["name"], args: call["args"] ?? {} });
  }
  return blocks;
}

/** The empty block a streamed block starts as (LangGraph's protocol messages handler's `startBlockFor`). */
function startBlock(block: Block): Block {
  if (block.type === "text") return { type: "text", text: "" };
  if (block.type === "reasoning") return { type: "reasoning", reasoning: "" };
  if (block.type === "tool_call" || block.type === "tool_call_chunk") return { type: "tool_call_chunk", ...(block["id"] == null ? {} : { id: block["id"] }), ...(block["name"] == null ? {} : { name: block["name"] }), args: "" };
  return block;
}

function usageOf(message: MessageDict): Record<string, unknown> | undefined {
  const usage = message["usage_metadata"];
  return usage !== null && typeof usage === "object" ? (usage as Record<string, unknown>) : undefined;
}

/** `message-start` of a message: its id and role (and the tool call a tool message answers). */
export function messageStart(message: MessageDict, id: string): MessagesData {
  const role = roleOf(message);
  const toolCallId = role === "tool" && typeof message["tool_call_id"] === "string" ? message["tool_call_id"] : undefined;
  return { event: "message-start", id, role: role as "ai", ...(toolCallId === undefined ? {} : { tool_call_id: toolCallId }) };
}

/** `message-finish` with the message's token usage, when it has one. */
export function messageFinish(message: MessageDict | undefined): MessagesData {
  const usage = message === undefined ? undefined : usageOf(message);
  return { event: "message-finish", ...(usage === undefined ? {} : { usage }) };
}

/**
 * A whole message as the protocol's `messages` events, as LangGraph's protocol messages handler
 * sends a message that was not streamed: `message-start`, per content block `content-block-start`
 * (empty), one delta with its text, `content-block-finish` (the block whole), then `message-finish`.
 */
export function wholeMessageEvents(message: MessageDict, id: string): MessagesData[] {
  const events: MessagesData[] = [messageStart(message, id)];
  contentBlocks(message).forEach((block, index) => {
    events.push({ event: "content-block-start", index, content: startBlock(block) as never });
    const text = block.type === "text" ? block["text"] : block.type === "reasoning" ? block["reasoning"] : undefined;
    if (typeof text === "string" && text.length > 0) {
      events.push({ event: "content-block-delta", index, delta: block.type === "text" ? { type: "text-delta", text } : { type: "reasoning-delta", reasoning: text } } as MessagesData);
    }
    events.push({ event: "content-block-finish", index, content: block as never });
  });
  events.push(messageFinish(message));
  return events;
}

/**
 * What a streamed message sent so far: the blocks it opened (by index) and their text, so the
 * chunks that follow become deltas and the end closes each block with its whole content.
 */
export class StreamedMessage {
  readonly open = new Map<number, Block>();

  /** The `messages` events of one chunk (a message dict of an AIMessageChunk): blocks opened as needed, then deltas. */
  chunkEvents(chunk: MessageDict): MessagesData[] {
    const events: MessagesData[] = [];
    const content = chunk["content"];
    const texts: Block[] = typeof content === "string" ? (content.length > 0 ? [{ type: "text", text: content, index: 0 }] : []) : Array.isArray(content) ? (content as Block[]) : [];
    for (const block of texts) {
      if (block.type !== "text" && block.type !== "reasoning") continue;
      const index = typeof block["index"] === "number" ? block["index"] : 0;
      const key = block.type === "text" ? "text" : "reasoning";
      const text = typeof block[key] === "string" ? (block[key] as string) : "";
      if (!this.open.has(index)) {
        this.open.set(index, { type: block.type, [key]: "" });
        events.push({ event: "content-block-start", index, content: startBlock(block) as never });
      }
      const opened = this.open.get(index) as Block;
      opened[key] = String(opened[key] ?? "") + text;
      if (text.length > 0) events.push({ event: "content-block-delta", index, delta: key === "text" ? { type: "text-delta", text } : { type: "reasoning-delta", reasoning: text } } as MessagesData);
    }
    const calls = Array.isArray(chunk["tool_call_chunks"]) ? (chunk["tool_call_chunks"] as Record<string, unknown>[]) : [];
    for (const call of calls) {
      // tool call blocks after the text blocks: 1 + the chunk's own index
      const index = 1 + (typeof call["index"] === "number" ? call["index"] : 0);
      if (!this.open.has(index)) {
        this.open.set(index, { type: "tool_call_chunk", id: call["id"], name: call["name"], args: "" });
        events.push({ event: "content-block-start", index, content: startBlock({ type: "tool_call_chunk", ...call }) as never });
      }
      const opened = this.open.get(index) as Block;
      opened["args"] = String(opened["args"] ?? "") + String(call["args"] ?? "");
      events.push({ event: "content-block-delta", index, delta: { type: "block-delta", fields: { ...call, type: "tool_call_chunk", index } } } as MessagesData);
    }
    return events;
  }

  /** The end of the message: each open block finished with its whole content (from `whole` when known), then `message-finish`. */
  finishEvents(whole: MessageDict | undefined): MessagesData[] {
    const events: MessagesData[] = [];
    const final = whole === undefined ? [] : contentBlocks(whole);
    const text = final.filter((block) => block.type === "text" || block.type === "reasoning");
    const calls = final.filter((block) => block.type === "tool_call");
    for (const [index, block] of [...this.open.entries()].sort((a, b) => a[0] - b[0])) {
      let content: Block = block;
      if (block.type === "tool_call_chunk") {
        const done = calls.find((call) => call["id"] === block["id"]) ?? calls[index - 1];
        content = done ?? { type: "tool_call", id: block["id"], name: block["name"], args: parseArgs(block["args"]) };
      } else {
        content = text.find((candidate) => candidate.type === block.type) ?? block;
      }
      events.push({ event: "content-block-finish", index, content: content as never });
    }
    events.push(messageFinish(whole));
    return events;
  }
}

function parseArgs(args: unknown): unknown {
  if (typeof args !== "string" || args === "") return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return {};
  }
}
