import type { Database } from "../../db/types.js";
import { OPERATIONS_DEFAULTS } from "../constants.js";
import type { RunMetrics } from "./run-metrics.js";
import { queueSql } from "./sql.js";

interface QueueRow {
  graph_id: string;
  pending: number;
  oldest_pending_s: number;
  running: number;
  waiting: number;
  oldest_waiting_s: number;
}

/**
 * The queue gauges (pending runs and the oldest one's age, running runs, threads waiting at an
 * interrupt and the longest wait), read from the database by one statement when a scrape asks,
 * at most every OPERATIONS_DEFAULTS.queueQueryMinIntervalMs: the queue as every process sees it,
 * whichever process is scraped. Graphs this process loaded read 0 when they have none.
 */
export class QueueGauges {
  private readonly sql;
  private last = 0;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly db: Database,
    private readonly metrics: RunMetrics,
    private readonly graphIds: () => readonly string[],
  ) {
    this.sql = queueSql(db.schema);
  }

  /** Reads the queue unless it was read just now; a failed read counts in `devmind_metrics_queue_read_errors_total` and keeps the last values. */
  refresh(): Promise<void> {
    if (Date.now() - this.last < OPERATIONS_DEFAULTS.queueQueryMinIntervalMs) return this.reading ?? Promise.resolve();
    this.last = Date.now();
    this.reading = this.read().finally(() => (this.reading = null));
    return this.reading;
  }

  private async read(): Promise<void> {
    let rows: QueueRow[];
    try {
      rows = (await this.db.query<QueueRow>(this.sql.queue)).rows;
    } catch {
      this.metrics.scrapeErrors.inc();
      return;
    }
    const m = this.metrics;
    for (const gauge of [m.queuePending, m.queueOldestAge, m.runsRunning, m.runsWaiting, m.oldestWaitingAge]) gauge.reset();
    for (const graph of this.graphIds()) {
      for (const gauge of [m.queuePending, m.queueOldestAge, m.runsRunning, m.runsWaiting, m.oldestWaitingAge]) gauge.set({ graph }, 0);
    }
    for (const row of rows) {
      const graph = String(row.graph_id).slice(0, OPERATIONS_DEFAULTS.maxLabelChars);
      m.queuePending.set({ graph }, Number(row.pending));
      m.queueOldestAge.set({ graph }, Number(row.oldest_pending_s));
      m.runsRunning.set({ graph }, Number(row.running));
      m.runsWaiting.set({ graph }, Number(row.waiting));
      m.oldestWaitingAge.set({ graph }, Number(row.oldest_waiting_s));
    }
  }
}
