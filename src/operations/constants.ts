/** Defaults of metrics, traces and LangSmith tracing (docs/operations.md). */
export const OPERATIONS_DEFAULTS = {
  /** `/metrics` is served (DEVMIND_METRICS). */
  metrics: true,
  /** `/metrics` needs a key when API keys are set (DEVMIND_METRICS_PUBLIC=true waives it). */
  metricsPublic: false,
  /** Prefix of every metric name. */
  metricPrefix: "devmind_",
  /** Buckets (seconds) of the run, node, model-call and tool-call duration histograms. */
  durationBuckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900] as readonly number[],
  /** A label value longer than this is cut (graph, node, tool and model names come from code, but stay bounded). */
  maxLabelChars: 64,
  /** Distinct values one label keeps before further ones read `other` (bounded series whatever the graphs do). */
  maxLabelValues: 200,
  /** The queue gauges' query runs at most this often, whatever the scrape rate (ms). */
  queueQueryMinIntervalMs: 1_000,
  /** OTEL_SERVICE_NAME when unset. */
  serviceName: "devmind",
  /** Spans kept in memory waiting for the exporter; past it new spans are dropped (a dead collector costs no memory). */
  spanQueueSize: 2_048,
  /** Spans sent per OTLP request. */
  spanBatchSize: 256,
  /** How often queued spans are sent (ms). */
  spanExportDelayMs: 1_000,
  /** One OTLP request's time limit (ms). */
  spanExportTimeoutMs: 5_000,
  /** Open spans of one attempt (nodes, model and tool calls) kept at most: a graph that never closes them stays bounded. */
  maxOpenSpansPerAttempt: 1_000,
  /** LANGSMITH_ENDPOINT when unset. */
  langsmithEndpoint: "https://api.smith.langchain.com",
  /** LANGSMITH_PROJECT when unset. */
  langsmithProject: "default",
  /** Time limit of one LangSmith request (ms). */
  langsmithTimeoutMs: 5_000,
  /** Bytes of runs LangSmith's client holds waiting to be sent; past it new ones are dropped. */
  langsmithMaxQueueBytes: 16 * 1024 * 1024,
} as const;
