import { RUNS_CHANNEL } from "../constants.js";
import type { Database } from "../db/types.js";
import type { LiveEvent, Runtime } from "../runtime/runtime.js";

/** Runs watched at once; the oldest watch is dropped beyond it (runs other processes took never report here). */
const MAX_WATCHED = 256;

const ENDINGS: Record<string, string> = {
  "run.interrupted": "waiting for approval",
  "run.succeeded": "success",
  "run.failed": "error",
  "run.timeout": "timeout",
  "run.cancelled": "cancelled",
};

/**
 * One line per run this worker process starts, resumes or stops (`run <id> started`, `run <id>
 * success`), so `devmind worker` shows what it does. Every run that becomes claimable is
 * announced on RUNS_CHANNEL; the log subscribes to its live events, which only the process
 * executing it receives. Returns a function that stops the log.
 */
export async function startWorkerLog(db: Database, runtime: Runtime, write: (line: string) => void): Promise<() => Promise<void>> {
  const watched = new Map<string, () => void>();
  const unwatch = (runId: string): void => {
    watched.get(runId)?.();
    watched.delete(runId);
  };
  const watch = (runId: string): void => {
    if (watched.has(runId)) return;
    const unsubscribe = runtime.runs.subscribe(runId, (event: LiveEvent) => {
      if (event.type === "run.started") write(`run ${runId} started (attempt ${String(event["attempt"])})`);
      else if (event.type === "run.resumed") write(`run ${runId} resumed (${String(event["reason"])})`);
      const ending = ENDINGS[event.type];
      if (ending === undefined) return;
      write(`run ${runId} ${ending}${event.type === "run.failed" ? `: ${String(event["stop_reason"])}` : ""}`);
      unwatch(runId);
    });
    watched.set(runId, unsubscribe);
    if (watched.size > MAX_WATCHED) unwatch(watched.keys().next().value as string);
  };
  const unlisten = await db.listen(RUNS_CHANNEL, (payload) => watch(payload.toLowerCase()));
  // runs queued before this process listened were announced to nobody here
  for (const run of await runtime.runs.list({ status: "pending", limit: MAX_WATCHED })) watch(run.run_id);
  return async () => {
    await unlisten();
    for (const runId of [...watched.keys()]) unwatch(runId);
  };
}
