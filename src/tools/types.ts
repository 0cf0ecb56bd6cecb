import type { z } from "zod";

/** What a tool may change: nothing, the local machine (files, processes), or the outside world. */
export type SideEffect = "none" | "local" | "external";

/** Error codes of a tool result (CONTRACT section 4). */
export type ToolErrorCode =
  | "TOOL_NOT_FOUND"
  | "INVALID_ARGUMENTS"
  | "TOOL_TIMEOUT"
  | "TOOL_FAILED"
  | "PERMISSION_DENIED"
  | "APPROVAL_REJECTED"
  | "TOOL_OUTCOME_UNKNOWN"
  | "TOOL_NOT_RUN"
  | "TOOL_CANCELLED";

/**
 * Codes of calls that were executed (the tool started): they count toward `tool_calls` and the
 * DEVMIND_MAX_TOOL_CALLS budget. Every other code is a refusal (judged before running) or a call
 * the run never started, which count for neither (CONTRACT section 4).
 */
export const EXECUTED_CALL_CODES: ReadonlySet<ToolErrorCode> = new Set<ToolErrorCode>(["TOOL_TIMEOUT", "TOOL_FAILED", "TOOL_OUTCOME_UNKNOWN", "TOOL_CANCELLED"]);

/**
 * The envelope every tool outcome becomes; its JSON is the content of the ToolMessage the model
 * sees. `data` is the tool's return value on success; `error` names what went wrong otherwise.
 */
export type ToolResult =
  | { ok: true; tool: string; data: unknown; error: null; truncated: boolean }
  | { ok: false; tool: string; data: null; error: { code: ToolErrorCode; message: string }; truncated?: boolean };

/** What `execute` receives besides its validated arguments. */
export interface ToolContext {
  /** Aborted on the tool's timeout and when the run is cancelled; pass it to everything async. */
  signal: AbortSignal;
  runId: string | undefined;
  threadId: string | undefined;
  toolCallId: string;
  /** Absolute, real path of DEVMIND_WORKSPACE: the only directory file tools may touch. */
  workspace: string;
  /**
   * Output limit of this call (serialized `data`, in characters): beyond it the registry truncates
   * the result into a cut JSON string. Tools that can page (read_file, list_files) stay under it.
   */
  maxOutputChars: number;
  /**
   * Timeout of this call in milliseconds (the tool's own or DEVMIND_TOOL_TIMEOUT_MS): the signal
   * fires then. A tool with a time argument of its own (run_command's `timeout_ms`) clamps it to
   * this, so a model cannot raise a limit.
   */
  timeoutMs: number;
}

/** A tool as written by its author; build one with `defineTool`. */
export interface ToolSpec<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** zod schema of the arguments (an object); its JSON Schema is what the model sees. */
  schema: Schema;
  sideEffect: SideEffect;
  /** Whether a human must approve a call: always, never, or decided from the arguments. */
  approval: boolean | ((args: z.infer<Schema>) => boolean);
  /** Safe to run again after a crash mid-call (same arguments, same effect). */
  idempotent: boolean;
  /** Per-call timeout; defaults to DEVMIND_TOOL_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Longest output (serialized `data`) before it is truncated; defaults to DEVMIND_MAX_TOOL_OUTPUT_CHARS. */
  maxOutputChars?: number;
  /** Policy check before approval is asked: a string is the PERMISSION_DENIED reason. */
  deny?: (args: z.infer<Schema>) => string | null;
  execute(args: z.infer<Schema>, ctx: ToolContext): Promise<unknown>;
}

/** A tool call as the model proposed it, arguments already parsed from JSON. */
export interface ProposedToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}
