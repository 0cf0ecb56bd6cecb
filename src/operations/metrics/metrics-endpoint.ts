import type { ApiKeyEntry, OperationsSettings } from "../../config.js";
import type { Database } from "../../db/types.js";
import { metricsAccess, type MetricsAccess } from "./metrics-access.js";
import { QueueGauges } from "./queue-gauges.js";
import type { RunMetrics } from "./run-metrics.js";

/** What serves `/metrics` (the server's route, the worker's metrics port): who may read it, and the exposition. */
export interface MetricsEndpoint {
  access(presented: string | undefined, customAuth?: boolean): MetricsAccess;
  /** The Prometheus text exposition, the queue gauges read first. */
  render(): Promise<{ contentType: string; body: string }>;
  /** Counts a response of the server by status code (`devmind_http_responses_total`). */
  response(code: number): void;
}

/** The endpoint over `metrics`; `queue` reads the queue gauges once the database is open. */
export function metricsEndpoint(metrics: RunMetrics, settings: OperationsSettings["metrics"], apiKeys: readonly ApiKeyEntry[]): MetricsEndpoint & { attach(db: Database, graphIds: () => readonly string[]): void } {
  let queue: QueueGauges | null = null;
  return {
    attach: (db, graphIds) => void (queue = new QueueGauges(db, metrics, graphIds)),
    access: (presented, customAuth = false) => metricsAccess(settings, apiKeys, presented, customAuth),
    async render() {
      await queue?.refresh();
      return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    response: (code) => metrics.httpResponses.inc({ code: String(code) }),
  };
}
