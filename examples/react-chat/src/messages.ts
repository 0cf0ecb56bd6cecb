/** Reading LangChain messages and HITL interrupts for display; no React here. */
import type { BaseMessage } from "@langchain/core/messages";

/** A message's text: a string content, or the text blocks of a content array. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) => {
      if (typeof block === "string") return block;
      const text = (block as { text?: unknown }).text;
      return typeof text === "string" ? text : "";
    })
    .join("");
}

/** A tool call an AI message asked for. */
export interface RequestedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** The tool calls of an AI message (none for other messages). */
export function callsOf(message: BaseMessage): RequestedCall[] {
  const calls = (message as { tool_calls?: { id?: string; name: string; args: Record<string, unknown> }[] }).tool_calls ?? [];
  return calls.map((call, index) => ({ id: call.id ?? `${message.id ?? "ai"}-${index}`, name: call.name, args: call.args }));
}

/** The tool message answering `callId`, if it arrived. */
export function resultOf(messages: readonly BaseMessage[], callId: string): BaseMessage | undefined {
  return messages.find((message) => message.type === "tool" && (message as { tool_call_id?: string }).tool_call_id === callId);
}

/** One action an approval interrupt asks about (LangChain's human-in-the-loop middleware shape, which devmind's agent uses too). */
export interface ActionRequest {
  name: string;
  args: Record<string, unknown>;
  description?: string;
}

/** The action requests of an interrupt value, or undefined when it is not an approval request. */
export function actionRequestsOf(value: unknown): ActionRequest[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as { actionRequests?: unknown; action_requests?: unknown };
  const requests = record.actionRequests ?? record.action_requests;
  return Array.isArray(requests) ? (requests as ActionRequest[]) : undefined;
}
