import type { Handler, MiddlewareHandler } from "hono";
import type { MetricsEndpoint } from "../operations/metrics/metrics-endpoint.js";
import { presentedScrapeKey } from "../operations/metrics/metrics-access.js";
import { familyErrorResponse, httpError } from "./http-errors.js";

/**
 * `GET /metrics`: the Prometheus exposition. With API keys set it needs one of them or
 * DEVMIND_METRICS_KEY (401 without a key, 403 with a wrong one), unless DEVMIND_METRICS_PUBLIC;
 * with the project's auth handler only the metrics key opens it (or DEVMIND_METRICS_PUBLIC).
 */
export function metricsRoute(endpoint: MetricsEndpoint, customAuth: boolean): Handler {
  return async (c) => {
    const access = endpoint.access(presentedScrapeKey((name) => c.req.header(name)), customAuth);
    if (access === "missing") return familyErrorResponse(c, httpError("UNAUTHORIZED", "an API key or DEVMIND_METRICS_KEY is required: send it as x-api-key or Authorization: Bearer"));
    if (access === "invalid") return familyErrorResponse(c, httpError("FORBIDDEN", "the key is not valid for /metrics"));
    const { contentType, body } = await endpoint.render();
    return c.body(body, 200, { "content-type": contentType, "cache-control": "no-store" });
  };
}

/** Counts every response by status code (`devmind_http_responses_total`), errors included. */
export function countResponses(endpoint: MetricsEndpoint): MiddlewareHandler {
  return async (c, next) => {
    try {
      await next();
    } finally {
      endpoint.response(c.res.status);
    }
  };
}
