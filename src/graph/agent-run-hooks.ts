import type { BaseMessage } from "@langchain/core/messages";
import { RUN_STORE_LIMITS, RUNTIME_DEFAULTS } from "../constants.js";
import { Command } from "@langchain/langgraph";
import { DevmindError } from "../errors.js";
import type { EditCheck, GraphRunHooks, HookRun, RunCounters, RunOutcome } from "../graphs/run-hooks.js";
import type { ToolRegistry } from "../tools/registry.js";
import { runError, type RunError, type StopReason, type Usage } from "../vocabulary/stop-reasons.js";
import { inputMessages } from "./agent-input.js";
import { agentEntry, runScope } from "./agent-start.js";
import { viewRun } from "./run-view.js";

/** The agent's values as its hooks read them. */
interface AgentValues {
  messages?: BaseMessage[];
  run_start?: number;
  stop_reason?: StopReason | null;
  answer?: string | null;
  error?: RunError | null;
  model_rounds?: number;
  tool_calls?: number;
  usage?: Usage;
}

function invalid(message: string, field: string): DevmindError {
  return new DevmindError("RUN_INPUT_INVALID", message, { details: { field } });
}

/** The agent's input check: `{ messages: [...] }` with at least one message it can read, or none (the run continues the thread). */
function checkAgentInput(input: unknown, options: { config?: unknown; context?: unknown }): void {
  const context = options.context;
  const emptyObject = typeof context === "object" && context !== null && !Array.isArray(context) && Object.keys(context).length === 0;
  if (context !== undefined && context !== null && !emptyObject) throw invalid("context is not supported for the built-in agent", "context");
  const config = options.config as Record<string, unknown> | undefined | null;
  // `configurable` is accepted and unused: the server copies request headers (x-*, user-agent)
  // into it for every graph, as the official server does
  const keys = config === undefined || config === null ? [] : Object.keys(config).filter((key) => key !== "configurable");
  if (keys.length > 0) throw invalid("config is not supported for the built-in agent: use limits", "config");
  if (input === null || input === undefined) return;
  if (typeof input !== "object" || Array.isArray(input)) throw invalid('run input must be { "messages": [...] } with at least one message', "input");
  const count = (input as { messages?: unknown }).messages;
  if (Array.isArray(count) && count.length > RUN_STORE_LIMITS.agentInputMessagesMax) {
    throw invalid(`run input has ${count.length} messages; at most ${RUN_STORE_LIMITS.agentInputMessagesMax} per run`, "input");
  }
  try {
    inputMessages(input);
  } catch (error) {
    // every refusal names the field, as the runtime's own do
    if (error instanceof DevmindError && error.details["field"] === undefined) throw new DevmindError("RUN_INPUT_INVALID", error.message, { details: { ...error.details, field: "input" } });
    throw error;
  }
}

/** The run's counters: written by the guard's step that ended the run, derived from the run's messages while it is paused. */
function agentCounters(values: unknown): RunCounters {
  const state = (values ?? {}) as AgentValues;
  if (state.stop_reason) return { modelRounds: state.model_rounds ?? 0, toolCalls: state.tool_calls ?? 0, usage: state.usage ?? { input_tokens: 0, output_tokens: 0 } };
  const view = viewRun(state.messages ?? [], state.run_start ?? 0);
  return { modelRounds: view.modelRounds, toolCalls: view.toolCalls, usage: view.usage };
}

/** The stop reason, answer and error the agent's guard wrote as it ended the run. */
function agentOutcome(values: unknown): RunOutcome {
  const state = (values ?? {}) as AgentValues;
  if (!state.stop_reason) {
    return { stopReason: "internal_error", answer: state.answer ?? null, error: state.error ?? runError("INTERNAL_ERROR", "the graph ended without a stop reason") };
  }
  return { stopReason: state.stop_reason, answer: state.answer ?? null, error: state.stop_reason === "completed" ? null : (state.error ?? null) };
}

/**
 * How a run continues whose own last checkpoint waits at a node of the agent's earlier shape
 * that the guard now replaces: `begin` (the run's input stored, its run-scoped fields not yet
 * set) or `finish` (the guard decided to stop; the end not yet written). The guard, entered with
 * the run's fields where `begin` would have set them, decides again from the values.
 */
function agentContinuation(_values: unknown, run: HookRun, runTimeoutMs: number, gone: readonly string[]): Command | null {
  if (gone.some((node) => node !== "begin" && node !== "finish")) return null;
  if (gone.includes("begin")) return new Command({ update: { ...runScope(run, runTimeoutMs), decision: null }, goto: "guard" });
  return new Command({ goto: "guard" });
}

/**
 * The built-in agent's run hooks (the registry's seam, `GraphRunHooks`): its input is `{ messages }`
 * (the calls the previous run left open answered first; none continues the thread), its counters
 * and stop reasons come from its state, it stops itself on a cancel and at its deadline (the guard
 * answers what was in flight as it ends the run), and an approval's edit is checked against the tool's
 * schema and policy. `registry` is the agent's tool registry, built on first use.
 */
export function agentRunHooks(registry: () => Promise<ToolRegistry>): GraphRunHooks {
  return {
    checkInput: checkAgentInput,
    async entry(run, from, runTimeoutMs) {
      const entry = agentEntry(run, await from(), runTimeoutMs);
      return entry.kind === "nothing" ? { kind: "nothing" } : { kind: "input", input: entry.input };
    },
    continueFrom: agentContinuation,
    counters: agentCounters,
    outcome: agentOutcome,
    stopsItself: true,
    reportsSteps: true,
    // the guard's stop rules bound the agent's steps, not LangGraph's default of 25
    recursionLimit: RUNTIME_DEFAULTS.recursionLimit,
    async editCheck(): Promise<EditCheck> {
      const tools = await registry();
      return (call) => {
        const checked = tools.check(call);
        if (checked.kind === "invalid") return { ok: false, why: "invalid", message: checked.message };
        if (checked.kind === "denied") return { ok: false, why: "denied", message: checked.reason };
        return { ok: true };
      };
    },
  };
}
