import type { ToolErrorCode } from "./types.js";

const CODES: ReadonlySet<string> = new Set<ToolErrorCode>([
  "TOOL_NOT_FOUND",
  "INVALID_ARGUMENTS",
  "TOOL_TIMEOUT",
  "TOOL_FAILED",
  "PERMISSION_DENIED",
  "APPROVAL_REJECTED",
  "TOOL_OUTCOME_UNKNOWN",
  "TOOL_NOT_RUN",
  "TOOL_CANCELLED",
]);

/**
 * What a tool throws to choose the error code of its result envelope.
 *
 * Why: the model acts on the code (PERMISSION_DENIED means "do not retry that path",
 * INVALID_ARGUMENTS means "fix the arguments"), so a tool must be able to say which one applies.
 * How: `throw new ToolFailure("PERMISSION_DENIED", "path ../x is outside the workspace")`. The
 * message reaches the model verbatim (bounded in length), so keep it short and free of secrets.
 * Any other error a tool throws becomes `TOOL_FAILED` with that error's message.
 */
export class ToolFailure extends Error {
  readonly code: ToolErrorCode;

  constructor(code: ToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** True when `value` is one of the envelope error codes of CONTRACT section 4. */
export function isToolErrorCode(value: unknown): value is ToolErrorCode {
  return typeof value === "string" && CODES.has(value);
}
