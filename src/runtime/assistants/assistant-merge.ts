import type { RunGraphConfig } from "../queue/run-record.js";

/**
 * A run's graph config over its assistant's, as LangGraph Platform merges them: the run's keys
 * win, `configurable` merged key by key. Undefined when neither sets anything.
 */
export function mergeAssistantConfig(assistant: RunGraphConfig, run: RunGraphConfig | undefined): RunGraphConfig | undefined {
  const merged: RunGraphConfig = { ...assistant, ...(run ?? {}) };
  if (assistant.configurable !== undefined || run?.configurable !== undefined) merged.configurable = { ...(assistant.configurable ?? {}), ...(run?.configurable ?? {}) };
  return Object.keys(merged).length === 0 ? undefined : merged;
}

/**
 * A run's context over its assistant's: two objects merge (the run's keys win); otherwise the
 * run's context when it has one, else the assistant's. Undefined when the result is nothing or `{}`
 * from the assistant alone (the graph then sees no context, as before assistants had any).
 */
export function mergeAssistantContext(assistant: unknown, run: unknown): unknown {
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
  const assistantEmpty = assistant === null || assistant === undefined || (isObject(assistant) && Object.keys(assistant).length === 0);
  if (run === undefined || run === null) return assistantEmpty ? undefined : assistant;
  if (isObject(assistant) && isObject(run)) return { ...assistant, ...run };
  return run;
}
