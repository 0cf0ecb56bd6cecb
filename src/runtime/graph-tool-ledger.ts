import type { GraphLedgerBegin, RunToolLedger } from "../graphs/run-handle.js";
import { argsDigest } from "./digest.js";
import type { Fence } from "./fence.js";
import { inFlightOutcomeUnknown } from "./run-ledger.js";
import type { ToolLedger } from "./tool-ledger.js";

/**
 * The tool ledger as a user graph's ledgered tools see it (`RunHandle.ledger`): effectively-once
 * calls, every write fenced by the run's lease. A call that finished returns its stored result; a
 * call found started (its process died mid-call) runs again only when the tool is idempotent,
 * else it becomes TOOL_OUTCOME_UNKNOWN (stored, so the answer is the same on every re-execution).
 */
export class GraphToolLedger implements RunToolLedger {
  constructor(
    private readonly ledger: ToolLedger,
    private readonly fence: Fence,
  ) {}

  async begin(call: { toolCallId: string; tool: string; args: unknown; idempotent: boolean }): Promise<GraphLedgerBegin> {
    const entry = await this.ledger.begin(this.fence, { toolCallId: call.toolCallId, tool: call.tool, argsDigest: argsDigest(call.args ?? {}) });
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
}
