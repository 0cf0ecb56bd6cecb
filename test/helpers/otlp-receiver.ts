import { createServer, type Server } from "node:http";
import type { IExportTraceServiceRequest, ISpan } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types.js";

/** A span as the receiver decoded it: the OTLP span, its attributes as a plain object, and the sending process. */
export interface ReceivedSpan {
  span: ISpan;
  attributes: Record<string, unknown>;
  pid: number | null;
}

/** An OTLP/HTTP trace receiver on a free loopback port (JSON, as the OTLP/HTTP exporter sends it). */
export interface OtlpReceiver {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  spans(): ReceivedSpan[];
  /** Requests received. */
  requests(): number;
  close(): Promise<void>;
}

function valueOf(value: { stringValue?: string | null; intValue?: number | string | null; boolValue?: boolean | null; doubleValue?: number | null; arrayValue?: { values: unknown[] } | null } | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue);
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  if (value.arrayValue) return value.arrayValue.values.map((item) => valueOf(item as never));
  return undefined;
}

/** Starts the receiver: every POST /v1/traces body is decoded as an `IExportTraceServiceRequest` (OpenTelemetry's OTLP types). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let requests = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests += 1;
      if (request.url === "/v1/traces" && (request.headers["content-type"] ?? "").includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as IExportTraceServiceRequest;
        for (const resourceSpans of body.resourceSpans ?? []) {
          const pidAttribute = resourceSpans.resource?.attributes.find((a) => a.key === "process.pid");
          const pid = pidAttribute === undefined ? null : Number(valueOf(pidAttribute.value as never));
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans ?? []) {
              received.push({ span, pid, attributes: Object.fromEntries(span.attributes.map((a) => [a.key, valueOf(a.value as never)])) });
            }
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    requests: () => requests,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
