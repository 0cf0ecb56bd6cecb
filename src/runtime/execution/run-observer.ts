import type { RunEventData } from "../events/run-events.js";
import type { RunRecord } from "../queue/run-record.js";

/**
 * What an observer learns of one attempt of a run executing in this process: every event it
 * emits (stored or live), in order, then how the attempt ended. Called synchronously by the
 * executor; an observer must be cheap and must not throw (what it throws is dropped).
 */
export interface AttemptObserver {
  event(event: RunEventData): void;
  /** The attempt is over: the run as stored afterwards, or the error it stopped with (a lease lost, a database fault). */
  end(outcome: { run: RunRecord | null; error: unknown }): void;
  /** LangChain callback handlers the attempt's graph runs with (a tracer), if any. */
  readonly callbacks?: readonly unknown[];
  /**
   * A model or tool call of a graph that reports no step events of its own (a user graph's chat
   * models and tools), as LangChain's callbacks saw it end; the built-in agent's calls come as
   * `model.*` / `tool.call.*` events instead.
   */
  call?(call: ObservedCall): void;
}

/**
 * One call a user graph made, as it ended: `name` the model (`ls_model_name`, else the model's
 * class) or the tool, null when unknown; `durationMs` null when its start was not seen;
 * `toolCallId` the id of the tool call a model asked for, when the tool was run with one.
 */
export type ObservedCall =
  | { kind: "model"; name: string | null; ok: boolean; durationMs: number | null; usage: { input_tokens: number; output_tokens: number } }
  | { kind: "tool"; name: string | null; ok: boolean; durationMs: number | null; toolCallId?: string };

/**
 * Watches what the runtime does, without taking part (metrics, traces): the executor hands it
 * each attempt, the worker's reaper the leases it took back. No business logic asks it anything;
 * it cannot change or slow a run. `src/operations` builds one from the configuration.
 */
export interface RunObserver {
  /** An attempt of `run` starts executing here; returns what follows it (or undefined: nothing). */
  attempt(run: RunRecord): AttemptObserver | undefined;
  /** The reaper re-queued runs whose lease lapsed (`expired`), or ended them at DEVMIND_MAX_ATTEMPTS. */
  leases(reason: "expired" | "max_attempts", count: number): void;
}

/** `observer.attempt(run)`, with whatever the observer throws dropped: the attempt's observer wrapped the same way. */
export function observeAttempt(observer: RunObserver | undefined, run: RunRecord): AttemptObserver | undefined {
  if (observer === undefined) return undefined;
  let inner: AttemptObserver | undefined;
  try {
    inner = observer.attempt(run);
  } catch {
    return undefined;
  }
  if (inner === undefined) return undefined;
  const safe = inner;
  return {
    event: (event) => {
      try {
        safe.event(event);
      } catch {
        // an observer's failure is its own
      }
    },
    end: (outcome) => {
      try {
        safe.end(outcome);
      } catch {
        // an observer's failure is its own
      }
    },
    ...(safe.callbacks === undefined ? {} : { callbacks: safe.callbacks }),
    ...(safe.call === undefined
      ? {}
      : {
          call: (call: ObservedCall) => {
            try {
              safe.call?.(call);
            } catch {
              // an observer's failure is its own
            }
          },
        }),
  };
}
