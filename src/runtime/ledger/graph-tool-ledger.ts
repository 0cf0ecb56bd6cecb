import { DATABASE_FAULT_DEFAULTS } from "../../constants.js";
import { Backoff } from "../../db/backoff.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { GraphLedgerBegin, RunToolLedger } from "../../graphs/run-handle.js";
import { failureResult } from "../../tools/registry.js";
import type { ToolResult } from "../../tools/types.js";
import type { DecisionStore } from "../interrupts/decision-store.js";
import { argsDigest } from "../interrupts/digest.js";
import type { Fence } from "../queue/fence.js";
import type { CheckpointRider } from "../../checkpoint/fence-config.js";
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
  /** Calls begun to run in this attempt whose outcome is not recorded yet, each settled when it is (or given up). */
  private readonly inFlight = new Map<string, () => void>();
  private readonly drained = new Set<() => void>();

  /**
   * @param stop aborted when recording outcomes is pointless (the lease was lost, the run was
   *   cancelled, the process drains): a write failing on a database fault is retried until then.
   */
  constructor(
    private readonly ledger: ToolLedger,
    private readonly decisions: DecisionStore,
    private readonly fence: Fence,
    private readonly stop?: AbortSignal,
    /** Told of each fault an outcome write meets (the worker's health). */
    private readonly onFault?: (error: unknown) => void,
    /** The run's events waiting to be stored: they commit with a ledger write that begins at once. */
    private readonly rider?: CheckpointRider,
    /** Calls begun to run under this lease by this process, across its attempts (`ClaimedRun.launched`). */
    private readonly launched: Set<string> = new Set(),
  ) {}

  /** Calls of this attempt still running or being recorded. */
  get pending(): number {
    return this.inFlight.size;
  }

  /**
   * Resolves once every call this attempt began to run has its outcome recorded (or `stop`
   * fired, or `maxMs` passed; resolves to the calls still unsettled). A database fault stops the
   * graph, not its tools: this is what recovery waits for before a new attempt re-enters the
   * same calls, so each finds the outcome stored instead of a call still `started`.
   */
  async settled(maxMs: number): Promise<number> {
    if (this.inFlight.size === 0) return 0;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.stop?.removeEventListener("abort", done);
        this.drained.delete(check);
        resolve();
      };
      const check = (): void => {
        if (this.inFlight.size === 0) done();
      };
      const timer = setTimeout(done, maxMs);
      this.stop?.addEventListener("abort", done, { once: true });
      this.drained.add(check);
      if (this.stop?.aborted === true) done();
    });
    return this.inFlight.size;
  }

  async begin(call: { toolCallId: string; tool: string; args: unknown; idempotent: boolean; needsApproval?: boolean }): Promise<GraphLedgerBegin> {
    const digest = argsDigest(call.args ?? {});
    if (call.needsApproval === true) {
      const approved = await this.decisions.approvedDigest(this.fence.runId, call.toolCallId);
      if (approved !== digest) {
        const denied = failureResult(call.tool, "PERMISSION_DENIED", "these arguments were not approved: a call that needs approval runs only with the approved arguments");
        return { state: "done", ok: false, result: denied };
      }
    }
    const entry = await this.ledger.begin(this.fence, { toolCallId: call.toolCallId, tool: call.tool, argsDigest: digest }, { rider: this.rider });
    if (entry.state === "new") return this.running(call.toolCallId);
    if (entry.state === "started") {
      // begun under this very lease, yet no attempt of it here ran the call: the begin's commit
      // happened but its answer was lost (a failover), so the tool never ran and runs now
      if (call.idempotent || (entry.epoch === this.fence.epoch && !this.launched.has(call.toolCallId))) return this.running(call.toolCallId);
      const unknown = inFlightOutcomeUnknown(call.tool);
      await this.ledger.complete(this.fence, call.toolCallId, { ok: false, result: unknown });
      return { state: "done", ok: false, result: unknown };
    }
    return { state: "done", ok: entry.state === "succeeded", result: entry.result };
  }

  async complete(call: { toolCallId: string }, outcome: { ok: boolean; result: unknown }): Promise<void> {
    await this.recording(call.toolCallId, () => this.ledger.complete(this.fence, call.toolCallId, outcome, { rider: this.rider }));
  }

  async release(call: { toolCallId: string }): Promise<void> {
    await this.recording(call.toolCallId, () => this.ledger.release(this.fence, call.toolCallId));
  }

  /** Gives up on a call whose outcome will not be recorded by this attempt (it was cancelled or the lease lost mid-call). */
  abandon(call: { toolCallId: string }): void {
    this.settle(call.toolCallId);
  }

  private running(toolCallId: string): GraphLedgerBegin {
    this.launched.add(toolCallId);
    this.inFlight.set(toolCallId, () => undefined);
    return { state: "run" };
  }

  /**
   * Writes a call's outcome; a database fault (a restart, an outage, a full disk) is retried
   * with backoff until the write is stored or `stop` fires: the call ran in this live process, so
   * its outcome is known and must not become TOOL_OUTCOME_UNKNOWN for want of a write.
   */
  private async recording(toolCallId: string, write: () => Promise<unknown>): Promise<void> {
    const backoff = new Backoff({ firstMs: DATABASE_FAULT_DEFAULTS.backoffFirstMs, maxMs: DATABASE_FAULT_DEFAULTS.backoffMaxMs });
    try {
      for (;;) {
        try {
          await write();
          return;
        } catch (error) {
          if (databaseFaultOf(error) === null || this.stop?.aborted === true) throw error;
          this.onFault?.(error);
          if (!(await backoff.wait(this.stop))) throw error;
        }
      }
    } finally {
      this.settle(toolCallId);
    }
  }

  private settle(toolCallId: string): void {
    if (!this.inFlight.delete(toolCallId)) return;
    for (const check of [...this.drained]) check();
  }
}
