import type { ErrorCode, ErrorResponse } from "@langchain/protocol";
import { DevmindError } from "../../errors.js";
import { errorBody } from "../http-errors.js";

/** The protocol's error answer to command `id` (null when the command's id could not be read). */
export function protocolError(id: number | null, error: ErrorCode, message: string): ErrorResponse {
  return { type: "error", id, error, message };
}

/**
 * What a failed command answers: the protocol's error shape, the code read from devmind's error
 * (a run or checkpoint not found, a refusal of the auth handler, bad input) and its message; a
 * fault of the server is `unknown_error` without its details.
 */
export function commandFailure(id: number, error: unknown): ErrorResponse {
  const { status, body } = errorBody(error);
  const code = error instanceof DevmindError ? error.code : body.error;
  if (status >= 500) return protocolError(id, "unknown_error", "the command failed on the server; try again");
  if (code === "RUN_NOT_FOUND") return protocolError(id, "no_such_run", body.message);
  if (code === "CHECKPOINT_NOT_FOUND") return protocolError(id, "no_such_checkpoint", body.message);
  if (status === 401 || status === 403) return protocolError(id, "permission_denied", body.message);
  return protocolError(id, "invalid_argument", body.message);
}
