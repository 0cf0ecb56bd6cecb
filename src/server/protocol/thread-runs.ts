import { RUN_STORE_LIMITS } from "../../constants.js";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { Runtime } from "../../runtime/runtime.js";

/**
 * Every run of a thread, oldest first (the order of a protocol subscription: a run's ordinal is
 * its index + 1), read a page at a time.
 */
export async function threadRunsOldestFirst(runtime: Runtime, threadId: string): Promise<RunRecord[]> {
  const newestFirst: RunRecord[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await runtime.runs.list({ threadId, limit: RUN_STORE_LIMITS.listMax, ...(before === undefined ? {} : { before }) });
    newestFirst.push(...page);
    if (page.length < RUN_STORE_LIMITS.listMax) break;
    before = page[page.length - 1]?.run_id;
  }
  return newestFirst.reverse();
}

/** The thread's newest run, or undefined for a thread without runs. */
export async function latestRun(runtime: Runtime, threadId: string): Promise<RunRecord | undefined> {
  return (await runtime.runs.list({ threadId, limit: 1 }))[0];
}
