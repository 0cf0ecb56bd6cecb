import { ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolInputParsingException } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { decodeValue, encodeValue } from "../checkpoint/value-codec.js";
import { TOOL_LEDGER_METADATA } from "../constants.js";
import { runHandleOf, type RunHandle } from "./run-handle.js";

/** A tool as a tool node calls it: a name and `invoke(toolCallOrArgs, config)`. */
export interface InvocableTool {
  name: string;
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  metadata?: Record<string, unknown>;
}

/** A tool call as a tool node hands it to a tool (`{...call, type: "tool_call"}`). */
interface ToolCallInput {
  id?: string;
  name: string;
  args: unknown;
  type: "tool_call";
}

/** The ledger's stored outcome of a ledgered call (the `result` column). */
interface StoredOutcome {
  /** What the tool returned (a ToolMessage, a value), as LangGraph's serializer writes it. */
  output?: SerializedValue;
  /** What the tool returned when it was a LangGraph Command (its fields, serialized). */
  command?: SerializedValue;
  /** The error the tool threw. A string in rows written before outputs were kept whole. */
  error?: { name: string; message: string } | string;
  /** Rows written before outputs were kept whole: the content alone. */
  content?: unknown;
  /** An envelope the ledger wrote itself (TOOL_OUTCOME_UNKNOWN, PERMISSION_DENIED). */
  ok?: false;
  tool?: string;
}

interface SerializedValue {
  type: string;
  json?: string;
  base64?: string;
}

const LEDGERED = Symbol.for("devmind.ledgeredTool");
/** Config key naming the tool call an outer ledgered view is running: a ledgered tool called inside it with that id is not ledgered twice. */
const LEDGERED_CALL_KEY = "__devmind_ledgered_call";
const serde = new JsonPlusSerializer();
/** Calls whose failure this attempt recorded: a second call with the id in the same attempt is a retry, not a re-execution. */
const failedInAttempt = new WeakMap<RunHandle, Set<string>>();

/** The tool a ledgered view wraps, or undefined for a tool that is not one. */
export function ledgeredInner(tool: object): InvocableTool | undefined {
  return (tool as { [LEDGERED]?: InvocableTool })[LEDGERED];
}

/**
 * A view of `inner` whose `invoke` goes through the run's tool ledger (`ledgeredInvoke`); every
 * other property (name, schema, description, responseFormat, returnDirect, class) is the tool's
 * own, through the prototype chain, so a tool node, a middleware or a model binding sees the same
 * tool. Its `metadata` says it is ledgered and whether it is idempotent.
 */
export function ledgeredView<T extends InvocableTool>(inner: T, idempotent: boolean): T {
  const own = (value: unknown) => ({ value, writable: true, enumerable: false, configurable: true });
  return Object.create(inner, {
    [LEDGERED]: { value: inner },
    invoke: own((input: unknown, config?: RunnableConfig) => ledgeredInvoke(inner, idempotent, input, config)),
    metadata: { ...own({ ...(inner.metadata ?? {}), [TOOL_LEDGER_METADATA.idempotent]: idempotent, [TOOL_LEDGER_METADATA.ledgered]: true }), enumerable: true },
  }) as T;
}

function isToolCall(input: unknown): input is ToolCallInput {
  return input !== null && typeof input === "object" && (input as { type?: unknown }).type === "tool_call";
}

/**
 * Runs one call of `inner` effectively-once within a devmind run (CONTRACT section 3), keyed by
 * its tool call id (the tool call a tool node passes, or `config.toolCall`):
 * - first time: the ledger records it started, the tool runs, its output is stored whole (a
 *   ToolMessage with its content, status and artifact, a Command, or a value) and returned;
 * - finished before (the node re-executes after a crash): the stored output, or the stored
 *   error thrown again, without running the tool;
 * - found started (its process died mid-call): an idempotent tool runs again; any other gets
 *   the TOOL_OUTCOME_UNKNOWN envelope (an error ToolMessage when called with a tool call).
 * A call that raised LangGraph's interrupt (or another bubble-up), or whose arguments the tool
 * refused before running, is forgotten: it runs again when resumed. A failure retried in the same
 * attempt (a retry middleware, a node retry policy) runs again. A ledgered tool called from inside
 * a ledgered call with the same id (a tool calling `ledgeredTool(x).invoke(args, config)`) runs
 * as is: the outer call is the one ledgered. Outside a run, or without a call id, the tool runs as is.
 */
export async function ledgeredInvoke(inner: InvocableTool, idempotent: boolean, input: unknown, config?: RunnableConfig): Promise<unknown> {
  const handle = runHandleOf(config);
  const call = isToolCall(input) ? input : undefined;
  const configCall = (config as { toolCall?: { id?: unknown } } | undefined)?.toolCall;
  const toolCallId = call?.id ?? configCall?.id;
  // called with plain arguments: the inner tool gets them alone, and returns its content, not a message
  const innerConfig = call === undefined && configCall !== undefined ? withoutToolCall(config) : config;
  if (handle === undefined || typeof toolCallId !== "string" || toolCallId.length === 0) return inner.invoke(input, innerConfig);
  // a ledgered tool called by a tool (with its config) that is itself ledgered for this call
  if ((config as Record<string, unknown>)[LEDGERED_CALL_KEY] === toolCallId) return inner.invoke(input, innerConfig);
  const failed = failedInAttempt.get(handle) ?? new Set<string>();
  failedInAttempt.set(handle, failed);
  if (failed.delete(toolCallId)) await handle.ledger.release({ toolCallId });
  const entry = await handle.ledger.begin({ toolCallId, tool: inner.name, args: call === undefined ? input : call.args, idempotent });
  if (entry.state === "done") return replay(entry.result as StoredOutcome | null, { tool: inner.name, toolCallId, asMessage: call !== undefined });
  let output: unknown;
  try {
    const signal = handle.callSignal ?? (innerConfig?.signal === undefined ? handle.signal : AbortSignal.any([handle.signal, innerConfig.signal]));
    output = await inner.invoke(input, { ...innerConfig, signal, [LEDGERED_CALL_KEY]: toolCallId } as RunnableConfig);
  } catch (error) {
    if (isBubbleUp(error) || isInputRefusal(error)) {
      await handle.ledger.release({ toolCallId });
      throw error;
    }
    // cancelled or lease lost mid-call: the call stays started (its effect is unknown)
    if (handle.signal.aborted) {
      handle.ledger.abandon?.({ toolCallId });
      throw error;
    }
    await handle.ledger.complete({ toolCallId }, { ok: false, result: { error: errorFields(error) } satisfies StoredOutcome });
    failed.add(toolCallId);
    throw error;
  }
  await handle.ledger.complete({ toolCallId }, { ok: true, result: await storedOutput(output) });
  return output;
}

function withoutToolCall(config: RunnableConfig | undefined): RunnableConfig | undefined {
  if (config === undefined) return undefined;
  const { toolCall: _call, ...rest } = config as RunnableConfig & { toolCall?: unknown };
  return rest;
}

/** LangGraph's interrupts, drains and parent commands: control flow, not an outcome (shape check, any copy of LangGraph). */
function isBubbleUp(error: unknown): boolean {
  return error !== null && typeof error === "object" && (error as { is_bubble_up?: unknown }).is_bubble_up === true;
}

/** The tool's schema refused the arguments: nothing ran. */
function isInputRefusal(error: unknown): boolean {
  return error instanceof ToolInputParsingException || (error as { constructor?: { name?: string } } | null)?.constructor?.name === "ToolInputParsingException";
}

function errorFields(error: unknown): { name: string; message: string } {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: "Error", message: String(error) };
}

async function serialize(value: unknown): Promise<SerializedValue> {
  const encoded = await encodeValue(serde, value);
  return encoded.json !== null ? { type: encoded.type, json: encoded.json } : { type: encoded.type, base64: Buffer.from(encoded.bytes ?? new Uint8Array()).toString("base64") };
}

async function deserialize(value: SerializedValue): Promise<unknown> {
  return decodeValue(serde, value.type, value.json ?? null, value.base64 === undefined ? null : new Uint8Array(Buffer.from(value.base64, "base64")));
}

function isCommandLike(value: unknown): value is Command {
  return value !== null && typeof value === "object" && (value as { lg_name?: unknown }).lg_name === "Command" && Object.getPrototypeOf(value) !== Object.prototype;
}

/** What the ledger keeps of a tool's output: all of it, so a replay returns what the tool returned. */
async function storedOutput(output: unknown): Promise<StoredOutcome> {
  if (isCommandLike(output)) {
    const { graph, update, resume, goto } = output;
    return { command: await serialize({ graph, update, resume, goto }) };
  }
  return { output: await serialize(output) };
}

/**
 * A finished call's stored outcome, as the tool gave it: its output, or its error thrown again;
 * an envelope the ledger wrote (TOOL_OUTCOME_UNKNOWN) becomes an error ToolMessage (its JSON
 * text alone for a call made with plain arguments).
 */
async function replay(stored: StoredOutcome | null, call: { tool: string; toolCallId: string; asMessage: boolean }): Promise<unknown> {
  if (stored?.output !== undefined) return deserialize(stored.output);
  if (stored?.command !== undefined) return new Command((await deserialize(stored.command)) as ConstructorParameters<typeof Command>[0]);
  if (stored !== null && stored.ok === false && typeof stored.tool === "string") {
    const content = JSON.stringify(stored);
    return call.asMessage ? new ToolMessage({ content, status: "error", name: call.tool, tool_call_id: call.toolCallId }) : content;
  }
  if (stored?.error !== undefined) {
    const fields = typeof stored.error === "string" ? { name: "Error", message: stored.error } : stored.error;
    throw Object.assign(new Error(fields.message), { name: fields.name });
  }
  return stored?.content;
}
