import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { failureResult, toolMessageContent } from "../tools/registry.js";

/**
 * Answers for the tool calls a thread's last run left without a result — a run cancelled (or
 * ended) while its calls waited for approval: a TOOL_NOT_RUN ToolMessage per call, in call order,
 * to go before the next run's input. Without them the next run would find the calls still open
 * (and the model provider refuses a conversation with unanswered tool calls).
 */
export function answersForDanglingCalls(messages: readonly BaseMessage[] | undefined): ToolMessage[] {
  const answered = new Set<string>();
  for (const message of messages ?? []) if (ToolMessage.isInstance(message)) answered.add(message.tool_call_id);
  const answers: ToolMessage[] = [];
  for (const message of messages ?? []) {
    const calls = (message as { tool_calls?: { id?: string; name: string }[] }).tool_calls ?? [];
    for (const call of calls) {
      if (call.id === undefined || answered.has(call.id)) continue;
      answered.add(call.id);
      const result = failureResult(call.name, "TOOL_NOT_RUN", "not run: the run that asked for this call ended (cancelled) before it ran");
      answers.push(new ToolMessage({ content: toolMessageContent(result), tool_call_id: call.id, name: call.name, status: "error" }));
    }
  }
  return answers;
}
