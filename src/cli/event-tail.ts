import { CLI_DEFAULTS } from "../constants.js";
import type { Runtime, StoredRunEvent } from "../runtime/runtime.js";

/**
 * Prints a run's stored events in seq order, each exactly once, while the run executes (in this
 * process or in a worker elsewhere): each read is woken by the database's word that events of the
 * run were stored (`runs.live`, `events.stored`), never by a timer, and the tail is drained at the
 * end. A run executing here costs one read per stored batch of events. Only when listening cannot
 * start does a bounded poll stand in. This is how `--json` prints the stored shape of CONTRACT
 * section 6, `seq` included, rather than the live objects — and how the timeline follows a run
 * that a worker in another process executes.
 */
export class EventTail {
  private cursor = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private reads = 0;

  /** `after`: print only events with a greater seq (default 0: all of them). */
  constructor(
    private readonly runtime: Runtime,
    private readonly runId: string,
    private readonly onEvent: (event: StoredRunEvent) => void,
    after = 0,
  ) {
    this.cursor = after;
  }

  /**
   * Starts listening (resolves once listening, so nothing stored after the first read is missed);
   * `stop()` ends it.
   */
  async start(): Promise<void> {
    try {
      this.unlisten = await this.runtime.runs.live(this.runId, () => void this.poke(), { deltas: false });
    } catch {
      // no notifications (a connection that cannot LISTEN): a bounded poll stands in
      this.timer = setInterval(() => void this.poke(), CLI_DEFAULTS.tailPollMs);
      this.timer.unref();
    }
    await this.poke();
  }

  /** How many times the stored events were read (the measure of "no polling"). */
  get readCount(): number {
    return this.reads;
  }

  /** Reads whatever was stored since the last read (reads never overlap). */
  poke(): Promise<void> {
    this.chain = this.chain.then(() => this.read()).catch(() => undefined);
    return this.chain;
  }

  /** Stops listening and prints every event stored so far. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unlisten?.().catch(() => undefined);
    await this.chain;
    await this.read();
  }

  private async read(): Promise<void> {
    this.reads += 1;
    for await (const event of this.runtime.runs.events(this.runId, { after: this.cursor })) {
      if (event.seq <= this.cursor) continue;
      this.cursor = event.seq;
      this.onEvent(event);
    }
  }
}
