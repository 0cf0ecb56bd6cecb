import type { Context } from "hono";
import { httpError } from "./http-errors.js";
import { readBody, RunCreateBody } from "./validation.js";

/**
 * Request headers never copied into a run's `configurable`: the keys of devmind's API and those
 * LangGraph Platform withholds (`x-api-key`, `x-tenant-id`, `x-service-key`).
 */
const WITHHELD_HEADERS: ReadonlySet<string> = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

/**
 * The request headers a run's graph sees in `config.configurable`, as LangGraph Platform copies
 * them: every `x-*` header but the withheld ones (WITHHELD_HEADERS) and `user-agent`, under their
 * lower-case names. A project passes per-request values (a tenant, a feature flag) to its graph this
 * way, or its `http.app` middleware adds such a header.
 */
export function headerConfigurable(headers: Headers): Record<string, string> {
  const copied: Record<string, string> = {};
  for (const [rawName, value] of headers.entries()) {
    const name = rawName.toLowerCase();
    if ((name.startsWith("x-") && !WITHHELD_HEADERS.has(name)) || name === "user-agent") copied[name] = value;
  }
  return copied;
}

/**
 * A run's `webhook` as the runtime stores it: an absolute URL as given; a path (`/hooks/done`, as
 * LangGraph Platform takes for a route of the server itself, e.g. one of the project's `http.app`)
 * resolved against `self`, the server's own address. Other relative forms (`hooks/done`,
 * `//host/x`) are left for the runtime's check to refuse.
 */
export function resolveWebhook(webhook: string | null | undefined, self: string): string | null | undefined {
  if (typeof webhook !== "string" || !webhook.startsWith("/") || webhook.startsWith("//")) return webhook;
  return new URL(webhook, self).toString();
}

/**
 * The base URL a server reaches itself at from its listen address: a wildcard host (`0.0.0.0`,
 * `::`) becomes the loopback address, any other host is used as it is.
 */
export function selfBaseUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" || host === "[::]" ? "::1" : host;
  const shown = reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable;
  return `http://${shown}:${port}`;
}

/**
 * Reads a LangGraph run request (`RunCreateBody`) with what the request adds to it, as LangGraph
 * Platform does: its headers in `config.configurable` (`headerConfigurable`, over the body's
 * values of the same names) and a `webhook` path resolved against this server (`resolveWebhook`;
 * `self` is the listen address, else the request's own origin).
 */
export async function readRunRequest(c: Context, self: string | undefined): Promise<RunCreateBody> {
  return withRequestContext(await readBody(c, RunCreateBody), c, self);
}

/** `readRunRequest`'s additions to an already read body (`POST /runs/batch` reads a list). */
export function withRequestContext(body: RunCreateBody, c: Context, self: string | undefined): RunCreateBody {
  const fromHeaders = headerConfigurable(c.req.raw.headers);
  const config = body.config ?? {};
  const configurable = config["configurable"];
  if (configurable !== undefined && configurable !== null && (typeof configurable !== "object" || Array.isArray(configurable))) {
    throw httpError("REQUEST_INVALID", "config.configurable must be an object", { field: "config.configurable" });
  }
  const merged = Object.keys(fromHeaders).length === 0 ? body.config : { ...config, configurable: { ...(configurable as Record<string, unknown> | null | undefined), ...fromHeaders } };
  return { ...body, config: merged, webhook: resolveWebhook(body.webhook, self ?? new URL(c.req.url).origin) };
}
