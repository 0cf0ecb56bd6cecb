import { THREAD_DEFAULTS } from "../constants.js";
import { hasErrorCode } from "../errors.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import type { Runtime } from "../runtime/runtime.js";
import { runStream, type StreamPart } from "./run-stream.js";
import { parseStreamResume, type StreamCursor, type StreamResume } from "./stream-cursor.js";
import { sleep } from "../sleep.js";

/** Where a thread stream is: a run of the thread and where the client is in that run's stream. */
export interface ThreadStreamCursor {
  runId: string;
  resume: StreamResume;
}

/** A thread stream part's SSE id: the run, then the part's id in the run's stream (`RUN_ID:12`). */
export function formatThreadCursor(runId: string, runPartId: string): string {
  return `${runId}:${runPartId}`;
}

/** Parses a thread stream `Last-Event-ID` (older devmind's `RUN_ID:12-4-3` too); undefined for anything this server did not write. */
export function parseThreadCursor(id: string | undefined | null): ThreadStreamCursor | undefined {
  if (id === undefined || id === null) return undefined;
  const colon = id.indexOf(":");
  if (colon <= 0) return undefined;
  const runId = id.slice(0, colon).trim();
  const resume = parseStreamResume(id.slice(colon + 1));
  if (!/^[0-9a-f-]{36}$/i.test(runId) || resume === undefined) return undefined;
  return { runId: runId.toLowerCase(), resume };
}

const ACTIVE = new Set(["pending", "running"]);

function isAfter(run: RunRecord, other: RunRecord): boolean {
  return run.created_at > other.created_at || (run.created_at === other.created_at && run.run_id > other.run_id);
}

/**
 * LangGraph Platform's thread stream (`GET /threads/{id}/stream`, the SDK's
 * `threads.joinStream`): the run stream (`runStream`, in `modes`) of each run of the thread in
 * turn, as they come, until the client goes away (`signal`). It starts with the thread's active
 * run (pending or running: from its start), else with the next run created (a run that ended at
 * an interrupt is followed by the run that resumes it, as on LangGraph Platform). Part ids are `RUN_ID:N` (N: the part's id
 * in the run's stream); `from` (a `Last-Event-ID`) continues after that part, then follows the
 * runs created after that run.
 */
export async function* threadStream(
  runtime: Runtime,
  threadId: string,
  options: { modes: ReadonlySet<string>; from?: ThreadStreamCursor | undefined; signal: AbortSignal },
): AsyncGenerator<StreamPart, void, undefined> {
  const { modes, signal } = options;
  let current: RunRecord | undefined;
  // where the current run's stream continues: after the client's last part of it, and (a run
  // followed from where it waits) past what it had streamed before
  let after: number | undefined;
  let cursor: StreamCursor | undefined;
  // the run followed last: the next one is the oldest created after it
  let previous: RunRecord | undefined;
  if (options.from !== undefined) {
    const run = await runtime.runs.get(options.from.runId).catch(() => undefined);
    if (run !== undefined && run.thread_id === threadId) {
      current = run;
      const { resume } = options.from;
      if ("after" in resume) after = resume.after;
      else cursor = resume.from;
    }
  }
  if (current === undefined) {
    const recent = await runtime.runs.list({ threadId, limit: 100 });
    const active = recent.filter((run) => ACTIVE.has(run.status)).pop();
    if (active === undefined) previous = recent[0];
    else current = active;
  }
  while (!signal.aborted) {
    if (current === undefined) {
      const recent = await runtime.runs.list({ threadId, limit: 100 });
      const next = recent.filter((run) => previous === undefined || isAfter(run, previous)).pop();
      if (next === undefined) {
        await sleep(THREAD_DEFAULTS.streamPollMs, signal);
        continue;
      }
      [current, cursor, after] = [next, undefined, undefined];
    }
    const run: RunRecord = current;
    try {
      for await (const part of runStream(runtime, run.run_id, { modes, from: cursor, after, run, signal })) {
        if (part.id === undefined) yield part;
        else {
          after = Number(part.id);
          yield { ...part, id: formatThreadCursor(run.run_id, part.id) };
        }
      }
    } catch (error) {
      // the run was deleted (with its thread, or by itself): nothing more of it to send
      if (!hasErrorCode(error, "RUN_NOT_FOUND") && !hasErrorCode(error, "THREAD_NOT_FOUND")) throw error;
    }
    if (signal.aborted) break;
    const ended = await runtime.runs.get(run.run_id).catch(() => undefined);
    [previous, current, cursor, after] = [ended ?? run, undefined, undefined, undefined];
    // the thread itself is gone: the stream ends
    if (ended === undefined && (await runtime.threads.get(threadId).then(() => false, () => true))) break;
  }
}
