import type { MiddlewareHandler } from "hono";
import type { DevmindConfig, OperationsSettings } from "../config.js";
import type { Database } from "../db/types.js";
import type { Logger } from "../logger.js";
import type { AttemptObserver, RunObserver } from "../runtime/runtime.js";
import { observeAttempt } from "../runtime/execution/run-observer.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { OPERATIONS_DEFAULTS } from "./constants.js";
import { metricsEndpoint, type MetricsEndpoint } from "./metrics/metrics-endpoint.js";
import { metricsObserver } from "./metrics/metrics-observer.js";
import { countDatabaseFaults } from "./metrics/observed-database.js";
import { createMetricsRegistry } from "./metrics/run-metrics.js";
import { RequestTraceContext } from "./tracing/request-trace-context.js";

/**
 * What a service process (`serve`, `worker`) watches itself with: metrics, traces, LangSmith
 * tracing, as observers of its runs (DESIGN.md "Clients and operators"). Built from the
 * configuration; what is not configured costs nothing (no module loaded, no observer).
 */
export interface Operations {
  /** The runtime's observer (undefined: nothing observes). */
  readonly observer: RunObserver | undefined;
  /** Server middleware storing each request's W3C trace context with the runs it creates (always on: a worker may trace what a server did not). */
  readonly traceContext: MiddlewareHandler;
  /** The traceparent of the request now creating a run (`RuntimeOptions.traceParent`). */
  readonly traceParent: () => string | undefined;
  /** `/metrics`, null when DEVMIND_METRICS=false. */
  readonly metrics: MetricsEndpoint | null;
  /** The database as the runtime should use it (faults counted). */
  observeDatabase(db: Database): Database;
  /** Once the runtime exists: the queue gauges read `db`, with `graphIds` reading 0 when idle. */
  attach(db: Database, graphIds: () => readonly string[]): void;
  /** Flushes and stops the exporters (bounded); safe to call twice. */
  close(): Promise<void>;
}

/** The settings, defaults filled in for a config built without them. */
export function operationsOf(config: DevmindConfig): OperationsSettings {
  return config.operations ?? { metrics: { enabled: OPERATIONS_DEFAULTS.metrics, public: OPERATIONS_DEFAULTS.metricsPublic }, tracing: null, langsmith: null };
}

/** The model label of the agent's model calls: the configured model's name (`scripted` for a script). */
export function modelLabel(config: DevmindConfig): string {
  const model = config.model;
  if (model === null) return "none";
  return model.provider === "openai" ? model.name : "scripted";
}

/**
 * Starts what the configuration asks for: metrics (default on), OpenTelemetry traces (the SDK
 * and exporter loaded only when OTEL_* asks for them) and LangSmith tracing (only with
 * LANGSMITH_TRACING). `logger` gets one line per exporter outage.
 */
export async function startOperations(config: DevmindConfig, logger: Logger): Promise<Operations> {
  const settings = operationsOf(config);
  const observers: RunObserver[] = [];
  const closers: (() => Promise<void>)[] = [];
  let endpoint: ReturnType<typeof metricsEndpoint> | null = null;
  let observeDatabase = (db: Database): Database => db;
  if (settings.metrics.enabled) {
    const metrics = createMetricsRegistry();
    endpoint = metricsEndpoint(metrics, settings.metrics, config.server.apiKeys);
    observers.push(metricsObserver(metrics, modelLabel(config)));
    observeDatabase = (db) => countDatabaseFaults(db, metrics);
  }
  if (settings.tracing !== null) {
    const { startTracing } = await import("./tracing/start-tracing.js");
    const tracing = await startTracing(settings.tracing, modelLabel(config), logger.child({ component: "tracing" }));
    observers.push(tracing.observer);
    closers.push(tracing.close);
  }
  if (settings.langsmith !== null) {
    const { startLangsmith } = await import("./langsmith/start-langsmith.js");
    const langsmith = await startLangsmith(settings.langsmith, logger.child({ component: "langsmith" }));
    observers.push(langsmith.observer);
    closers.push(langsmith.close);
  }
  const requests = new RequestTraceContext(settings.tracing !== null);
  let closing: Promise<void> | undefined;
  return {
    observer: combine(observers),
    metrics: endpoint,
    traceContext: requests.middleware(),
    traceParent: () => requests.current(),
    observeDatabase,
    attach: (db, graphIds) => endpoint?.attach(db, graphIds),
    close: () => (closing ??= Promise.all(closers.map((close) => close().catch(() => undefined))).then(() => undefined)),
  };
}

/** One observer telling each of `observers` (undefined when there are none). */
function combine(observers: readonly RunObserver[]): RunObserver | undefined {
  if (observers.length <= 1) return observers[0];
  return {
    leases: (reason, count) => {
      for (const observer of observers) {
        try {
          observer.leases(reason, count);
        } catch {
          // an observer's failure is its own
        }
      }
    },
    attempt(run: RunRecord): AttemptObserver | undefined {
      // each wrapped on its own: one observer that throws leaves the others informed
      const attempts = observers.map((observer) => observeAttempt(observer, run)).filter((a): a is AttemptObserver => a !== undefined);
      if (attempts.length === 0) return undefined;
      const callbacks = attempts.flatMap((a) => [...(a.callbacks ?? [])]);
      const callers = attempts.filter((a) => a.call !== undefined);
      return {
        event: (event) => {
          for (const a of attempts) a.event(event);
        },
        end: (outcome) => {
          for (const a of attempts) a.end(outcome);
        },
        ...(callbacks.length === 0 ? {} : { callbacks }),
        ...(callers.length === 0 ? {} : { call: (call) => callers.forEach((a) => a.call?.(call)) }),
      };
    },
  };
}
