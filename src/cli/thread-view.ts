import { CLI_DEFAULTS } from "../constants.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { interruptsOf, plainJson, type Runtime } from "../runtime/runtime.js";
import { foldArgs, foldValues } from "./fold.js";

/** A thread's state as a command shows it: plain JSON, as the LangGraph API sends it. */
export interface ThreadView {
  /** The thread's values (`{}` before its first checkpoint). */
  values: unknown;
  /** The nodes that run next (empty when the graph ended). */
  next: string[];
  /** The interrupts the thread waits on, `[]` when none. */
  interrupts: { id: string; value: unknown }[];
}

/**
 * The state of `run`'s thread now: its values, next nodes and pending interrupts as plain JSON
 * (LangChain messages as message dicts). A thread whose state cannot be read here (its graph is
 * not loaded in this process) is shown by what the run itself recorded: no values, the run's
 * interrupts.
 */
export async function threadView(runtime: Runtime, run: RunRecord): Promise<ThreadView> {
  const recorded = (): ThreadView => ({ values: null, next: [], interrupts: (run.interrupts ?? []).map((item) => ({ id: item.id, value: plainJson(item.value) })) });
  if (!runtime.graphs.has(run.graph_id)) return recorded();
  try {
    const snapshot = await runtime.threads.state(run.thread_id);
    // shown to people: configured secrets hidden, as in every stored event
    return runtime.redact({
      values: plainJson(snapshot.values ?? {}),
      next: [...(snapshot.next ?? [])],
      interrupts: interruptsOf(snapshot).map((item) => ({ id: item.id, value: plainJson(item.value) })),
    });
  } catch {
    return recorded();
  }
}

/**
 * A thread's values for a person: `values:` and one folded line per key (`--verbose`: the whole
 * JSON, indented). Nothing when there are none.
 */
export function valueLines(values: unknown, verbose: boolean): string[] {
  if (values === null || values === undefined || (typeof values === "object" && !Array.isArray(values) && Object.keys(values).length === 0)) return [];
  if (verbose) return ["values:", ...JSON.stringify(values, null, 2).split("\n").map((line) => `  ${line}`)];
  return ["values:", ...foldValues(values, CLI_DEFAULTS.foldedValueChars).map((line) => `  ${line}`)];
}

/** The interrupts a thread waits on that are not approval requests (those are listed as calls), one line each. */
export function interruptLines(interrupts: ThreadView["interrupts"]): string[] {
  return interrupts
    .filter((item) => (item.value as { actionRequests?: unknown } | null)?.actionRequests === undefined)
    .map((item) => `waiting for a value: ${foldArgs(item.value, CLI_DEFAULTS.foldedArgsChars)}  [interrupt ${item.id}]`);
}
