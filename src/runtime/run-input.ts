import { AIMessage, HumanMessage, SystemMessage, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage } from "@langchain/core/messages";
import { DevmindError } from "../errors.js";
import { runInputError, serializeJson, type RunInput } from "./run-record.js";

/**
 * Turns a run's stored input into LangChain messages. Accepted forms per message: a string (a
 * user message), `{ role: "user" | "assistant" | "system", content }` (OpenAI style), or a
 * LangChain stored message `{ type, data }`.
 */
export function inputMessages(input: unknown): BaseMessage[] {
  const messages = (input as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new DevmindError("RUN_INPUT_INVALID", 'run input must be { "messages": [...] } with at least one message');
  }
  return messages.map((message, index) => toMessage(message, index));
}

function toMessage(message: unknown, index: number): BaseMessage {
  if (typeof message === "string") return new HumanMessage(message);
  const record = message as { role?: unknown; content?: unknown; type?: unknown; data?: unknown } | null;
  if (record !== null && typeof record === "object") {
    if (typeof record.role === "string" && typeof record.content === "string") {
      if (record.role === "user" || record.role === "human") return new HumanMessage(record.content);
      if (record.role === "assistant" || record.role === "ai") return new AIMessage(record.content);
      if (record.role === "system") return new SystemMessage(record.content);
    }
    if (typeof record.type === "string" && record.data !== null && typeof record.data === "object") {
      let converted: BaseMessage | undefined;
      try {
        [converted] = mapStoredMessagesToChatMessages([record as StoredMessage]);
      } catch (error) {
        // LangChain's conversion throws plain errors for unknown types or bad fields: still bad input
        throw new DevmindError("RUN_INPUT_INVALID", `message ${index} is not a valid stored LangChain message: ${(error as Error).message}`, { details: { index } });
      }
      if (converted !== undefined) return converted;
    }
  }
  throw new DevmindError("RUN_INPUT_INVALID", `message ${index} must be a string, {role, content} with role user/assistant/system, or a stored LangChain message`, {
    details: { index },
  });
}

/**
 * Validates a run's input and returns it as JSON, so it is serialised before any transaction
 * begins. The agent's input (`messages: true`) is checked with the rules the runtime applies when
 * it runs it (`inputMessages`); another graph's input may be any JSON value (null: no input).
 * RUN_INPUT_INVALID for anything else, including NUL characters (jsonb cannot hold them).
 */
export function serializeRunInput(input: unknown, options: { messages: boolean } = { messages: true }): string {
  if (options.messages) {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      throw runInputError('run input must be { "messages": [...] } with at least one message', { field: "input" });
    }
    inputMessages(input as RunInput);
  }
  return serializeJson(input === undefined ? null : input, "input");
}
