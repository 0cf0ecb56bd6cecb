import type { GraphLedgerBegin, RunToolLedger } from "../../graphs/run-handle.js";
import { failureResult } from "../../tools/registry.js";
import type { ToolResult } from "../../tools/types.js";
import type { DecisionStore } from "../interrupts/decision-store.js";
import { argsDigest } from "../interrupts/digest.js";
import type { Fence } from "../queue/fence.js";
import type { ToolLedger } from "./tool-ledger.js";

/** What a non-idempotent call found in flight after its process died gives instead of running again. */
export function inFlightOutcomeUnknown(tool: string): ToolResult {
  return failureResult(
    tool,
    "TOOL_OUTCOME_UNKNOWN",
    "this call was running when its process stopped; it may or may not have taken effect, and it is not idempotent, so it was not run again. Check before repeating it.",
  );
}

/**
 * The tool ledger as every graph's tool nodes see it (`RunHandle.ledger`; effectively-once tool
 * calls), every write fenced by the run's lease. A call that finished returns its stored result;
 * a call found started (its process died mid-call) runs again only when the tool is idempotent,
 * else it becomes TOOL_OUTCOME_UNKNOWN (stored, so the answer is the same on every
 * re-execution); a call that needs approval runs only with arguments whose digest matches the
 * one a human approved (the audit's `args_digest`), else PERMISSION_DENIED.
 */
export class GraphToolLedger implements RunToolLedger {
  constructor(
    private readonly ledger: ToolLedger,
    private readonly decisions: DecisionStore,
    private readonly fence: Fence,
  ) {}

  async begin(call: { toolCallId: string; tool: string; args: unknown; idempotent: boolean; needsApproval?: boolean }): Promise<GraphLedgerBegin> {
    const digest = argsDigest(call.args ?? {});
    if (call.needsApproval === true) {
      const approved = await this.decisions.approvedDigest(this.fence.runId, call.toolCallId);
      if (approved !== digest) {
        const denied = failureResult(call.tool, "PERMISSION_DENIED", "these arguments were not approved: a call that needs approval runs only with the approved arguments");
        return { state: "done", ok: false, result: denied };
      }
    }
    const entry = await this.ledger.begin(this.fence, { toolCallId: call.toolCallId, tool: call.tool, argsDigest: digest });
    if (entry.state === "new") return { state: "run" };
    if (entry.state === "started") {
      if (call.idempotent) return { state: "run" };
      const unknown = inFlightOutcomeUnknown(call.tool);
      await this.ledger.complete(this.fence, call.toolCallId, { ok: false, result: unknown });
      return { state: "done", ok: false, result: unknown };
    }
    return { state: "done", ok: entry.state === "succeeded", result: entry.result };
  }

  async complete(call: { toolCallId: string }, outcome: { ok: boolean; result: unknown }): Promise<void> {
    await this.ledger.complete(this.fence, call.toolCallId, outcome);
  }

  async release(call: { toolCallId: string }): Promise<void> {
    await this.ledger.release(this.fence, call.toolCallId);
  }
}
