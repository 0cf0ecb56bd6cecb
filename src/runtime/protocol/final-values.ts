import type { ProjectedEvent } from "./part-events.js";

interface TransformerLike {
  init?: () => unknown;
  process?: (event: unknown) => unknown;
  finalize?: () => unknown;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}

/**
 * The final values of a graph's stream transformers (`compile({transformers})`) over one run's
 * protocol events, as `custom` events `{name, payload}` (the `custom:NAME` channel, the SDK's
 * `thread.extensions.NAME`), as LangGraph's stream mux flushes them when a run ends: each
 * transformer factory is called, sees every event in order, is finalized, and each promise of
 * its projection becomes one event. A transformer that throws, or a value not settled within
 * `patienceMs`, is left out.
 */
export async function transformerFinalValues(factories: readonly unknown[], events: readonly ProjectedEvent[], timestamp: number, patienceMs = 5_000): Promise<ProjectedEvent[]> {
  const out: ProjectedEvent[] = [];
  for (const factory of factories) {
    if (typeof factory !== "function") continue;
    try {
      const transformer = (factory as () => TransformerLike)();
      const projection = transformer.init?.();
      for (const [seq, event] of events.entries()) transformer.process?.({ type: "event", seq, method: event.method, params: event.params });
      await transformer.finalize?.();
      if (projection === null || typeof projection !== "object") continue;
      for (const [name, value] of Object.entries(projection)) {
        if (!isPromiseLike(value)) continue;
        let timer: NodeJS.Timeout | undefined;
        const payload = await Promise.race([Promise.resolve(value), new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), patienceMs)))]).finally(() => clearTimeout(timer));
        if (payload !== undefined) out.push({ method: "custom", params: { namespace: [], timestamp, data: { name, payload } } });
      }
    } catch {
      continue;
    }
  }
  return out;
}
