import type { OperationsSettings } from "../../config.js";
import type { Logger } from "../../logger.js";
import type { AttemptObserver, RunObserver } from "../../runtime/runtime.js";
import { OPERATIONS_DEFAULTS } from "../constants.js";

/**
 * LangSmith tracing of every run (LANGSMITH_TRACING or LANGCHAIN_TRACING_V2): each attempt's graph
 * runs with LangChain's own tracer (`LangChainTracer`) posting to LANGSMITH_ENDPOINT, with the
 * run's `run_id`, `thread_id`, `graph_id` and `assistant_id` in the trace's metadata as the
 * Platform sets them (the runtime puts them in the graph's config). The langsmith client and
 * tracer load only here. The client never makes a run wait (root runs are not awaited, its queue
 * is bounded by OPERATIONS_DEFAULTS.langsmithMaxQueueBytes); an endpoint that
 * is away or refuses is one warn line per outage (what it misses is dropped), one info line when
 * it answers again.
 */
export async function startLangsmith(settings: NonNullable<OperationsSettings["langsmith"]>, logger: Logger): Promise<{ observer: RunObserver; close: () => Promise<void> }> {
  const [{ Client }, { LangChainTracer }] = await Promise.all([import("langsmith"), import("@langchain/core/tracers/tracer_langchain")]);
  const d = OPERATIONS_DEFAULTS;
  let down = false;
  let dropped = 0;
  const outage = (why: string): Response => {
    dropped += 1;
    if (!down) logger.warn({ event: "langsmith.export_failed", endpoint: settings.endpoint, error: why }, "cannot send traces to LangSmith; runs go on, traces are dropped until it answers");
    down = true;
    // the client takes it as sent: nothing queues up behind an endpoint that is away, and it logs nothing of its own
    return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  };
  const guardedFetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
    let response: Response;
    try {
      response = await fetch(input, { ...init, signal: AbortSignal.any([AbortSignal.timeout(d.langsmithTimeoutMs), ...(init?.signal ? [init.signal] : [])]) });
    } catch (error) {
      return outage(error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error));
    }
    // a server without /info is LangSmith's older API: the client falls back by itself
    if (!response.ok && !String(typeof input === "string" ? input : input instanceof URL ? input.href : input.url).endsWith("/info")) return outage(`HTTP ${response.status}`);
    if (down) {
      logger.info({ event: "langsmith.export_recovered", endpoint: settings.endpoint, dropped_requests: dropped }, `LangSmith answers again (${dropped} requests dropped meanwhile)`);
      down = false;
      dropped = 0;
    }
    return response;
  };
  const client = new Client({
    apiUrl: settings.endpoint,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
    fetchImplementation: guardedFetch as typeof fetch,
    blockOnRootRunFinalization: false,
    maxIngestMemoryBytes: d.langsmithMaxQueueBytes,
    callerOptions: { maxRetries: 0 },
    timeout_ms: d.langsmithTimeoutMs,
  });
  logger.info({ event: "langsmith.started", endpoint: settings.endpoint, project: settings.project }, "LangSmith tracing on");
  const observer: RunObserver = {
    leases: () => undefined,
    attempt(): AttemptObserver {
      const tracer = new LangChainTracer({ projectName: settings.project, client });
      return { event: () => undefined, end: () => undefined, callbacks: [tracer] };
    },
  };
  return {
    observer,
    close: async () => {
      // what is queued goes out, bounded: a dead endpoint does not hold the process at exit
      await Promise.race([client.awaitPendingTraceBatches().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, d.langsmithTimeoutMs).unref())]);
    },
  };
}
