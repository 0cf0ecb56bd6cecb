/**
 * The one abortable sleep: resolves after `ms`, or as soon as `signal` aborts (at once when it
 * already has, or when `ms <= 0`). It never rejects: a caller that must fail on abort checks
 * `signal.aborted` after it (the scripted model does). The timer is cleared and the listener
 * removed either way, so a long sleep cut short leaves nothing behind.
 *
 * Why here: model retries, the scripted model's delays, database backoff and the server's polls
 * all wait this way; one function keeps the abort handling right in one place. Waits that also
 * wake on other triggers (a worker's `wakeAll`, a LISTEN notification) keep their own waiter.
 *
 * @example
 *   await sleep(250, options.signal);
 *   if (options.signal?.aborted) return;
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted === true) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
