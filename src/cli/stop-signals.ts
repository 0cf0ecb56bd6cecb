import { FORCED_EXIT } from "./run-session.js";

/** What `onStopSignals` hands back: a promise settled by the first signal, and the unhook. */
export interface StopSignals {
  /** Resolves at the first SIGINT / SIGTERM. */
  stopped: Promise<void>;
  /** Removes the listeners (call in `finally`). */
  dispose(): void;
}

/**
 * The shutdown rule of the long-running commands (`serve`, `worker`): the first SIGINT / SIGTERM
 * prints `notice` on stderr and resolves `stopped` so the command drains; a second one exits at
 * once with FORCED_EXIT (130).
 */
export function onStopSignals(notice: string): StopSignals {
  let signals = 0;
  let stopRequested: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const onSignal = (): void => {
    signals += 1;
    if (signals >= 2) process.exit(FORCED_EXIT);
    process.stderr.write(`${notice}\n`);
    stopRequested();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    stopped,
    dispose() {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
    },
  };
}
