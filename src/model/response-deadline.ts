/**
 * A deadline on the whole HTTP response, body included. The openai SDK's `timeout` only covers
 * the wait for the response headers: a server that sends headers and then stalls mid-stream
 * would hold a model call forever. This fetch wrapper errors the body with a `ModelError`
 * `MODEL_TIMEOUT` once `timeoutMs` have passed since the request started, so a streamed answer
 * ends with a clear timeout instead of hanging (or, as an abort would, ending silently as if it
 * were complete).
 */
import { ModelError } from "../errors.js";

/** The fetch signature the openai SDK accepts. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Wraps `fetchImpl` so each response's body must finish within `timeoutMs` of the request's
 * start. The wait for headers is left to the caller's own timeout (the SDK's), which is retried
 * as a transient error; a body past the deadline is not retried (its start was already streamed).
 */
export function withResponseDeadline(fetchImpl: FetchLike, timeoutMs: number): FetchLike {
  return async (input, init) => {
    const started = Date.now();
    const response = await fetchImpl(input, init);
    if (response.body === null) return response;
    const remaining = Math.max(1, timeoutMs - (Date.now() - started));
    return new Response(guardBody(response.body, remaining, timeoutMs), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function guardBody(body: ReadableStream<Uint8Array>, remainingMs: number, timeoutMs: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setTimeout(() => {
        settled = true;
        controller.error(new ModelError("MODEL_TIMEOUT", `the model's response did not complete within ${timeoutMs} ms`, { details: { timeoutMs } }));
        reader.cancel().catch(() => undefined);
      }, remainingMs);
      // a response nobody reads must not keep the process alive
      timer.unref?.();
    },
    async pull(controller) {
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch (error) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        controller.error(error);
        return;
      }
      // the deadline may have fired while we waited; the stream is errored then
      if (settled) return;
      if (result.done) {
        settled = true;
        clearTimeout(timer);
        controller.close();
      } else {
        controller.enqueue(result.value);
      }
    },
    cancel(reason) {
      settled = true;
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  });
}
