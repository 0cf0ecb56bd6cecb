import type { EnvValues } from "./config-schema.js";
import { OPERATIONS_DEFAULTS } from "./operations/constants.js";

/** What `src/operations` is configured with (docs/operations.md). */
export interface OperationsSettings {
  /**
   * `/metrics` (DEVMIND_METRICS, default on): with API keys set it needs one of them or `key`
   * (DEVMIND_METRICS_KEY, a read-only key good for `/metrics` only), unless `public`
   * (DEVMIND_METRICS_PUBLIC) waives it.
   */
  metrics: { enabled: boolean; key?: string; public: boolean };
  /**
   * OpenTelemetry traces, null unless OTEL_TRACES_EXPORTER (otlp | console) or an OTLP endpoint
   * is set (OTEL_TRACES_EXPORTER=none turns them off). `url`: where OTLP/HTTP spans are posted
   * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`).
   */
  tracing: { exporter: "otlp" | "console"; url: string; serviceName: string } | null;
  /** LangSmith tracing of every run, null unless LANGSMITH_TRACING (or LANGCHAIN_TRACING_V2) is true. */
  langsmith: { endpoint: string; apiKey?: string; project: string } | null;
}

/** The operations settings from the validated variables. */
export function operationsSettings(v: EnvValues): OperationsSettings {
  const d = OPERATIONS_DEFAULTS;
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? "http://localhost:4318/v1/traces" : `${base.replace(/\/+$/, "")}/v1/traces`);
  const exporter = v.OTEL_TRACES_EXPORTER ?? (base !== undefined || v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined ? "otlp" : "none");
  return {
    metrics: { enabled: v.DEVMIND_METRICS ?? d.metrics, ...(v.DEVMIND_METRICS_KEY === undefined ? {} : { key: v.DEVMIND_METRICS_KEY }), public: v.DEVMIND_METRICS_PUBLIC ?? d.metricsPublic },
    tracing: exporter === "none" ? null : { exporter, url, serviceName: v.OTEL_SERVICE_NAME ?? d.serviceName },
    langsmith:
      v.LANGSMITH_TRACING === true
        ? { endpoint: v.LANGSMITH_ENDPOINT ?? d.langsmithEndpoint, ...(v.LANGSMITH_API_KEY === undefined ? {} : { apiKey: v.LANGSMITH_API_KEY }), project: v.LANGSMITH_PROJECT ?? d.langsmithProject }
        : null,
  };
}
