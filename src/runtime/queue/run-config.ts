import { RUN_STORE_LIMITS } from "../../constants.js";
import { runInputError, serializeJson, type RunGraphConfig } from "./run-record.js";

/** Configurable keys LangGraph and devmind set themselves: a run may not override them. */
const RESERVED_CONFIGURABLE = new Set(["thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "run_id", "assistant_id", "graph_id"]);

const CONFIG_KEYS = new Set(["configurable", "recursion_limit", "recursionLimit", "tags"]);

/**
 * Checks a run's graph config and returns it in its stored form (`recursionLimit` is accepted
 * and stored as `recursion_limit`). Refused, never ignored: unknown keys, configurable keys
 * LangGraph or devmind own (`thread_id`, `checkpoint_*`, anything starting with `__`), a
 * recursion limit that is not an integer within bounds, tags that are not strings.
 * RUN_INPUT_INVALID with `details.field` naming the culprit.
 */
export function checkRunGraphConfig(config: unknown): RunGraphConfig {
  if (config === undefined || config === null) return {};
  if (typeof config !== "object" || Array.isArray(config)) throw runInputError("config must be an object", { field: "config" });
  const raw = config as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!CONFIG_KEYS.has(key)) {
      throw runInputError(`config.${key} is not supported; supported: configurable, recursion_limit, tags`, { field: `config.${key}` });
    }
  }
  const checked: RunGraphConfig = {};
  if (raw["configurable"] !== undefined) {
    const configurable = raw["configurable"];
    if (configurable === null || typeof configurable !== "object" || Array.isArray(configurable)) {
      throw runInputError("config.configurable must be an object", { field: "config.configurable" });
    }
    for (const key of Object.keys(configurable)) {
      if (RESERVED_CONFIGURABLE.has(key) || key.startsWith("__")) {
        throw runInputError(`config.configurable.${key} is set by the runtime and cannot be given`, { field: `config.configurable.${key}` });
      }
    }
    serializeJson(configurable, "config.configurable");
    checked.configurable = configurable as Record<string, unknown>;
  }
  const limit = raw["recursion_limit"] ?? raw["recursionLimit"];
  if (limit !== undefined) {
    const { min, max } = RUN_STORE_LIMITS.recursionLimit;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < min || limit > max) {
      throw runInputError(`config.recursion_limit must be an integer from ${min} to ${max}, got ${JSON.stringify(limit)}`, { field: "config.recursion_limit" });
    }
    checked.recursion_limit = limit;
  }
  if (raw["tags"] !== undefined) {
    const tags = raw["tags"];
    if (!Array.isArray(tags) || tags.some((tag) => typeof tag !== "string" || tag.length > RUN_STORE_LIMITS.tagMaxChars)) {
      throw runInputError(`config.tags must be an array of strings of at most ${RUN_STORE_LIMITS.tagMaxChars} characters`, { field: "config.tags" });
    }
    checked.tags = tags as string[];
  }
  return checked;
}
