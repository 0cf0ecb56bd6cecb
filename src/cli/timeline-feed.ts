import type { CallDetails } from "./call-details.js";
import { isKnownRunEvent } from "../runtime/events/run-events.js";
import type { KnownTimelineEvent, Timeline, TimelineEvent } from "./timeline.js";

/** The part of CallDetails the feed reads (a test passes its own). */
export type CallDetailSource = Pick<CallDetails, "get" | "refresh">;

/**
 * Feeds events to a Timeline in order, filling in what the events lack from the thread's
 * messages (`CallDetails`): the arguments of a call that never started (refused by policy,
 * rejected, unparsable), and under `--verbose` each call's result, printed under its line.
 *
 * A refusal is announced while the node that refused it is still running, before the checkpoint
 * holds the model's message, so its line (and every line after it, to keep the order) is held
 * until a later event finds the arguments stored, or `flush`. Results are printed as soon as
 * the checkpoint holds them, at the latest at `flush`.
 */
export class TimelineFeed {
  private queue: Promise<void> = Promise.resolve();
  private readonly started = new Set<string>();
  private readonly held: TimelineEvent[] = [];
  private readonly awaitingResult: { id: string; tool: string }[] = [];

  constructor(
    private readonly timeline: Timeline,
    private readonly details: CallDetailSource,
    private readonly verbose: boolean,
  ) {}

  /** Queues one event (shown after every event pushed before it). */
  push(event: TimelineEvent): void {
    this.queue = this.queue.then(() => this.take(event)).catch(() => undefined);
  }

  /** Waits until every pushed event is processed, then shows what is held and the results still awaited. */
  async flush(): Promise<void> {
    await this.queue;
    if (this.held.length === 0 && this.awaitingResult.length === 0) return;
    await this.details.refresh();
    this.release(true);
    this.printResults();
  }

  private async take(event: TimelineEvent): Promise<void> {
    if (event.type === "model.delta" && this.held.length === 0) {
      this.timeline.event(event);
      return;
    }
    if (event.type !== "model.delta" && (this.held.length > 0 || this.awaitingResult.length > 0 || this.lackingArgs(event) !== null)) await this.details.refresh();
    this.release(false);
    this.printResults();
    if (this.held.length > 0 || this.lackingArgs(event) !== null) {
      this.held.push(event);
      this.release(false);
      return;
    }
    this.show(event);
  }

  /** The event when it is a `tool.call.finished` of a call that never started and lacks the call's arguments; else null. */
  private lackingArgs(event: TimelineEvent): Extract<KnownTimelineEvent, { type: "tool.call.finished" }> | null {
    return isKnownRunEvent(event) && event.type === "tool.call.finished" && !this.started.has(event.tool_call_id) && event.args === undefined ? event : null;
  }

  /** Shows held events from the first on while their arguments are known (all of them when `force`). */
  private release(force: boolean): void {
    while (this.held.length > 0) {
      const event = this.held[0] as TimelineEvent;
      const lacking = this.lackingArgs(event);
      const args = lacking === null ? undefined : this.details.get(lacking.tool_call_id)?.args;
      if (lacking !== null && args === undefined && !force) return;
      this.held.shift();
      this.show(lacking !== null && args !== undefined ? { ...lacking, args } : event);
    }
  }

  private show(event: TimelineEvent): void {
    if (!isKnownRunEvent(event)) {
      this.timeline.event(event);
      return;
    }
    if (event.type === "tool.call.started") this.started.add(event.tool_call_id);
    this.timeline.event(event);
    if (this.verbose && event.type === "tool.call.finished") {
      this.awaitingResult.push({ id: event.tool_call_id, tool: event.tool });
      this.printResults();
    }
  }

  private printResults(): void {
    for (let i = 0; i < this.awaitingResult.length; ) {
      const { id, tool } = this.awaitingResult[i] as { id: string; tool: string };
      const result = this.details.get(id)?.result;
      if (result === undefined) {
        i += 1;
        continue;
      }
      this.awaitingResult.splice(i, 1);
      this.timeline.result(tool, result);
    }
  }
}
