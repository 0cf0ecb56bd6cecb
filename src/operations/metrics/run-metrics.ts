import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { OPERATIONS_DEFAULTS } from "../constants.js";

const p = OPERATIONS_DEFAULTS.metricPrefix;
const buckets = [...OPERATIONS_DEFAULTS.durationBuckets];

/**
 * devmind's metrics on one prom-client registry (docs/operations.md lists them). Labels are
 * bounded: graph, node, tool and model names (from code, capped by `BoundedLabels`), statuses,
 * stop reasons, outcomes and reasons; never a run or thread id. The queue gauges are read from
 * the database at scrape time (`QueueGauges`).
 */
export function createRunMetrics(registry: Registry = new Registry()) {
  const registers = [registry];
  const metrics = {
    registry,
    runsStarted: new Counter({ name: `${p}runs_started_total`, help: "Runs that started executing, by graph (a run resuming a thread after a decision or resume value included; recoveries not)", labelNames: ["graph"] as const, registers }),
    runsEnded: new Counter({ name: `${p}runs_ended_total`, help: "Runs that ended, by graph, status and stop reason (success/interrupt: ended at an interrupt)", labelNames: ["graph", "status", "stop_reason"] as const, registers }),
    runResumes: new Counter({ name: `${p}run_resumes_total`, help: "Attempts that continued a run from its checkpoint, by graph and reason (recovery: after a crash, a lapsed lease or a database fault)", labelNames: ["graph", "reason"] as const, registers }),
    runDuration: new Histogram({ name: `${p}run_duration_seconds`, help: "Run duration from creation to its end, by graph and status", labelNames: ["graph", "status"] as const, buckets, registers }),
    queueWait: new Histogram({ name: `${p}run_queue_wait_seconds`, help: "Time from a run's creation to its first start (schedule-to-start), by graph", labelNames: ["graph"] as const, buckets, registers }),
    nodeDuration: new Histogram({ name: `${p}node_duration_seconds`, help: "Graph node (task) duration, by graph, node and outcome", labelNames: ["graph", "node", "outcome"] as const, buckets, registers }),
    modelDuration: new Histogram({ name: `${p}model_call_duration_seconds`, help: "Model call duration, by graph, model and outcome", labelNames: ["graph", "model", "outcome"] as const, buckets, registers }),
    modelTokens: new Counter({ name: `${p}model_tokens_total`, help: "Tokens the model reported, by graph, model and direction (input, output)", labelNames: ["graph", "model", "direction"] as const, registers }),
    toolCalls: new Counter({ name: `${p}tool_calls_total`, help: "Tool calls that finished, by graph, tool and outcome (success, error, unknown)", labelNames: ["graph", "tool", "outcome"] as const, registers }),
    toolDuration: new Histogram({ name: `${p}tool_call_duration_seconds`, help: "Tool call duration, by graph, tool and outcome", labelNames: ["graph", "tool", "outcome"] as const, buckets, registers }),
    leaseTakeovers: new Counter({ name: `${p}lease_takeovers_total`, help: "Leases taken from their holder, by reason (expired: re-queued by a reaper here; max_attempts: ended by one; lost: an attempt here found its lease taken)", labelNames: ["reason"] as const, registers }),
    databaseFaults: new Counter({ name: `${p}database_faults_total`, help: "Database statements that failed with a fault (unreachable, storage), each retry counted", labelNames: ["kind"] as const, registers }),
    httpResponses: new Counter({ name: `${p}http_responses_total`, help: "HTTP responses of the server, by status code (503: the database is away)", labelNames: ["code"] as const, registers }),
    queuePending: new Gauge({ name: `${p}queue_pending_runs`, help: "Runs waiting in the queue (pending), by graph", labelNames: ["graph"] as const, registers }),
    queueOldestAge: new Gauge({ name: `${p}queue_oldest_pending_age_seconds`, help: "Age of the oldest pending run, by graph (0: none)", labelNames: ["graph"] as const, registers }),
    runsRunning: new Gauge({ name: `${p}runs_running`, help: "Runs executing now, in any process, by graph", labelNames: ["graph"] as const, registers }),
    runsWaiting: new Gauge({ name: `${p}runs_waiting_interrupt`, help: "Threads waiting at an interrupt (an approval or any interrupt()), by graph", labelNames: ["graph"] as const, registers }),
    oldestWaitingAge: new Gauge({ name: `${p}oldest_waiting_interrupt_age_seconds`, help: "How long the longest-waiting thread has waited at its interrupt, by graph (0: none)", labelNames: ["graph"] as const, registers }),
    scrapeErrors: new Counter({ name: `${p}metrics_queue_read_errors_total`, help: "Scrapes whose queue read failed (the queue gauges kept their last values)", registers }),
  };
  return metrics;
}

/** The metrics `createRunMetrics` makes. */
export type RunMetrics = ReturnType<typeof createRunMetrics>;

/** A registry with devmind's metrics and Node's process metrics (CPU, memory, event loop lag). */
export function createMetricsRegistry(): RunMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return createRunMetrics(registry);
}

/**
 * Label values as they go on a series: cut to OPERATIONS_DEFAULTS.maxLabelChars, and past
 * maxLabelValues distinct values of one label further ones read `other`, so a graph that names
 * its nodes or tools at run time cannot grow the series without bound.
 */
export class BoundedLabels {
  private readonly seen = new Map<string, Set<string>>();

  value(label: string, raw: string | null | undefined): string {
    const text = (raw ?? "").slice(0, OPERATIONS_DEFAULTS.maxLabelChars) || "unknown";
    let values = this.seen.get(label);
    if (values === undefined) this.seen.set(label, (values = new Set()));
    if (values.has(text)) return text;
    if (values.size >= OPERATIONS_DEFAULTS.maxLabelValues) return "other";
    values.add(text);
    return text;
  }
}
