import { CLI_DEFAULTS } from "../constants.js";
import type { Runtime, StoredRunEvent } from "../runtime/runtime.js";

/**
 * Prints a run's stored events in seq order, each exactly once, while the run executes in this
 * process: woken by the run's live events and by a short poll (a live event is announced before
 * its row is stored), and drained at the end. This is how `--json` prints the stored shape of
 * CONTRACT section 6, `seq` included, rather than the live objects — and how the timeline
 * follows a run that a worker in another process executes.
 */
export class EventTail {
  private cursor = 0;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  /** `after`: print only events with a greater seq (default 0: all of them). */
  constructor(
    private readonly runtime: Runtime,
    private readonly runId: string,
    private readonly onEvent: (event: StoredRunEvent) => void,
    after = 0,
  ) {
    this.cursor = after;
  }

  /** Starts listening and polling; `stop()` ends both. */
  start(): void {
    this.unsubscribe = this.runtime.runs.subscribe(this.runId, (event) => {
      if (event.type !== "model.delta") this.poke();
    });
    this.timer = setInterval(() => this.poke(), CLI_DEFAULTS.tailPollMs);
    this.timer.unref();
    this.poke();
  }

  /** Reads whatever was stored since the last read (reads never overlap). */
  poke(): Promise<void> {
    this.chain = this.chain.then(() => this.read()).catch(() => undefined);
    return this.chain;
  }

  /** Stops listening and prints every event stored so far. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.chain;
    await this.read();
  }

  private async read(): Promise<void> {
    for await (const event of this.runtime.runs.events(this.runId, { after: this.cursor })) {
      if (event.seq <= this.cursor) continue;
      this.cursor = event.seq;
      this.onEvent(event);
    }
  }
}
