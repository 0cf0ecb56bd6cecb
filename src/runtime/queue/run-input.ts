import { serializeJson } from "./run-record.js";

/**
 * Serialises a run's input as JSON before any transaction begins: any JSON value (null: no
 * input). Whether the graph can take it is the graph's own check (its run hooks' `checkInput`,
 * applied by the runtime before this). RUN_INPUT_INVALID for what JSON cannot hold, including NUL
 * characters (jsonb cannot hold them).
 */
export function serializeRunInput(input: unknown): string {
  return serializeJson(input === undefined ? null : input, "input");
}
