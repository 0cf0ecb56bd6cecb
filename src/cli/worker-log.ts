import type { LiveEvent, Runtime } from "../runtime/runtime.js";

const ENDINGS: Partial<Record<LiveEvent["type"], string>> = {
  "run.interrupted": "waiting for approval",
  "run.succeeded": "success",
  "run.failed": "error",
  "run.timeout": "timeout",
  "run.cancelled": "cancelled",
};

/**
 * One line per run this worker process starts, resumes or stops (`run <id> started`, `run <id>
 * success`), so `devmind worker` shows what it does: the live events of every run this process
 * executes (`runtime.runs.subscribeAll`). Returns a function that stops the log.
 */
export async function startWorkerLog(runtime: Runtime, write: (line: string) => void): Promise<() => Promise<void>> {
  const unsubscribe = runtime.runs.subscribeAll((runId: string, event: LiveEvent) => {
    if (event.type === "run.started") write(`run ${runId} started (attempt ${event.attempt})`);
    else if (event.type === "run.resumed") write(`run ${runId} resumed (${event.reason})`);
    const ending = ENDINGS[event.type];
    if (ending === undefined) return;
    write(`run ${runId} ${ending}${event.type === "run.failed" ? `: ${event.stop_reason}` : ""}`);
  });
  return async () => unsubscribe();
}
