import type { AgentLimits } from "../vocabulary/limits.js";
import type { RunView } from "./run-view.js";
import type { AgentStateValue, RunError, StopReason } from "./state.js";
import { runError } from "../vocabulary/stop-reasons.js";

/** A stop rule: a small predicate over the run, returning why it must stop or null. */
export type StopRule = (view: RunView, state: AgentStateValue, limits: AgentLimits, now: number) => { reason: StopReason; error: RunError | null } | null;

const deadline: StopRule = (_view, state, limits, now) =>
  state.deadline_at !== null && now >= state.deadline_at
    ? { reason: "deadline", error: runError("DEADLINE", `the run exceeded its ${limits.runTimeoutMs} ms deadline`) }
    : null;

const tokenBudget: StopRule = (view, _state, limits) => {
  const used = view.usage.input_tokens + view.usage.output_tokens;
  return used >= limits.maxTokens ? { reason: "token_budget", error: runError("TOKEN_BUDGET", `the run used ${used} tokens of its ${limits.maxTokens} budget`) } : null;
};

const noProgress: StopRule = (view, _state, limits) => {
  for (const [key, count] of view.failuresByCall) {
    if (count >= limits.noProgressLimit) {
      return { reason: "no_progress", error: runError("NO_PROGRESS", `the same failing call was made ${count} times: ${key.slice(0, 200)}`) };
    }
  }
  return null;
};

const modelRounds: StopRule = (view, _state, limits) =>
  view.modelRounds >= limits.maxModelRounds
    ? { reason: "max_model_rounds", error: runError("MAX_MODEL_ROUNDS", `the run reached its limit of ${limits.maxModelRounds} model rounds without an answer`) }
    : null;

/** Checked in this order before every model call. */
export const STOP_RULES_BEFORE_MODEL: readonly StopRule[] = [deadline, tokenBudget, noProgress, modelRounds];

/** The first rule that says stop, or null to call the model. */
export function firstStopBeforeModel(view: RunView, state: AgentStateValue, limits: AgentLimits, now: number): { reason: StopReason; error: RunError | null } | null {
  for (const rule of STOP_RULES_BEFORE_MODEL) {
    const result = rule(view, state, limits, now);
    if (result !== null) return result;
  }
  return null;
}
