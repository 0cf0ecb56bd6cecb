import { AIMessage, HumanMessage, SystemMessage, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage } from "@langchain/core/messages";
import { DevmindError } from "../errors.js";

/** The message kinds a message-like may name by `type` or `role`, as LangChain's stored types. */
const ROLE_TYPES: Readonly<Record<string, string>> = { human: "human", user: "human", ai: "ai", assistant: "ai", system: "system", tool: "tool" };

function invalid(message: string, index: number): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details: { index } });
}

/**
 * Turns an agent run's stored input into LangChain messages. Accepted forms per message, as
 * LangGraph clients send them: a string (a user message), `{ role, content }` (OpenAI style, text
 * or content blocks), `{ type: "human", content, id? }` (useStream, Agent Chat UI), or a LangChain
 * stored message `{ type, data }`; `type` / `role` one of human, user, ai, assistant, system,
 * tool (a tool message with its `tool_call_id`). RUN_INPUT_INVALID otherwise, naming the message.
 */
export function inputMessages(input: unknown): BaseMessage[] {
  const messages = (input as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new DevmindError("RUN_INPUT_INVALID", 'run input must be { "messages": [...] } with at least one message');
  }
  return messages.map((message, index) => toMessage(message, index));
}

function fromStored(record: StoredMessage, index: number): BaseMessage {
  let converted: BaseMessage | undefined;
  try {
    [converted] = mapStoredMessagesToChatMessages([record]);
  } catch (error) {
    // LangChain's conversion throws plain errors for unknown types or bad fields: still bad input
    throw invalid(`message ${index} is not a valid LangChain message: ${(error as Error).message.slice(0, 300)}`, index);
  }
  if (converted === undefined) throw invalid(`message ${index} is not a valid LangChain message`, index);
  return converted;
}

function toMessage(message: unknown, index: number): BaseMessage {
  if (typeof message === "string") return new HumanMessage(message);
  const record = message as Record<string, unknown> | null;
  if (record !== null && typeof record === "object" && !Array.isArray(record)) {
    const { role, content, type, data } = record;
    if (typeof role === "string" && typeof content === "string" && Object.keys(record).length === 2) {
      if (role === "user" || role === "human") return new HumanMessage(content);
      if (role === "assistant" || role === "ai") return new AIMessage(content);
      if (role === "system") return new SystemMessage(content);
    }
    if (typeof type === "string" && data !== null && typeof data === "object") return fromStored(record as unknown as StoredMessage, index);
    const kind = typeof type === "string" ? ROLE_TYPES[type] : typeof role === "string" ? ROLE_TYPES[role] : undefined;
    if (kind !== undefined && data === undefined) {
      const { type: _type, role: _role, ...fields } = record;
      const text = fields["content"] ?? "";
      if (typeof text !== "string" && !(Array.isArray(text) && text.every((block) => block !== null && typeof block === "object" && !Array.isArray(block)))) {
        throw invalid(`message ${index}: content must be text or a list of content blocks`, index);
      }
      if (kind === "tool" && typeof fields["tool_call_id"] !== "string") throw invalid(`message ${index}: a tool message needs tool_call_id`, index);
      return fromStored({ type: kind, data: { ...fields, content: text } } as unknown as StoredMessage, index);
    }
  }
  throw invalid(`message ${index} must be a string, {role, content} or {type, content} with role user/assistant/system/tool, or a stored LangChain message`, index);
}
