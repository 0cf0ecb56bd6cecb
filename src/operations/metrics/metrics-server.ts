import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "../../errors.js";
import { presentedScrapeKey } from "./metrics-access.js";
import type { MetricsEndpoint } from "./metrics-endpoint.js";

/** A running metrics listener (`devmind worker --metrics-port`). */
export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (and nothing else: 404) on `host:port` for a process without the HTTP API
 * (`devmind worker --metrics-port P`), with the same key rule as the server's route. A port that
 * is taken or forbidden is a ConfigError (exit 2) naming it.
 */
export async function startMetricsServer(endpoint: MetricsEndpoint, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" || path !== "/metrics") {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "NOT_FOUND", message: "only GET /metrics is served here" }));
      return;
    }
    const header = (name: string): string | undefined => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const access = endpoint.access(presentedScrapeKey(header));
    if (access !== "ok") {
      const [status, code, message] = access === "missing" ? [401, "UNAUTHORIZED", "an API key or DEVMIND_METRICS_KEY is required: send it as x-api-key or Authorization: Bearer"] : [403, "FORBIDDEN", "the key is not valid for /metrics"];
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: code, message }));
      return;
    }
    endpoint.render().then(
      ({ contentType, body }) => response.writeHead(200, { "content-type": contentType, "cache-control": "no-store" }).end(body),
      () => response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "INTERNAL", message: "metrics could not be rendered" })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" || error.code === "EACCES" || error.code === "EADDRNOTAVAIL") {
        reject(new ConfigError(`--metrics-port: cannot listen on ${host}:${port} (${error.code}): choose another port`, { variables: ["--metrics-port"] }));
      } else reject(error);
    });
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
