import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { messageText } from "./run-view.js";

/** Estimates per message object: a thread's messages are re-sent every round, estimated once. */
const estimates = new WeakMap<BaseMessage, number>();

/** Rough token estimate for budgeting (about four characters a token, plus per-message overhead). */
export function estimateTokens(message: BaseMessage): number {
  const known = estimates.get(message);
  if (known !== undefined) return known;
  let chars = messageText(message).length;
  const calls = (message as { tool_calls?: unknown[] }).tool_calls;
  if (Array.isArray(calls) && calls.length > 0) chars += JSON.stringify(calls).length;
  const tokens = Math.ceil(chars / 4) + 4;
  estimates.set(message, tokens);
  return tokens;
}

/** Placeholder content of an elided tool output: still a valid envelope the model can read. */
export function elidedContent(message: ToolMessage): string {
  let tool = message.name ?? "unknown";
  let ok = true;
  try {
    const parsed = JSON.parse(typeof message.content === "string" ? message.content : "") as { tool?: unknown; ok?: unknown };
    if (typeof parsed.tool === "string") tool = parsed.tool;
    if (typeof parsed.ok === "boolean") ok = parsed.ok;
  } catch {
    // not an envelope: keep the defaults
  }
  return JSON.stringify({ ok, tool, data: null, error: null, truncated: true, elided: "output removed to fit the context budget; call the tool again if you need it" });
}

/**
 * Returns the messages to send so their estimated size fits `budgetTokens`: the oldest tool
 * outputs are replaced by a short placeholder, oldest first, never the outputs answering the
 * latest AI message. No message is removed, so every tool message stays paired with its call.
 * `fixedTokens` is what the system prompt and tool schemas take.
 */
export function fitToContext(messages: readonly BaseMessage[], budgetTokens: number, fixedTokens = 0): { messages: BaseMessage[]; elided: number } {
  const sizes = messages.map(estimateTokens);
  let total = fixedTokens + sizes.reduce((sum, size) => sum + size, 0);
  if (total <= budgetTokens) return { messages: [...messages], elided: 0 };
  let lastAiIndex = -1;
  messages.forEach((message, index) => {
    if (message.getType() === "ai") lastAiIndex = index;
  });
  const result = [...messages];
  let elided = 0;
  for (let index = 0; index < result.length && total > budgetTokens; index += 1) {
    const message = result[index];
    if (message === undefined || !ToolMessage.isInstance(message) || index > lastAiIndex) continue;
    const replacement = new ToolMessage({ content: elidedContent(message), tool_call_id: message.tool_call_id, name: message.name, id: message.id });
    const saved = (sizes[index] ?? 0) - estimateTokens(replacement);
    if (saved <= 0) continue;
    result[index] = replacement;
    total -= saved;
    elided += 1;
  }
  return { messages: result, elided };
}
