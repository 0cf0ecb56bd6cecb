import { Hono } from "hono";
import type { DevmindConfig } from "../config.js";
import type { Database } from "../db/types.js";
import type { Runtime } from "../runtime/runtime.js";
import { webRoutes } from "./web/routes.js";

/** What the HTTP app serves from: the runtime (runs, threads), its database and the config. */
export interface AppDeps {
  runtime: Runtime;
  db: Database;
  config: DevmindConfig;
  /** Aborted when the server shuts down: open streams end (the client reconnects elsewhere). */
  shutdown?: AbortSignal;
}

/**
 * The devmind HTTP API (CONTRACT section 8) as a Hono app. Not listening: `startServer` binds it.
 */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();
  void deps;
  app.get("/ok", (c) => c.json({ ok: true }));
  app.route("/", webRoutes());
  return app;
}
