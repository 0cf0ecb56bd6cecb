import type { DevmindErrorCode } from "../errors.js";

/**
 * Why a run stopped (CONTRACT section 3), for every graph: a graph reports its own (the agent's
 * stop rules) through its run hooks; `max_attempts`, `internal_error`, `deadline`, `cancelled`,
 * `recursion_limit` and `interrupt` also come from the runtime.
 */
export type StopReason =
  | "completed"
  | "max_model_rounds"
  | "max_tool_calls"
  | "token_budget"
  | "deadline"
  | "no_progress"
  | "model_failed"
  | "model_timeout"
  | "model_truncated"
  | "max_attempts"
  | "cancelled"
  | "internal_error"
  | "recursion_limit"
  /** The graph stopped at an interrupt (an approval, `interrupt()`, a breakpoint): the run is `success`, its thread waits. */
  | "interrupt";

/** Token usage of a run, as reported by the model. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * Why a run failed, when it did. `code` is a string because a stored run (or one written by
 * another version) is read back as it is; every error devmind builds has a `DevmindErrorCode`
 * (see `runError`).
 */
export interface RunError {
  code: string;
  message: string;
  /**
   * The class name of the exception a graph threw (`CustomError`), when it threw one: the
   * official server names a failed run's stream `error` part by it.
   */
  name?: string;
}

/**
 * A run's error with a code from the one code enum (`DevmindErrorCode`, grouped "how a run
 * ended"), so a misspelt or undocumented run error code fails to compile.
 *
 * @example
 *   return { reason: "token_budget", error: runError("TOKEN_BUDGET", `the run used ${used} tokens`) };
 */
export function runError(code: DevmindErrorCode, message: string, name?: string): RunError {
  return name === undefined ? { code, message } : { code, message, name };
}
