import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/** Calls of one saver method during a run and the summed duration of those calls. */
export interface MethodCalls {
  calls: number;
  /** Sum of each call's own duration (calls may overlap: LangGraph saves in the background). */
  totalMs: number;
}

/** The saver methods LangGraph calls while running a graph. */
export const PROBED_METHODS = ["getTuple", "list", "put", "putWrites", "getDeltaChannelHistory"] as const;
/** One of PROBED_METHODS. */
export type ProbedMethod = (typeof PROBED_METHODS)[number];

/** Per-method call counts and time of a probed saver. */
export type SaverCalls = Record<ProbedMethod, MethodCalls>;

function emptyCalls(): SaverCalls {
  return Object.fromEntries(PROBED_METHODS.map((method) => [method, { calls: 0, totalMs: 0 }])) as SaverCalls;
}

function timeGenerator<T>(generator: AsyncGenerator<T>, record: MethodCalls): AsyncGenerator<T> {
  return (async function* timedList() {
    for (;;) {
      const started = performance.now();
      const next = await generator.next();
      record.totalMs += performance.now() - started;
      if (next.done === true) return;
      yield next.value;
    }
  })();
}

/**
 * Wraps `saver` in a Proxy that counts the calls LangGraph makes to PROBED_METHODS and sums their
 * durations (about a microsecond per call of bookkeeping). Everything else passes through, and
 * methods run with the real saver as `this`, so its internal calls are not counted.
 */
export function probeSaver<T extends BaseCheckpointSaver>(saver: T): { saver: T; calls: SaverCalls } {
  const calls = emptyCalls();
  const probed = new Proxy(saver, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || !(PROBED_METHODS as readonly (string | symbol)[]).includes(property)) return value;
      const record = calls[property as ProbedMethod];
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        record.calls += 1;
        if (property === "list") return timeGenerator(method.apply(target, args) as AsyncGenerator<unknown>, record);
        const started = performance.now();
        const result = method.apply(target, args) as Promise<unknown>;
        return result.finally(() => {
          record.totalMs += performance.now() - started;
        });
      };
    },
  });
  return { saver: probed, calls };
}
