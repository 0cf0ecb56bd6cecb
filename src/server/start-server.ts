import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { DevmindConfig } from "../config.js";
import type { Database } from "../db/types.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Worker } from "../runtime/worker.js";
import { createApp } from "./app.js";

/** Options of `startServer`. */
export interface StartServerOptions {
  runtime: Runtime;
  db: Database;
  config: DevmindConfig;
  /** Default config.server.host. */
  host?: string;
  /** Default config.server.port; 0 picks a free port (tests). */
  port?: number;
  /** In-process worker slots; default config.worker.concurrency; 0 for none. */
  workers?: number;
}

/** A listening server. `close()` stops the workers (drain) and the listener; the caller closes runtime and db. */
export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Binds the app on host:port and starts the in-process workers. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? options.config.server.host;
  const shutdown = new AbortController();
  const app = createApp({ runtime: options.runtime, db: options.db, config: options.config, shutdown: shutdown.signal });
  const concurrency = options.workers ?? options.config.worker.concurrency;
  let worker: Worker | undefined;
  if (concurrency > 0) {
    worker = options.runtime.worker({ concurrency });
    await worker.start();
  }
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port ?? options.config.server.port }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    async close() {
      shutdown.abort();
      await worker?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
