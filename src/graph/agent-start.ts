import type { BaseMessage } from "@langchain/core/messages";
import { Command, type StateSnapshot } from "@langchain/langgraph";
import type { HookRun } from "../graphs/run-hooks.js";
import { newRunFields, type AgentStateUpdate } from "./state.js";
import { answersForDanglingCalls } from "./dangling-calls.js";
import { inputMessages } from "./agent-input.js";

/**
 * The run-scoped fields a run writes as it enters its graph (with its messages, or alone when it
 * continues from a checkpoint): the run's own id (how a later attempt knows the thread's last
 * checkpoint is this run's), a deadline of its own, no stop reason or answer yet, and no
 * approvals — a call that needs approval runs in this run only with arguments a human approved
 * for this run. (A run with messages also clears `decision`: its guard decides afresh.)
 */
export function runScope(run: HookRun, runTimeoutMs: number): AgentStateUpdate {
  return { run_id: run.run_id, ...newRunFields(run.limits.runTimeoutMs ?? runTimeoutMs) };
}

/** How an agent run's first attempt enters its graph at `from` (the checkpoint it starts at). */
export type AgentEntry =
  /** New messages from the graph's start (the calls the previous run left open answered first). */
  | { kind: "input"; input: unknown }
  /** No input: the tasks pending at `from` run, with the run's own run-scoped fields. */
  | { kind: "continue"; input: Command }
  /** No input and nothing pending at `from`: the run has nothing to do. */
  | { kind: "nothing" };

/**
 * The input of an agent run's first attempt started at `from`: the thread's latest checkpoint,
 * or the one the run names (`checkpoint_id`, time travel). With messages, they enter through the
 * graph's start as for any run, with the run-scoped fields (`runScope`) in the same input.
 * Without (LangGraph's `input: null`: continuing after a breakpoint,
 * or Regenerate from an earlier checkpoint), a `Command` that only updates the run-scoped fields
 * (`runScope`): LangGraph applies it at `from` and runs the tasks pending there — at an earlier
 * checkpoint on a new branch (a fork), where tasks run again, never reusing the writes of the
 * branch they came from.
 */
export function agentEntry(run: HookRun, from: StateSnapshot, runTimeoutMs: number): AgentEntry {
  if (run.input !== null && run.input !== undefined) {
    const dangling = answersForDanglingCalls((from.values as { messages?: BaseMessage[] } | undefined)?.messages);
    return { kind: "input", input: { messages: [...dangling, ...inputMessages(run.input)], ...runScope(run, runTimeoutMs), decision: null } };
  }
  if (from.tasks.length === 0) return { kind: "nothing" };
  return { kind: "continue", input: new Command({ update: runScope(run, runTimeoutMs) }) };
}
