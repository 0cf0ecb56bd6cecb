import type { Context, MiddlewareHandler } from "hono";
import { cors as honoCors } from "hono/cors";

/** The options of Hono's `cors` middleware, which this one takes unchanged. */
export type CorsOptions = NonNullable<Parameters<typeof honoCors>[0]>;

/**
 * Hono's `cors`, with the same options and the same headers, that costs a simple request nothing
 * beyond its headers. Hono's sets them on `c.res` before the route runs, which makes an empty
 * response at once; the route's own response is then copied into a new one to merge them, and
 * on Node that copy turns @hono/node-server's light response into a full web Response (body
 * stream included) on every request — about a tenth of the server's CPU for a small JSON answer
 * (`POST /threads`). Here a simple request's headers go through `c.header` (Hono adds them to the response
 * the route makes with `c.json`, `c.body`, a stream); a route that returns a Response of its own
 * gets those it lacks after it. A preflight (OPTIONS) is answered by Hono's middleware itself.
 */
export function corsHeaders(options: CorsOptions): MiddlewareHandler {
  const preflight = honoCors(options);
  const origin = options.origin ?? "*";
  const exposed = options.exposeHeaders !== undefined && options.exposeHeaders.length > 0 ? options.exposeHeaders.join(",") : undefined;
  const allowOrigin = async (requestOrigin: string, c: Context): Promise<string | null | undefined> => {
    if (typeof origin === "string") return origin === "*" || origin === requestOrigin ? origin : null;
    if (typeof origin === "function") return await origin(requestOrigin, c);
    return origin.includes(requestOrigin) ? requestOrigin : null;
  };
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight(c, next);
    const headers: [string, string][] = [];
    const allowed = await allowOrigin(c.req.header("origin") ?? "", c);
    if (allowed) headers.push(["Access-Control-Allow-Origin", allowed]);
    if (options.credentials === true) headers.push(["Access-Control-Allow-Credentials", "true"]);
    if (exposed !== undefined) headers.push(["Access-Control-Expose-Headers", exposed]);
    for (const [name, value] of headers) c.header(name, value);
    if (origin !== "*") c.header("Vary", "Origin", { append: true });
    await next();
    for (const [name, value] of headers) if (!c.res.headers.has(name)) c.header(name, value);
    if (origin !== "*" && !varies(c.res.headers.get("vary"), "origin")) c.header("Vary", "Origin", { append: true });
  };
}

/** Whether a Vary header's value names `header` (lower case). */
function varies(vary: string | null, header: string): boolean {
  return vary !== null && vary.split(",").some((part) => part.trim().toLowerCase() === header);
}

/**
 * Sets header `name` on every response, to the value `value()` gives per request, the same way:
 * through `c.header` before the route, and after it on a Response the route made itself.
 */
export function everyResponseHeader(name: string, value: () => string): MiddlewareHandler {
  return async (c, next) => {
    const given = value();
    c.header(name, given);
    await next();
    if (!c.res.headers.has(name)) c.header(name, given);
  };
}
