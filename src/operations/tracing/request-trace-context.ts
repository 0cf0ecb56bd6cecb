import { AsyncLocalStorage } from "node:async_hooks";
import type { MiddlewareHandler } from "hono";
import { formatTraceParent, newTraceParent, parseTraceParent } from "./traceparent.js";

/**
 * The W3C trace context of the HTTP request being served, for the runs it creates: the server's
 * middleware (`middleware`) holds a request's `traceparent` while the request is handled, the
 * runtime's run store reads it (`current`) when it inserts a run. A malformed `traceparent` is
 * ignored (no error). Without one, `fresh` (this process traces) gives each new run a trace of
 * its own, so the runs resuming its thread still share one. Only a request that carries a
 * traceparent enters an AsyncLocalStorage scope: a server whose clients send none pays nothing
 * for it on its promises.
 */
export class RequestTraceContext {
  private readonly storage = new AsyncLocalStorage<string>();

  constructor(private readonly fresh: boolean) {}

  /** The traceparent of the request in whose handling this is called, else a new trace's (when tracing), else none. */
  current(): string | undefined {
    return this.storage.getStore() ?? (this.fresh ? newTraceParent() : undefined);
  }

  /** Hono middleware: the rest of a request with a valid traceparent runs with it. */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const header = c.req.header("traceparent");
      const parsed = header === undefined ? null : parseTraceParent(header);
      if (parsed === null) return next();
      await this.storage.run(formatTraceParent(parsed), next);
    };
  }
}
