/**
 * The one abortable sleep: resolves after `ms`, or as soon as `signal` aborts (at once when it
 * already has, or when `ms <= 0`). It never rejects: a caller that must fail on abort checks
 * `signal.aborted` after it (the scripted model does). The timer is cleared and the listener
 * removed either way, so a long sleep cut short leaves nothing behind.
 *
 * Why here: model retries, the scripted model's delays, database backoff and the server's polls
 * all wait this way; one function keeps the abort handling right in one place. Waits that also
 * wake on other triggers (a worker's `wakeAll`, a LISTEN notification) use `wakeableSleep`.
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

/**
 * The one timed wait that something else may end early: resolves after `ms`, or as soon as the
 * `wake` function handed to `hold` is called (a LISTEN notification, a run's end, a worker's
 * `wakeAll` or `stop`). `hold` registers `wake` where the waker finds it and returns how to
 * unregister it; that runs exactly once, when the sleep ends either way, and the timer is
 * cleared, so a wait woken early leaves nothing behind. Never rejects.
 *
 * @example
 *   await wakeableSleep(pollMs, (wake) => {
 *     waiters.add(wake);
 *     return () => waiters.delete(wake);
 *   });
 */
export function wakeableSleep(ms: number, hold: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    let release: (() => void) | undefined;
    let ended = false;
    const timer = setTimeout(wake, Math.max(0, ms));
    function wake(): void {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      release?.();
      resolve();
    }
    release = hold(wake);
    // woken while `hold` ran: unregister now that the undo is known
    if (ended) release();
  });
}
