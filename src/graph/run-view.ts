import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { canonicalToolCallKey } from "../tools/registry.js";
import { EXECUTED_CALL_CODES, type ProposedToolCall, type ToolErrorCode } from "../tools/types.js";
import type { Usage } from "./state.js";

/** What the current run has done so far, derived from its messages alone. */
export interface RunView {
  /** Messages of this run (from `run_start`). */
  messages: BaseMessage[];
  modelRounds: number;
  /**
   * Tool calls of this run that were executed (the tool started: success, failure, timeout,
   * cancel, unknown outcome). Refusals and calls the run never started are not counted.
   */
  toolCalls: number;
  usage: Usage;
  /** Calls of the last AI message that have no ToolMessage yet. */
  pending: ProposedToolCall[];
  /** The last message, if it is an AI message without tool calls: the answer. */
  finalAnswer: AIMessage | undefined;
  /** How often each failing call (tool + canonical args) failed in this run. */
  failuresByCall: Map<string, number>;
}

/** What a tool message's envelope says, as far as the counts need it. */
export type EnvelopeSummary = { ok: boolean; code: string | null };

// the guard views the run after every step: each message's envelope is parsed once
const envelopes = new WeakMap<ToolMessage, EnvelopeSummary | null>();

/** Parses a tool message's envelope; undefined for content that is not one. */
export function readEnvelope(message: ToolMessage): EnvelopeSummary | undefined {
  const known = envelopes.get(message);
  if (known !== undefined) return known ?? undefined;
  let summary: EnvelopeSummary | null = null;
  if (typeof message.content === "string") {
    try {
      const parsed = JSON.parse(message.content) as { ok?: unknown; error?: { code?: unknown } | null };
      if (typeof parsed.ok === "boolean") summary = { ok: parsed.ok, code: typeof parsed.error?.code === "string" ? parsed.error.code : null };
    } catch {
      summary = null;
    }
  }
  envelopes.set(message, summary);
  return summary ?? undefined;
}

/**
 * Whether a tool message answers a call that was executed. A message without an envelope (written
 * by something other than devmind) counts as executed.
 */
export function wasExecuted(envelope: EnvelopeSummary | undefined): boolean {
  return envelope === undefined || envelope.ok || EXECUTED_CALL_CODES.has(envelope.code as ToolErrorCode);
}

/** The text of a message's content (string, or the text parts of a content array). */
export function messageText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((part) => (typeof part === "string" ? part : part.type === "text" && typeof part["text"] === "string" ? part["text"] : ""))
    .join("");
}

/** Builds the view of the run that starts at message index `runStart`. */
export function viewRun(all: readonly BaseMessage[], runStart: number): RunView {
  const messages = all.slice(Math.max(0, Math.min(runStart, all.length)));
  const calls = new Map<string, ProposedToolCall>();
  const answered = new Set<string>();
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  let modelRounds = 0;
  let toolCalls = 0;
  let lastAi: AIMessage | undefined;
  const failuresByCall = new Map<string, number>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) {
      modelRounds += 1;
      lastAi = message;
      usage.input_tokens += message.usage_metadata?.input_tokens ?? 0;
      usage.output_tokens += message.usage_metadata?.output_tokens ?? 0;
      for (const call of message.tool_calls ?? []) {
        const id = call.id ?? "";
        calls.set(id, { id, name: call.name, args: call.args ?? {} });
      }
      for (const call of message.invalid_tool_calls ?? []) {
        const id = call.id ?? "";
        calls.set(id, { id, name: call.name ?? "", args: { __raw_arguments: call.args ?? "" } });
      }
    } else if (ToolMessage.isInstance(message)) {
      answered.add(message.tool_call_id);
      const envelope = readEnvelope(message);
      if (wasExecuted(envelope)) toolCalls += 1;
      const call = calls.get(message.tool_call_id);
      if (envelope !== undefined && !envelope.ok && call !== undefined && envelope.code !== "APPROVAL_REJECTED") {
        const key = canonicalToolCallKey(call.name, call.args);
        failuresByCall.set(key, (failuresByCall.get(key) ?? 0) + 1);
      }
    }
  }
  const last = messages[messages.length - 1];
  const pending: ProposedToolCall[] = [];
  if (lastAi !== undefined) {
    for (const call of lastAi.tool_calls ?? []) {
      const id = call.id ?? "";
      if (!answered.has(id)) pending.push({ id, name: call.name, args: call.args ?? {} });
    }
  }
  const finalAnswer = last !== undefined && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) === 0 ? last : undefined;
  return { messages, modelRounds, toolCalls, usage, pending, finalAnswer, failuresByCall };
}
