import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** What @hono/node-server passes as `c.env`: the node request the web Request is made from. */
interface NodeBindings {
  incoming?: { headers?: Record<string, string | string[] | undefined> };
}

/** A request header, from the node request when there is one (no web Headers or Request made). */
function headerOf(c: Context, name: string): string | undefined {
  const raw = (c.env as NodeBindings | undefined)?.incoming?.headers?.[name];
  if (raw !== undefined) return Array.isArray(raw) ? raw.join(", ") : raw;
  if ((c.env as NodeBindings | undefined)?.incoming !== undefined) return undefined;
  return c.req.header(name);
}

/**
 * Hono's body limit without its cost on every request: Hono's middleware makes the full web
 * Request (with an AbortController and a ReadableStream over the node request) just to see
 * whether there is a body, and @hono/node-server then reads the body through it instead of
 * straight from the socket. Here a GET or HEAD (which carry no body) passes at once, and a body
 * with a Content-Length (and no Transfer-Encoding) is judged by it, as Hono's own middleware
 * judges it; only a body of unknown length (chunked) goes through Hono's middleware, which counts
 * it as it arrives. Larger than `maxSize`: `onError`.
 */
export function requestBodyLimit(options: { maxSize: number; onError: (c: Context) => Response | Promise<Response> }): MiddlewareHandler {
  const counted = bodyLimit(options);
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = headerOf(c, "content-length");
    if (length !== undefined && headerOf(c, "transfer-encoding") === undefined) {
      return Number.parseInt(length || "0", 10) > options.maxSize ? options.onError(c) : next();
    }
    return counted(c, next);
  };
}
