import type { StateSnapshot } from "@langchain/langgraph";
import type { RunError, StopReason, Usage } from "../vocabulary/stop-reasons.js";

/** What a graph counts of a run (its model rounds, executed tool calls and token usage). */
export interface RunCounters {
  modelRounds: number;
  toolCalls: number;
  usage: Usage;
}

/** What a graph's final values say of the run that ended it. */
export interface RunOutcome {
  stopReason: StopReason;
  answer: string | null;
  error: RunError | null;
}

/** A run as a graph's hooks read it. */
export interface HookRun {
  run_id: string;
  input: unknown;
  limits: { runTimeoutMs?: number | undefined };
}

/** How a graph enters a run's first attempt: the input to invoke it with, or nothing to do. */
export type RunEntry = { kind: "input"; input: unknown } | { kind: "nothing" };

/** A proposed tool call as an approval decision edits it. */
export interface EditedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** Whether edited arguments may run: a reason when they may not. */
export type EditCheck = (call: EditedCall) => { ok: true } | { ok: false; why: "invalid" | "denied"; message: string };

/**
 * What a graph may tell the runtime about its runs, beyond what LangGraph's own stream and state
 * say. Every hook is optional: a plain graph has none, and the runtime runs it by LangGraph's
 * rules alone (any JSON input, the run completes when the graph ends, no counters). The built-in
 * agent registers its own (`src/graph/agent-run-hooks.ts`) through the registry's `hooks` option,
 * as any graph may.
 */
export interface GraphRunHooks {
  /** Checks a run's input (and config / context) when the run is created: throw RUN_INPUT_INVALID to refuse it. */
  checkInput?(input: unknown, options: { config?: unknown; context?: unknown }): void;
  /**
   * The input a run's first attempt invokes the graph with, given the checkpoint it starts from
   * (read only when the hook asks for it). Default: the run's input as stored.
   */
  entry?(run: HookRun, from: () => Promise<StateSnapshot>, runTimeoutMs: number): Promise<RunEntry>;
  /**
   * The input that continues a run whose own last checkpoint waits at nodes the graph no longer
   * has (`gone`: written by an earlier version of the graph, whose node was renamed or removed),
   * or null to end the run with GRAPH_NODE_GONE. Default: null.
   */
  continueFrom?(values: unknown, run: HookRun, runTimeoutMs: number, gone: readonly string[]): unknown;
  /** The run's counters from the graph's values (at a pause or the end). Default: zeros. */
  counters?(values: unknown): RunCounters;
  /**
   * The run's stop reason, answer and error from the values the graph ended with. Default:
   * `completed`, no answer.
   */
  outcome?(values: unknown): RunOutcome;
  /**
   * The graph stops itself when the run's signal is aborted (a cancel) or its deadline passes,
   * answering what was in flight, so the runtime does not abort LangGraph for either; the
   * runtime's deadline stays a backstop only for graphs that do not.
   */
  stopsItself?: boolean;
  /** LangGraph's recursion limit when the run's config sets none (default LangGraph's 25): a graph whose own rules bound its steps may raise it. */
  recursionLimit?: number;
  /** Checks the arguments of an approval's edit before it is stored (the tool's schema and policy). */
  editCheck?(): Promise<EditCheck>;
  /**
   * The graph's nodes report their steps (model rounds, tool calls) as step events: a timeline
   * shows a run by those steps rather than node by node.
   */
  reportsSteps?: boolean;
  /** What the graph is, for its default assistant's description. */
  description?: string;
  /**
   * Throws (a ConfigError naming what to set) when a run of the graph cannot execute in this
   * process, e.g. the agent without a usable model. A command that is about to execute a run asks
   * first (`runtime.graphs.ready`), so it fails before touching the run. Default: always ready.
   */
  ready?(): Promise<void>;
}
