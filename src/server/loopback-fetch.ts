import { AsyncLocalStorage } from "node:async_hooks";
import type { MiddlewareHandler } from "hono";

/**
 * Where the SDK's `Client` looks when it is built without `apiUrl` (`new Client()` in a project's
 * route or graph): a fetch function under this symbol on `globalThis` (LangGraph's server binds one
 * that calls its app in-process), and a base URL under the second.
 */
const FETCH_SYMBOL = Symbol.for("langgraph_api:fetch");
const URL_SYMBOL = Symbol.for("langgraph_api:url");

/** The headers that carry a caller's API key. */
const KEY_HEADERS = ["x-api-key", "authorization"] as const;

/** The key headers of the request being served, for in-process calls made while serving it. */
const callerKeys = new AsyncLocalStorage<Headers>();

/**
 * Remembers the key headers of each request while it is served, so `new Client()` inside the
 * project's route calls this server as the same caller (LangGraph's in-process call goes through
 * its auth the same way; a key is all devmind's auth needs). Mount before the project's app.
 */
export function rememberCallerKeys(): MiddlewareHandler {
  return async (c, next) => {
    const keys = new Headers();
    for (const name of KEY_HEADERS) {
      const value = c.req.header(name);
      if (value !== undefined) keys.set(name, value);
    }
    await callerKeys.run(keys, next);
  };
}

/** The fetch function the SDK picks up: the server's app in-process. */
type AppFetch = (request: Request) => Response | Promise<Response>;

const holder = globalThis as unknown as Record<symbol, unknown>;

/**
 * Binds the SDK's in-process fetch to `appFetch` (the whole app: the project's middleware and
 * devmind's key check apply, as to any request) and its default URL to `url`, as LangGraph's
 * server does, so `new Client()` with no URL inside the server's process reaches this server. A
 * call without a key of its own carries the key of the request being served, if any (else
 * LANGGRAPH_API_KEY, which the SDK sends itself). The request is addressed to `url`'s host (the
 * keyless server's browser guard reads `Host`). Returns the function that restores what was bound
 * before (servers of one process, e.g. tests, bind in turn).
 */
export function bindLoopbackFetch(appFetch: AppFetch, url: string): () => void {
  const previous = { fetch: holder[FETCH_SYMBOL], url: holder[URL_SYMBOL] };
  const base = new URL(url);
  const loopback = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(new URL(input instanceof Request ? input.url : String(input), base), input instanceof Request ? input : init);
    const headers = new Headers(request.headers);
    headers.set("host", base.host);
    const keys = callerKeys.getStore();
    if (keys !== undefined && KEY_HEADERS.every((name) => !headers.has(name))) keys.forEach((value, name) => headers.set(name, value));
    const body = request.body === null ? null : await request.arrayBuffer();
    return appFetch(new Request(request.url, { method: request.method, headers, body, signal: request.signal }));
  };
  holder[FETCH_SYMBOL] = loopback;
  holder[URL_SYMBOL] = url;
  return () => {
    if (holder[FETCH_SYMBOL] !== loopback) return;
    holder[FETCH_SYMBOL] = previous.fetch;
    holder[URL_SYMBOL] = previous.url;
  };
}
