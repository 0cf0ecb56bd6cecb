import { DATABASE_FAULT_DEFAULTS, GROUP_COMMIT_DEFAULTS } from "../../constants.js";
import { Backoff } from "../../db/backoff.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { GraphLedgerBegin, RunToolLedger } from "../../graphs/run-handle.js";
import { failureResult } from "../../tools/registry.js";
import type { ToolResult } from "../../tools/types.js";
import type { DecisionStore } from "../interrupts/decision-store.js";
import { argsDigest } from "../interrupts/digest.js";
import type { Fence } from "../queue/fence.js";
import type { CheckpointRider, RiderWork } from "../../checkpoint/fence-config.js";
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
export class GraphToolLedger implements RunToolLedger, CheckpointRider {
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
    /**
     * Whether a call's successful outcome waits (GROUP_COMMIT_DEFAULTS.ledgerRideMs at most) for
     * the next checkpoint write, its tool task's writes, to commit with it (`take`): true for an
     * attempt whose checkpointer takes this ledger as a rider.
     */
    private readonly rideWithWrites = false,
  ) {}

  /** Successful outcomes waiting for the next checkpoint write (see `rideWithWrites`). */
  private readonly staged: { toolCallId: string; outcome: { ok: boolean; result: unknown } }[] = [];
  private stagedTimer: ReturnType<typeof setTimeout> | undefined;
  /** Checkpoint writes of the run under way: when one ends, the next begins at once and takes the staged outcomes. */
  private writes = 0;
  private readonly recordings = new Set<Promise<void>>();

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
      if (call.idempotent) return this.running(call.toolCallId);
      const unknown = inFlightOutcomeUnknown(call.tool);
      await this.ledger.complete(this.fence, call.toolCallId, { ok: false, result: unknown });
      return { state: "done", ok: false, result: unknown };
    }
    return { state: "done", ok: entry.state === "succeeded", result: entry.result };
  }

  /**
   * Records a call's outcome. A success, when `rideWithWrites`, is staged: it commits with the
   * tool task's writes that follow at once (one commit), or alone within
   * GROUP_COMMIT_DEFAULTS.ledgerRideMs; it never is lost to a database fault (written alone with
   * backoff then). A failure is written at once (a retry in this attempt releases it first).
   */
  async complete(call: { toolCallId: string }, outcome: { ok: boolean; result: unknown }): Promise<void> {
    if (this.rideWithWrites && outcome.ok) {
      this.staged.push({ toolCallId: call.toolCallId, outcome });
      if (this.writes === 0) this.stagedTimer ??= setTimeout(() => this.stagedDue(), GROUP_COMMIT_DEFAULTS.ledgerRideMs);
      return;
    }
    await this.recording(call.toolCallId, () => this.ledger.complete(this.fence, call.toolCallId, outcome, { rider: this.rider }));
  }

  /** CheckpointRider: the staged outcomes, written in a checkpoint write's transaction (alone again if it fails). */
  take(): RiderWork | undefined {
    if (this.staged.length === 0) return undefined;
    const taken = this.staged.splice(0);
    this.clearStagedTimer();
    return {
      write: async (tx) => {
        for (const entry of taken) await this.ledger.complete(this.fence, entry.toolCallId, entry.outcome, { tx });
      },
      settle: (error) => {
        if (error === undefined) for (const entry of taken) this.settle(entry.toolCallId);
        else for (const entry of taken) this.record(entry);
      },
    };
  }

  /** CheckpointRider: a checkpoint write of the run began (`take` was asked) and ends with `done`. */
  writing(done: Promise<unknown>): void {
    this.writes += 1;
    const ended = (): void => {
      this.writes -= 1;
      // the write that follows (if any) begins in this turn and takes what is staged; else it goes alone
      if (this.writes === 0 && this.staged.length > 0 && this.stagedTimer === undefined) setImmediate(() => this.stagedDue());
    };
    done.then(ended, ended);
  }

  /** The staged outcomes waited long enough: alone now, unless a checkpoint write is under way (the next one takes them). */
  private stagedDue(): void {
    this.stagedTimer = undefined;
    if (this.writes === 0) this.writeStaged();
  }

  /** Writes staged outcomes now and resolves once every outcome being written alone is stored (or given up): before an attempt ends. */
  async flush(): Promise<void> {
    this.writeStaged();
    await Promise.allSettled([...this.recordings]);
  }

  private writeStaged(): void {
    this.clearStagedTimer();
    for (const entry of this.staged.splice(0)) this.record(entry);
  }

  private clearStagedTimer(): void {
    if (this.stagedTimer !== undefined) clearTimeout(this.stagedTimer);
    this.stagedTimer = undefined;
  }

  private record(entry: { toolCallId: string; outcome: { ok: boolean; result: unknown } }): void {
    const written = this.recording(entry.toolCallId, () => this.ledger.complete(this.fence, entry.toolCallId, entry.outcome, { rider: this.rider })).catch(() => undefined);
    this.recordings.add(written);
    void written.then(() => this.recordings.delete(written));
  }

  async release(call: { toolCallId: string }): Promise<void> {
    await this.recording(call.toolCallId, () => this.ledger.release(this.fence, call.toolCallId));
  }

  /** Gives up on a call whose outcome will not be recorded by this attempt (it was cancelled or the lease lost mid-call). */
  abandon(call: { toolCallId: string }): void {
    this.settle(call.toolCallId);
  }

  private running(toolCallId: string): GraphLedgerBegin {
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
