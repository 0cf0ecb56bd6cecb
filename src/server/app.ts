import { randomUUID } from "node:crypto";
import { Hono, type MiddlewareHandler } from "hono";
import { corsHeaders, everyResponseHeader } from "./cors.js";
import type { DevmindConfig } from "../config.js";
import { SERVER_CORS, SERVER_DEFAULTS } from "../constants.js";
import type { Runtime } from "../runtime/runtime.js";
import { requireApiKey, type AuthVariables } from "./auth.js";
import { localOwnerGate } from "./local-owner.js";
import type { CustomAuth } from "./custom-auth/auth-types.js";
import { requireAuthenticatedUser } from "./custom-auth/authenticate.js";
import { rejectForeignBrowserRequests } from "./web/browser-guard.js";
import { errorBody, familyErrorResponse, httpError } from "./http-errors.js";
import { routeFamily } from "./route-family.js";
import { requestBodyLimit } from "./body-limit.js";
import { devmindRoutes } from "./routes/devmind-routes.js";
import { langgraphAssistantRoutes } from "./routes/langgraph-assistants.js";
import { langgraphRunRoutes } from "./routes/langgraph-runs.js";
import { langgraphThreadRoutes } from "./routes/langgraph-threads.js";
import { storeRoutes } from "./routes/store-routes.js";
import { cronRoutes } from "./routes/cron-routes.js";
import { protocolRoutes } from "./protocol/protocol-routes.js";
import { internalRoutes } from "./routes/internal-routes.js";
import { webRoutes } from "./web/routes.js";
import { mountUserHttp, userCorsOptions, type UserHttp } from "./user-http.js";
import { uiAssetRoutes, uiComponentRoutes, type UiBundles } from "./ui-bundles.js";
import { silentLogger, type Logger } from "../logger.js";
import { DevmindError } from "../errors.js";
import { OutageLog } from "./outage-log.js";
import type { MetricsEndpoint } from "../operations/metrics/metrics-endpoint.js";
import { countResponses, metricsRoute } from "./metrics-route.js";

/**
 * What the HTTP app serves from: the runtime (runs, threads, files, health) and the config. The
 * server reaches the database only through the runtime.
 */
export interface AppDeps {
  runtime: Runtime;
  config: DevmindConfig;
  /** Aborted when the server shuts down: open streams end (clients reconnect with Last-Event-ID). */
  shutdown?: AbortSignal | undefined;
  /** Where failed requests (5xx, unexpected errors) are logged, with request id, method and path; default silent. */
  logger?: Logger | undefined;
  /** SSE heartbeat interval; default SERVER_DEFAULTS.heartbeatMs (tests shorten it). */
  heartbeatMs?: number | undefined;
  /** The project's `http` section of langgraph.json (its Hono app, disabled groups, CORS), mounted by `mountUserHttp`. */
  http?: UserHttp | undefined;
  /** The project's generative UI bundles (`ui` of langgraph.json), served under `/ui/{name}`. */
  ui?: UiBundles | undefined;
  /** The server's own base URL once it listens (`selfBaseUrl`): a run's webhook path is resolved against it. */
  selfUrl?: (() => string | undefined) | undefined;
  /** The project's auth handler (`auth` in langgraph.json): it authenticates every API request instead of the API keys. */
  /** `devmind dev`: the reload status `GET /dev/status` answers (and the page shows); absent on `serve`. */
  dev?: { status(): unknown } | undefined;
  auth?: CustomAuth | undefined;
  /** `GET /metrics` and the response counts (`src/operations`); none: no `/metrics`. */
  metrics?: MetricsEndpoint | null | undefined;
  /** Runs created by a request carry its W3C trace context (`src/operations/tracing`); none: not stored. */
  traceContext?: MiddlewareHandler | undefined;
  /**
   * `serve` / `dev` on the embedded database: the key of the local owner (`localOwnerGate`), which
   * the server writes into the data directory's lock file for CLI commands beside it. None: no local owner.
   */
  localOwnerKey?: string | undefined;
}

/** The version `/info` reports. */
const VERSION = "0.1.0";

/**
 * The devmind HTTP API (CONTRACT section 8) as a Hono app; `startServer` binds it.
 *
 * Order matters: CORS (preflights answered without a key; the SDK's headers allowed and
 * `Content-Location`/`Location` exposed), the body limit (SERVER_DEFAULTS.bodyLimitBytes, 413
 * PAYLOAD_TOO_LARGE), then the open routes — `GET /ok`, `GET /info`, the web page (`/` and its
 * assets) — then the API key check (`requireApiKey`), then the API: devmind's routes
 * (`devmindRoutes`) and LangGraph Platform's assistants, threads and runs
 * (`langgraphThreadRoutes`, `langgraphRunRoutes`) and store (`storeRoutes`). Errors read by route
 * family (`routeFamily`): on LangGraph's routes as the official server's (`officialErrorResponse`:
 * plain-text messages, 400 validation bodies), on devmind's own `{"error": CODE, "message"}`;
 * 400/401/403/404/409/413/422 for what the caller can fix, never a 5xx for bad input. The API key
 * and browser guards run before any route and answer in devmind's form everywhere (the official
 * server has no such gate). Every response has `x-request-id`.
 */
export function createApp(deps: AppDeps): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  const logger = deps.logger ?? silentLogger;

  const outages = new OutageLog(logger);
  app.onError((error, c) => {
    const { status, body } = errorBody(error);
    if (status === 503) {
      outages.unavailable(body.error, { method: c.req.method, path: c.req.path.slice(0, 200), requestId: c.res.headers.get("x-request-id"), error: errorText(error) });
    } else if (status >= 500) {
      // never the body or headers: they may carry keys; the logger redacts what the message quotes
      logger.error(
        { event: "request.failed", request_id: c.res.headers.get("x-request-id"), method: c.req.method, path: c.req.path.slice(0, 200), status, code: body.error, err: errorText(error) },
        "request failed",
      );
    }
    return familyErrorResponse(c, error);
  });
  // an unknown path under LangGraph's prefixes reads as the official server's (Hono's) 404
  app.notFound((c) =>
    routeFamily(c.req.method, c.req.path) === "langgraph" ? c.text("404 Not Found", 404) : c.json({ error: "NOT_FOUND", message: `no route ${c.req.method} ${c.req.path.slice(0, 200)}` }, 404),
  );

  if (deps.metrics) app.use("*", countResponses(deps.metrics));
  if (deps.traceContext !== undefined) app.use("*", deps.traceContext);
  app.use("*", everyResponseHeader("x-request-id", randomUUID));
  app.use(
    "*",
    corsHeaders(
      userCorsOptions(deps.http, SERVER_CORS) ?? {
        origin: "*",
        allowHeaders: [...SERVER_CORS.allowHeaders],
        exposeHeaders: [...SERVER_CORS.exposeHeaders],
        allowMethods: [...SERVER_CORS.allowMethods],
        maxAge: SERVER_CORS.maxAgeSeconds,
      },
    ),
  );
  app.use(
    "*",
    requestBodyLimit({
      maxSize: SERVER_DEFAULTS.bodyLimitBytes,
      onError: (c) => familyErrorResponse(c, httpError("PAYLOAD_TOO_LARGE", `the request body is larger than ${SERVER_DEFAULTS.bodyLimitBytes} bytes`)),
    }),
  );

  // before any gate: a CLI command beside the server proves it could open the database itself
  if (deps.localOwnerKey !== undefined) app.use("*", localOwnerGate(deps.localOwnerKey));
  // the project's http app (behind the key check, before every route of ours) and its UI bundles
  if (deps.http !== undefined) mountUserHttp(app, deps.http, deps.config.server.apiKeys, deps.auth);
  if (deps.ui !== undefined) app.route("/", uiAssetRoutes(deps.ui));

  app.get("/ok", (c) => c.json({ ok: true }));
  app.get("/info", (c) =>
    c.json({
      name: "devmind",
      version: VERSION,
      graphs: deps.runtime.graphs.ids(),
      auth: deps.auth !== undefined ? "custom" : deps.config.server.apiKeys.length > 0 ? "api_key" : "none",
      flags: { assistants: true, crons: true, langsmith: (deps.config.operations?.langsmith ?? null) !== null, store: true },
    }),
  );
  app.route("/", webRoutes());
  // `devmind dev`'s reload status for the page (no key, as the page itself: it tells file names and a load error, never data);
  // `{state: "off"}` on `devmind serve`, where nothing reloads
  const dev = deps.dev;
  app.get("/dev/status", (c) => c.json(dev === undefined ? { state: "off" } : dev.status()));
  // the scraper's key check is its own (a read-only DEVMIND_METRICS_KEY), before the API's
  if (deps.metrics) app.get("/metrics", metricsRoute(deps.metrics, deps.auth !== undefined));

  // keyless (loopback) servers: other sites' pages and DNS-rebound hosts may not drive the API
  app.use("*", callerGate(deps));
  app.route("/", devmindRoutes(deps));
  app.route("/", langgraphAssistantRoutes(deps));
  app.route("/", protocolRoutes(deps));
  app.route("/", langgraphThreadRoutes(deps));
  app.route("/", langgraphRunRoutes(deps));
  app.route("/", storeRoutes(deps));
  app.route("/", cronRoutes(deps));
  if (deps.ui !== undefined) app.route("/", uiComponentRoutes(deps.ui));
  // the official server's test-support wipe: only where explicitly allowed (DEVMIND_ALLOW_TRUNCATE)
  if (deps.config.server.allowTruncate) app.route("/", internalRoutes(deps));
  return app;
}

/**
 * Who may call the API: with the project's auth handler, its `authenticate` (every request, the
 * web page's and streams included); else the API keys, and on a keyless (loopback) server the
 * browser guard (other sites' pages and DNS-rebound hosts may not drive the API).
 */
export function callerGate(deps: Pick<AppDeps, "auth" | "config">): MiddlewareHandler<{ Variables: AuthVariables }> {
  if (deps.auth !== undefined) return requireAuthenticatedUser(deps.auth);
  const guard = rejectForeignBrowserRequests(deps.config.server.apiKeys);
  const keyCheck = requireApiKey(deps.config.server.apiKeys);
  return async (c, next) => {
    if (c.get("localOwner") === true) return next();
    await guard(c, async () => {
      await keyCheck(c, next);
    });
  };
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error instanceof DevmindError ? error.message : (error.stack ?? error.message);
}
