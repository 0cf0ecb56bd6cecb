import { resolve } from "node:path";
import { isGraphBubbleUp, isGraphInterrupt } from "@langchain/langgraph";
import { TOOL_LIMITS } from "../constants.js";
import { RunCancelledError, ToolDefinitionError } from "../errors.js";
import { isPositiveInteger, validateToolSpec, type JsonSchema, type Tool } from "./define-tool.js";
import { isToolErrorCode, ToolFailure } from "./tool-failure.js";
import { cutWithMarker, describeError, failureResult, quote, shapeOutput, successResult } from "./tool-result.js";
import type { ProposedToolCall, SideEffect, ToolContext, ToolResult } from "./types.js";
import { describeIssues, findForbiddenKey } from "./validation.js";

export { canonicalToolCallKey, failureResult, toolMessageContent } from "./tool-result.js";

/** How much harm a call can do, shown to the human who approves it. */
export type ToolRisk = "low" | "medium" | "high";

/** An OpenAI function-tool definition; a list of them can be passed to a chat model's `bindTools`. */
export interface ModelToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

/**
 * What the registry concludes about a proposed call before running it. The graph's guard uses it
 * to decide between a tool message (not_found, invalid, denied), an approval request, or a run.
 */
export type ToolCheck =
  | { kind: "not_found"; message: string }
  | { kind: "invalid"; message: string }
  | { kind: "denied"; reason: string }
  | { kind: "ready"; tool: Tool; args: Record<string, unknown>; needsApproval: boolean; risk: ToolRisk };

/** Options of `new ToolRegistry(tools, options)`; usually taken from the config (CONTRACT section 2). */
export interface ToolRegistryOptions {
  /** Absolute real path of the workspace (see `ensureWorkspace`); handed to tools in their context. */
  workspace: string;
  /** Timeout of a call when the tool sets none (DEVMIND_TOOL_TIMEOUT_MS). */
  defaultTimeoutMs: number;
  /** Output limit when the tool sets none (DEVMIND_MAX_TOOL_OUTPUT_CHARS). */
  maxOutputChars: number;
  /** Tool names that need approval whatever the tool says (DEVMIND_REQUIRE_APPROVAL). */
  requireApproval?: string[];
  /** Tool names that never need approval (DEVMIND_AUTO_APPROVE); wins over requireApproval. */
  autoApprove?: string[];
  /** Extra errors to re-throw as control flow (e.g. lease loss), besides LangGraph's and cancel. */
  isControlFlow?: (error: unknown) => boolean;
}

/** What `execute` needs from the run: its cancel signal and ids handed to the tool. */
export interface ToolExecutionContext {
  /** The run's cancel signal; when it fires, `execute` throws RunCancelledError. */
  signal?: AbortSignal;
  runId?: string;
  threadId?: string;
}

const RISK: Record<SideEffect, ToolRisk> = { none: "low", local: "medium", external: "high" };
const TIMED_OUT = Symbol("timed out");
const CANCELLED = Symbol("cancelled");

/**
 * The set of tools a run may use, and the only way to run them.
 *
 * Why: the model only proposes calls; the registry decides. It validates arguments with the tool's
 * zod schema, applies policy (deny, approval lists), enforces the timeout by aborting the tool's
 * signal (and by not waiting for a tool that ignores it), turns every outcome into the envelope of
 * CONTRACT section 4, bounds output size, and lets only control flow (LangGraph interrupts and
 * bubble-ups, run cancellation) escape as exceptions. Its tool list and limits are fixed at
 * construction: nothing a tool returns can change them.
 *
 * How: build it once per run configuration, give `modelTools()` to the chat model's `bindTools`,
 * call `check()` in the guard (approval, denial) and `execute()` in the tools node.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly #requireApproval: ReadonlySet<string>;
  readonly #autoApprove: ReadonlySet<string>;
  readonly #modelTools: readonly ModelToolDefinition[];
  readonly #workspace: string;
  readonly #defaultTimeoutMs: number;
  readonly #maxOutputChars: number;
  readonly #isControlFlow: (error: unknown) => boolean;

  /** @throws ToolDefinitionError on a duplicate name, an invalid tool or invalid limits. */
  constructor(tools: Tool[], options: ToolRegistryOptions) {
    if (!isPositiveInteger(options.defaultTimeoutMs, TOOL_LIMITS.maxTimeoutMs)) {
      throw new ToolDefinitionError("TOOL_DEFINITION_INVALID", `defaultTimeoutMs must be a positive integer of at most ${TOOL_LIMITS.maxTimeoutMs}`);
    }
    if (!isPositiveInteger(options.maxOutputChars, Number.MAX_SAFE_INTEGER)) {
      throw new ToolDefinitionError("TOOL_DEFINITION_INVALID", "maxOutputChars must be a positive integer");
    }
    const definitions: ModelToolDefinition[] = [];
    for (const tool of tools) {
      // re-checked so a hand-made object (not from defineTool) cannot slip past the rules
      const parameters = validateToolSpec(tool);
      definitions.push(Object.freeze({ type: "function" as const, function: Object.freeze({ name: tool.name, description: tool.description, parameters }) }));
      if (this.#tools.has(tool.name)) {
        throw new ToolDefinitionError("TOOL_NAME_DUPLICATE", `two tools are named ${tool.name}`, { details: { tool: tool.name } });
      }
      this.#tools.set(tool.name, tool);
    }
    const known = (names: string[] | undefined) => new Set((names ?? []).filter((name) => this.#tools.has(name)));
    this.#requireApproval = known(options.requireApproval);
    this.#autoApprove = known(options.autoApprove);
    this.#workspace = resolve(options.workspace);
    this.#defaultTimeoutMs = options.defaultTimeoutMs;
    this.#maxOutputChars = options.maxOutputChars;
    this.#isControlFlow = options.isControlFlow ?? (() => false);
    this.#modelTools = Object.freeze(definitions);
  }

  /** Tool names in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** The tool called `name`, if registered (a Map lookup: `__proto__` and friends are just unknown). */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /**
   * OpenAI function-tool definitions for every tool, computed once. Parameters are each schema's
   * input-side JSON Schema, so fields with defaults are optional. Pass them to a LangChain chat
   * model's `bindTools`. Each call returns a new array of the same frozen definitions.
   */
  modelTools(): ModelToolDefinition[] {
    return [...this.#modelTools];
  }

  /**
   * Looks up, validates and applies policy to a proposed call, without running it. Never throws.
   *
   * Order: unknown tool, invalid arguments, `deny` (PERMISSION_DENIED before any approval), then
   * approval: the tool's boolean or predicate, plus `requireApproval`, minus `autoApprove`. A
   * predicate or deny function that throws fails closed (approval needed / call denied).
   */
  check(call: ProposedToolCall): ToolCheck {
    const name: unknown = call?.name;
    const tool = typeof name === "string" ? this.#tools.get(name) : undefined;
    if (tool === undefined) {
      const shown = typeof name === "string" ? quote(name, 100) : `(${name === null ? "null" : typeof name})`;
      const available = this.names().join(", ") || "(none)";
      return { kind: "not_found", message: `unknown tool ${shown}; available tools: ${available}` };
    }
    const rawArgs: unknown = call.args;
    if (rawArgs === null || typeof rawArgs !== "object" || Array.isArray(rawArgs)) {
      return { kind: "invalid", message: `invalid arguments for ${tool.name}: arguments must be a JSON object` };
    }
    const forbidden = findForbiddenKey(rawArgs);
    if (forbidden !== null) return { kind: "invalid", message: `invalid arguments for ${tool.name}: ${forbidden}` };
    let parsed: ReturnType<Tool["schema"]["safeParse"]>;
    try {
      parsed = tool.schema.safeParse(rawArgs);
    } catch (error) {
      return { kind: "invalid", message: `invalid arguments for ${tool.name}: ${describeError(error)}` };
    }
    if (!parsed.success) return { kind: "invalid", message: `invalid arguments for ${tool.name}: ${describeIssues(parsed.error.issues)}` };
    const args = parsed.data as Record<string, unknown>;
    if (tool.deny !== undefined) {
      let reason: string | null;
      try {
        reason = tool.deny(args);
      } catch (error) {
        reason = `policy check failed: ${describeError(error)}`;
      }
      if (typeof reason === "string" && reason !== "") return { kind: "denied", reason };
    }
    return { kind: "ready", tool, args, needsApproval: this.#needsApproval(tool, args), risk: RISK[tool.sideEffect] };
  }

  /**
   * Runs a proposed call and returns its envelope. Only three things escape as exceptions:
   * `RunCancelledError` when `ctx.signal` (the run's cancel signal) fires before the tool
   * finishes, LangGraph control-flow errors (interrupts, bubble-ups) thrown by the tool, and
   * errors matched by the `isControlFlow` option. Everything else is a result: TOOL_NOT_FOUND,
   * INVALID_ARGUMENTS, PERMISSION_DENIED, TOOL_TIMEOUT (the tool's signal is aborted and the
   * registry stops waiting), the code of a thrown ToolFailure, or TOOL_FAILED.
   *
   * Approval is not asked here: the caller (the graph's guard) uses `check()` for that and calls
   * `execute` only for approved or approval-free calls.
   */
  async execute(call: ProposedToolCall, ctx: ToolExecutionContext = {}): Promise<ToolResult> {
    const cancel = ctx.signal;
    if (cancel?.aborted) throw new RunCancelledError("run was cancelled before the tool call started", { cause: cancel.reason });
    const checked = this.check(call);
    const name = typeof call?.name === "string" ? call.name : String(call?.name);
    switch (checked.kind) {
      case "not_found":
        return failureResult(name, "TOOL_NOT_FOUND", checked.message);
      case "invalid":
        return failureResult(name, "INVALID_ARGUMENTS", checked.message);
      case "denied":
        return failureResult(name, "PERMISSION_DENIED", checked.reason);
      case "ready":
        return this.#run(checked.tool, checked.args, call, ctx);
    }
  }

  #needsApproval(tool: Tool, args: Record<string, unknown>): boolean {
    if (this.#autoApprove.has(tool.name)) return false;
    if (this.#requireApproval.has(tool.name)) return true;
    if (typeof tool.approval === "boolean") return tool.approval;
    try {
      return tool.approval(args) !== false;
    } catch {
      return true;
    }
  }

  async #run(tool: Tool, args: Record<string, unknown>, call: ProposedToolCall, ctx: ToolExecutionContext): Promise<ToolResult> {
    const cancel = ctx.signal;
    const timeoutMs = tool.timeoutMs ?? this.#defaultTimeoutMs;
    const maxOutputChars = tool.maxOutputChars ?? this.#maxOutputChars;
    const controller = new AbortController();
    let stop!: (why: typeof TIMED_OUT | typeof CANCELLED) => void;
    const stopped = new Promise<never>((_, reject) => {
      stop = reject;
    });
    const onCancel = () => {
      controller.abort(cancel?.reason);
      stop(CANCELLED);
    };
    const timer = setTimeout(() => {
      controller.abort(new DOMException(`tool ${tool.name} timed out after ${timeoutMs} ms`, "TimeoutError"));
      stop(TIMED_OUT);
    }, timeoutMs);
    cancel?.addEventListener("abort", onCancel, { once: true });
    const toolContext: ToolContext = {
      signal: controller.signal,
      runId: ctx.runId,
      threadId: ctx.threadId,
      toolCallId: typeof call.id === "string" ? call.id : "",
      workspace: this.#workspace,
      maxOutputChars,
      timeoutMs,
    };
    try {
      const running = invoke(tool, args, toolContext);
      running.catch(() => undefined); // a tool still running after a timeout must not crash the process later
      const value = await Promise.race([running, stopped]);
      const shaped = shapeOutput(value, maxOutputChars);
      return shaped.ok ? successResult(tool.name, shaped.data, shaped.truncated) : failureResult(tool.name, "TOOL_FAILED", shaped.message);
    } catch (error) {
      if (isControlFlowError(error) || this.#isControlFlow(error)) throw error;
      if (error === CANCELLED || cancel?.aborted) {
        throw new RunCancelledError(`run was cancelled while tool ${tool.name} was running`, { cause: cancel?.reason });
      }
      if (error === TIMED_OUT || (controller.signal.aborted && !cancel?.aborted)) {
        return failureResult(tool.name, "TOOL_TIMEOUT", `tool ${tool.name} timed out after ${timeoutMs} ms`);
      }
      if (error instanceof ToolFailure && isToolErrorCode(error.code)) {
        return failureResult(tool.name, error.code, describeError(error.message));
      }
      return failureResult(tool.name, "TOOL_FAILED", cutWithMarker(describeError(error), TOOL_LIMITS.errorMessageMaxChars));
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener("abort", onCancel);
    }
  }
}

/** Calls the tool so that a synchronous throw becomes a rejection. */
function invoke(tool: Tool, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  try {
    return Promise.resolve(tool.execute(args, ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** LangGraph interrupts and bubble-ups, and run cancellation: never turned into tool results. */
function isControlFlowError(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  return isGraphBubbleUp(error) || isGraphInterrupt(error) || error instanceof RunCancelledError;
}
