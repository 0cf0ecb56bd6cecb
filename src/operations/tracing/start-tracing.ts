import type { ExportResult } from "@opentelemetry/core";
import type { OperationsSettings } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { RunObserver } from "../../runtime/runtime.js";
import { OPERATIONS_DEFAULTS } from "../constants.js";
import { spanObserver } from "./span-observer.js";

type SpanExporter = import("@opentelemetry/sdk-trace-base").SpanExporter;
type ReadableSpan = import("@opentelemetry/sdk-trace-base").ReadableSpan;

/**
 * Starts OpenTelemetry tracing as configured (OTEL_*): the SDK and the exporter are loaded here
 * only, so a process without OTEL_* set never loads them. Spans wait in a bounded batch queue
 * (OPERATIONS_DEFAULTS.spanQueueSize; past it new ones are dropped) and go out every
 * spanExportDelayMs: a collector that is away costs a run nothing. An outage is one warn line
 * (and one info line when it answers again). `close` flushes what is queued (bounded) and stops.
 */
export async function startTracing(settings: NonNullable<OperationsSettings["tracing"]>, model: string, logger: Logger): Promise<{ observer: RunObserver; close: () => Promise<void> }> {
  const [{ BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, { resourceFromAttributes }] = await Promise.all([import("@opentelemetry/sdk-trace-base"), import("@opentelemetry/resources")]);
  const d = OPERATIONS_DEFAULTS;
  let exporter: SpanExporter;
  if (settings.exporter === "console") exporter = new ConsoleSpanExporter();
  else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    exporter = new OTLPTraceExporter({ url: settings.url, timeoutMillis: d.spanExportTimeoutMs, concurrencyLimit: 2 });
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName, "process.pid": process.pid }),
    spanProcessors: [new BatchSpanProcessor(outageLogged(exporter, settings.url, logger), { maxQueueSize: d.spanQueueSize, maxExportBatchSize: d.spanBatchSize, scheduledDelayMillis: d.spanExportDelayMs, exportTimeoutMillis: d.spanExportTimeoutMs })],
  });
  logger.info({ event: "tracing.started", exporter: settings.exporter, url: settings.exporter === "otlp" ? settings.url : undefined }, "OpenTelemetry tracing on");
  const tracer = provider.getTracer("devmind");
  return {
    observer: spanObserver(tracer, model),
    close: async () => {
      await provider.forceFlush().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    },
  };
}

/** `exporter`, saying once when exports start failing and once when they succeed again. */
function outageLogged(exporter: SpanExporter, url: string, logger: Logger): SpanExporter {
  let down = false;
  let dropped = 0;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code !== 0) {
          dropped += spans.length;
          if (!down) logger.warn({ event: "tracing.export_failed", url, error: result.error?.message }, "cannot send spans to the OTLP endpoint; runs go on, spans are dropped until it answers");
          down = true;
        } else if (down) {
          logger.info({ event: "tracing.export_recovered", url, dropped_spans: dropped }, `the OTLP endpoint answers again (${dropped} spans dropped meanwhile)`);
          down = false;
          dropped = 0;
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush === undefined ? {} : { forceFlush: () => (exporter.forceFlush as () => Promise<void>)() }),
  };
}
