import { AsyncLocalStorage } from "node:async_hooks";
import type { MiddlewareHandler } from "hono";
import { formatTraceParent, newTraceParent, parseTraceParent } from "./traceparent.js";

/**
 * The W3C trace context of the HTTP request being served, for the runs it creates: the server's
 * middleware (`middleware`) holds it while the request is handled, the runtime's run store reads
 * it (`current`) when it inserts a run. A malformed `traceparent` is ignored (no error); without
 * one, `fresh` (the server traces) starts a new trace so the thread's runs still share one.
 */
export class RequestTraceContext {
  private readonly storage = new AsyncLocalStorage<string>();

  constructor(private readonly fresh: boolean) {}

  /** The traceparent of the request in whose handling this is called, if any. */
  current(): string | undefined {
    return this.storage.getStore();
  }

  /** Hono middleware: the rest of the request runs with its trace context. */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const parsed = parseTraceParent(c.req.header("traceparent"));
      const traceParent = parsed !== null ? formatTraceParent(parsed) : this.fresh ? newTraceParent() : undefined;
      if (traceParent === undefined) return next();
      await this.storage.run(traceParent, next);
    };
  }
}
