import type { RunLimitSettings } from "../config.js";
import { CONFIG_DEFAULTS } from "../constants.js";

/** The per-run bounds of CONTRACT sections 2 and 9; every field is enforced by code. */
export interface AgentLimits extends RunLimitSettings {
  /** Per model call. */
  modelTimeoutMs: number;
  /** Retries of transient model errors (429, 5xx, network, timeouts) per model call. */
  modelMaxRetries: number;
}

/** The defaults of CONTRACT section 2. */
export const DEFAULT_LIMITS: AgentLimits = {
  maxModelRounds: CONFIG_DEFAULTS.maxModelRounds,
  maxToolCalls: CONFIG_DEFAULTS.maxToolCalls,
  maxTokens: CONFIG_DEFAULTS.maxTokens,
  runTimeoutMs: CONFIG_DEFAULTS.runTimeoutMs,
  toolTimeoutMs: CONFIG_DEFAULTS.toolTimeoutMs,
  maxToolOutputChars: CONFIG_DEFAULTS.maxToolOutputChars,
  noProgressLimit: CONFIG_DEFAULTS.noProgressLimit,
  contextTokens: CONFIG_DEFAULTS.contextTokens,
  modelTimeoutMs: CONFIG_DEFAULTS.modelTimeoutMs,
  modelMaxRetries: CONFIG_DEFAULTS.modelMaxRetries,
};

/** Fills a partial limits object from `base` (the defaults unless given). */
export function resolveLimits(partial: Partial<AgentLimits> = {}, base: AgentLimits = DEFAULT_LIMITS): AgentLimits {
  const merged = { ...base };
  for (const [key, value] of Object.entries(partial) as [keyof AgentLimits, number | undefined][]) {
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** The limits a validated configuration sets (CONTRACT section 2), e.g. `buildAgentGraph({ limits: limitsFromConfig(config) })`. */
export function limitsFromConfig(config: { limits: RunLimitSettings; modelTimeoutMs: number; modelMaxRetries: number }): AgentLimits {
  return { ...config.limits, modelTimeoutMs: config.modelTimeoutMs, modelMaxRetries: config.modelMaxRetries };
}
