import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { DevmindConfig } from "../config.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Worker } from "../runtime/runtime.js";
import { ConfigError } from "../errors.js";
import { createApp, type AppDeps } from "./app.js";
import { newLocalOwnerKey } from "./local-owner.js";
import { checkBindable } from "./bind-check.js";
import { bindLoopbackFetch } from "./loopback-fetch.js";
import { selfBaseUrl } from "./run-request.js";
import { protocolUpgrade } from "./protocol/protocol-websocket.js";

export { checkBindable, isLoopbackHost } from "./bind-check.js";

/** Options of `startServer`. */
export interface StartServerOptions {
  runtime: Runtime;
  config: DevmindConfig;
  /** Default config.server.host (DEVMIND_HOST). A non-loopback host requires API keys. */
  host?: string | undefined;
  /** Default config.server.port (DEVMIND_PORT); 0 picks a free port (tests). */
  port?: number | undefined;
  /** In-process worker slots; default config.worker.concurrency; 0 for none (runs execute elsewhere). */
  workers?: number | undefined;
  /** Log of failed requests (see AppDeps.logger); default silent. */
  logger?: AppDeps["logger"];
  /** SSE heartbeat interval; default SERVER_DEFAULTS.heartbeatMs. */
  heartbeatMs?: number | undefined;
  /** The project's `http` section (langgraph.json): its Hono app, disabled route groups, CORS. */
  http?: AppDeps["http"];
  /** The project's generative UI bundles (`buildUiBundles`), served under `/ui/{name}`. */
  ui?: AppDeps["ui"];
  /** The project's auth handler (`loadCustomAuth`): it authenticates and authorizes every API request. */
  auth?: AppDeps["auth"];
  /** `devmind dev`'s reload status, served at `GET /dev/status`. */
  dev?: AppDeps["dev"];
  /** `GET /metrics` (`Operations.metrics`); none: not served. */
  metrics?: AppDeps["metrics"];
  /** Stores each request's W3C trace context with the runs it creates (`Operations.traceContext`). */
  traceContext?: AppDeps["traceContext"];
  /**
   * `serve` / `dev` on the embedded database: accept a local owner (`localOwnerGate`) with a fresh
   * key, `RunningServer.localOwnerKey`, which the caller writes into the data directory's lock file.
   */
  localOwner?: boolean | undefined;
}

/** A listening server. */
export interface RunningServer {
  /** `http://host:port`, e.g. for `new Client({ apiUrl: server.url })`. */
  url: string;
  port: number;
  /** With `localOwner`: the key a local owner presents (to be written into the 0600 lock file, never printed or logged). */
  localOwnerKey?: string | undefined;
  /**
   * Ends open streams, stops the workers (their runs stop at a step boundary and go back to the
   * queue) and closes the listener. The caller closes the runtime and the database afterwards.
   */
  close(): Promise<void>;
}

/**
 * Binds the HTTP API on host:port and starts `workers` in-process worker slots. Refuses
 * (ConfigError, exit 2 from `devmind serve`) to bind a non-loopback host when no API keys are
 * configured: an open server on a network would let anyone run tools and approve them.
 *
 * @example
 *   const { config, runtime, close } = await openRuntime();
 *   const server = await startServer({ runtime, config, port: 0, workers: 2 });
 *   // new Client({ apiUrl: server.url, apiKey })
 *   await server.close(); await close();
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? options.config.server.host;
  checkBindable(host, options.config, options.auth !== undefined);
  const shutdown = new AbortController();
  let selfUrl: string | undefined;
  const localOwnerKey = options.localOwner === true ? newLocalOwnerKey() : undefined;
  const app = createApp({ localOwnerKey, runtime: options.runtime, config: options.config, shutdown: shutdown.signal, logger: options.logger, heartbeatMs: options.heartbeatMs, http: options.http, ui: options.ui, auth: options.auth, dev: options.dev, selfUrl: () => selfUrl, metrics: options.metrics, traceContext: options.traceContext });
  const wantedPort = options.port ?? options.config.server.port;
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: wantedPort }, () => resolve(s));
    s.once("error", (error: NodeJS.ErrnoException) => {
      // a taken or forbidden address is the caller's to fix (exit 2), not a crash
      if (error.code === "EADDRINUSE" || error.code === "EACCES" || error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND") {
        reject(new ConfigError(`cannot listen on ${host}:${wantedPort} (${error.code}): choose another --port / DEVMIND_PORT or --host / DEVMIND_HOST`, { variables: ["DEVMIND_HOST", "DEVMIND_PORT"] }));
      } else reject(error);
    });
  });
  // the protocol's WebSocket transport (GET /threads/{id}/stream/events), through the app's gate
  server.on("upgrade", protocolUpgrade((request) => app.fetch(request)));
  const concurrency = options.workers ?? options.config.worker.concurrency;
  let worker: Worker | undefined;
  if (concurrency > 0) {
    worker = options.runtime.worker({ concurrency });
    try {
      await worker.start();
    } catch (error) {
      shutdown.abort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  }
  // expired memory-store items are deleted every DEVMIND_STORE_SWEEP_MINUTES while the server runs,
  // threads past their TTL every THREAD_DEFAULTS.ttlSweepMinutes
  // Annotation graphs' schemas come from their TypeScript sources: read them now, not at the first request
  // a graph problem found now is the graph's (logged, its routes answer 422), never the server's end
  options.runtime.graphs.warmSchemas().catch((error: unknown) => options.logger?.error({ event: "graphs.warm_failed", error: error instanceof Error ? error.message : String(error) }, "reading the graphs' schemas failed"));
  options.runtime.store.start();
  options.runtime.threads.startSweeper();
  const port = (server.address() as AddressInfo).port;
  selfUrl = selfBaseUrl(host, port);
  const shown = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shown}:${port}`;
  // `new Client()` without a URL in this process (a project's route or graph) reaches this server in-process
  const unbindLoopback = bindLoopbackFetch((request) => app.fetch(request), url);
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    ...(localOwnerKey === undefined ? {} : { localOwnerKey }),
    close() {
      closing ??= (async () => {
        unbindLoopback();
        shutdown.abort();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await worker?.stop();
        await options.runtime.store.stop();
        await options.runtime.threads.stopSweeper();
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        await closed;
      })();
      return closing;
    },
  };
}
