/**
 * A tool call of a run whose outcome is unknown (CONTRACT section 3 and 4: TOOL_OUTCOME_UNKNOWN):
 * it was running when its process died and is not idempotent, so it was not run again, or a
 * cancel aborted it while it may have changed something. It may or may not have taken effect.
 * The run record carries them (`unknown_outcomes`, in the order they were found); the CLI, the
 * web page and the run list mark such a run.
 */
export interface UnknownOutcome {
  tool_call_id: string;
  tool: string;
}

/** The run record's `unknown_outcomes` from its stored JSON (anything else reads as none). */
export function unknownOutcomesOf(value: unknown): UnknownOutcome[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    const entry = item as Partial<UnknownOutcome> | null;
    return entry !== null && typeof entry === "object" && typeof entry.tool_call_id === "string" && typeof entry.tool === "string" ? [{ tool_call_id: entry.tool_call_id, tool: entry.tool }] : [];
  });
}

/** One line about them for a person ("" when none): which calls may or may not have taken effect. */
export function unknownOutcomesLine(outcomes: readonly UnknownOutcome[]): string {
  if (outcomes.length === 0) return "";
  const calls = outcomes.map((outcome) => `${outcome.tool} (${outcome.tool_call_id})`).join(", ");
  return `outcome unknown: ${calls} ${outcomes.length === 1 ? "was" : "were"} running when its process stopped or the run was cancelled; it may or may not have taken effect (check before repeating)`;
}
