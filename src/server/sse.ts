import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { SERVER_DEFAULTS } from "../constants.js";
import { isDatabaseFault } from "../runtime/execution/backoff.js";
import { errorBody } from "./http-errors.js";
import type { StreamPart } from "./run-stream.js";

/**
 * Answers with a `text/event-stream` of `parts(signal)`: each part as `event:`/`data:` (JSON)/`id:`
 * lines, a `: heartbeat` comment every `heartbeatMs` (default SERVER_DEFAULTS.heartbeatMs), and — if producing parts
 * fails — a final `error` part `{error, message}`, except for a database fault: then the stream
 * just closes, so the client reconnects with `Last-Event-ID` and misses nothing. `signal` aborts when the client goes away or
 * `shutdown` fires (the server is closing: clients reconnect with Last-Event-ID elsewhere).
 * `onClientGone` is called only when the client disconnected before the parts ended (not at a
 * normal end, not at shutdown): LangGraph's `on_disconnect: "cancel"`.
 * Set headers (Content-Location, Location) on `c` before calling.
 */
export function sseResponse(
  c: Context,
  parts: (signal: AbortSignal) => AsyncIterable<StreamPart>,
  options: { shutdown?: AbortSignal | undefined; onClientGone?: (() => void) | undefined; heartbeatMs?: number | undefined } = {},
): Response {
  const { shutdown, onClientGone } = options;
  return streamSSE(c, async (stream) => {
    const abort = new AbortController();
    let ended = false;
    const stop = (): void => abort.abort();
    const gone = (): void => {
      if (!ended && !abort.signal.aborted && shutdown?.aborted !== true) onClientGone?.();
      stop();
    };
    stream.onAbort(gone);
    c.req.raw.signal.addEventListener("abort", gone, { once: true });
    shutdown?.addEventListener("abort", stop, { once: true });
    if (shutdown?.aborted === true) stop();
    const heartbeat = setInterval(() => {
      if (!stream.closed && !stream.aborted) void stream.write(": heartbeat\n\n").catch(gone);
    }, options.heartbeatMs ?? SERVER_DEFAULTS.heartbeatMs);
    heartbeat.unref?.();
    try {
      for await (const part of parts(abort.signal)) {
        if (abort.signal.aborted || stream.aborted) break;
        await stream.writeSSE({ event: part.event, data: JSON.stringify(part.data), ...(part.id === undefined ? {} : { id: part.id }) });
      }
    } catch (error) {
      // a database that stayed away past the stream's patience: close without an `error` part,
      // which the SDK would take for the run's end; it reconnects with Last-Event-ID instead
      if (!abort.signal.aborted && !stream.aborted && !isDatabaseFault(error)) {
        const { body } = errorBody(error);
        await stream.writeSSE({ event: "error", data: JSON.stringify(body) }).catch(() => undefined);
      }
    } finally {
      ended = true;
      clearInterval(heartbeat);
      c.req.raw.signal.removeEventListener("abort", gone);
      shutdown?.removeEventListener("abort", stop);
      abort.abort();
    }
  });
}
