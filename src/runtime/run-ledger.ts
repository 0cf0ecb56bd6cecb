import type { LedgerEntry as ContextLedgerEntry, ToolCallLedger } from "../graph/run-context.js";
import { failureResult } from "../tools/registry.js";
import type { ProposedToolCall, ToolResult } from "../tools/types.js";
import type { DecisionStore } from "./decision-store.js";
import { argsDigest } from "./digest.js";
import type { Fence } from "./fence.js";
import type { ToolLedger } from "./tool-ledger.js";

/** What a non-idempotent call found in flight after its process died gives instead of running again. */
export function inFlightOutcomeUnknown(tool: string): ToolResult {
  return failureResult(
    tool,
    "TOOL_OUTCOME_UNKNOWN",
    "this call was running when its process stopped; it may or may not have taken effect, and it is not idempotent, so it was not run again. Check before repeating it.",
  );
}

function isToolResult(value: unknown): value is ToolResult {
  const record = value as { ok?: unknown; tool?: unknown } | null;
  return record !== null && typeof record === "object" && typeof record.ok === "boolean" && typeof record.tool === "string";
}

/**
 * The tool ledger as one run's graph sees it (effectively-once tool calls): a call that finished
 * returns its stored result; a call found started — its process died mid-call — runs again only
 * when the tool is idempotent, else the model gets TOOL_OUTCOME_UNKNOWN; a call that needed
 * approval runs only with arguments whose digest matches the approved one. Every write is fenced
 * by the run's lease.
 */
export class RunLedger implements ToolCallLedger {
  constructor(
    private readonly ledger: ToolLedger,
    private readonly decisions: DecisionStore,
    private readonly fence: Fence,
  ) {}

  async begin(call: ProposedToolCall, meta: { tool: string; idempotent: boolean; needsApproval: boolean }): Promise<ContextLedgerEntry> {
    const digest = argsDigest(call.args);
    if (meta.needsApproval) {
      const approved = await this.decisions.approvedDigest(this.fence.runId, call.id);
      if (approved !== digest) {
        return { state: "done", result: failureResult(meta.tool, "PERMISSION_DENIED", "these arguments were not approved: a call that needs approval runs only with the approved arguments") };
      }
    }
    const entry = await this.ledger.begin(this.fence, { toolCallId: call.id, tool: meta.tool, argsDigest: digest });
    if (entry.state === "new") return { state: "run" };
    if (entry.state === "started") {
      if (meta.idempotent) return { state: "run" };
      const unknown = inFlightOutcomeUnknown(meta.tool);
      await this.ledger.complete(this.fence, call.id, { ok: false, result: unknown });
      return { state: "done", result: unknown };
    }
    const stored = entry.result;
    return { state: "done", result: isToolResult(stored) ? stored : failureResult(meta.tool, "TOOL_OUTCOME_UNKNOWN", "the stored result of this call is unreadable") };
  }

  async complete(call: ProposedToolCall, result: ToolResult): Promise<void> {
    await this.ledger.complete(this.fence, call.id, { ok: result.ok, result });
  }
}
