import type { Event as ProtocolEvent, LifecycleData } from "@langchain/protocol";
import { PROTOCOL_DEFAULTS } from "../../constants.js";
import { hasErrorCode } from "../../errors.js";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { Runtime } from "../../runtime/runtime.js";
import { durableEventId, liveEventId, positionOf, seqOf, type EventPosition } from "../../runtime/protocol/event-position.js";
import { RunPartProjector, type ProjectedEvent } from "../../runtime/protocol/part-events.js";
import { SubgraphLifecycle, withSubgraphLifecycle } from "../../runtime/protocol/subgraph-lifecycle.js";
import { sleep } from "../../sleep.js";
import { runStream } from "../run-stream.js";
import { latestRun, threadRunsOldestFirst } from "./thread-runs.js";
import { finalValueEvents } from "./final-values.js";

/** Every LangGraph stream mode a protocol projection reads from a run's stream. */
const MODES: ReadonlySet<string> = new Set(["values", "updates", "messages", "custom", "tools", "checkpoints", "tasks"]);

/** Where a projection starts: after `since` (a `seq`), else at the start of the thread's newest run. */
export interface ProjectionStart {
  since?: number | undefined;
}

/** `since` names a position past the thread's end: nothing there to resume after. */
export class SinceBeyondEndError extends Error {
  constructor(readonly since: number) {
    super(`since ${since} is beyond the end of this thread's events`);
  }
}

/** The terminal root lifecycle of a run that stopped. */
function terminalOf(run: RunRecord, interrupted: boolean): LifecycleData {
  if (run.status === "error" || run.status === "timeout") return { event: "failed", graph_name: run.graph_id, error: run.error?.message ?? run.stop_reason ?? run.status };
  if (run.status === "interrupted" || interrupted) return { event: "interrupted", graph_name: run.graph_id };
  return { event: "completed", graph_name: run.graph_id };
}

/** Where a projection starts (`startOrdinal`): the run's ordinal, and the thread's runs as read then (not read again to start). */
export interface ProjectionFrom {
  ordinal: number;
  runs: RunRecord[];
}

/**
 * Checks `since` against the thread's runs and returns the ordinal to start at: `since`'s run, or
 * (none given) the newest run's; 0 when the thread has no run yet (the first run created is
 * followed). SinceBeyondEndError for a position after the last run's end.
 */
export async function startOrdinal(runtime: Runtime, threadId: string, start: ProjectionStart): Promise<ProjectionFrom> {
  const runs = await threadRunsOldestFirst(runtime, threadId);
  if (start.since === undefined) return { ordinal: runs.length, runs };
  const { ordinal } = positionOf(start.since);
  if (ordinal > runs.length) throw new SinceBeyondEndError(start.since);
  return { ordinal: Math.max(ordinal, 1), runs };
}

/**
 * The protocol events of a thread (`@langchain/protocol`), projected from what is stored: each
 * run's LangGraph stream (`runStream`: its durable events and checkpoints, in one order), run
 * after run, oldest first, as `RunPartProjector` turns it into protocol events, then the run's
 * end (open messages finished, the graph's final-value transformers, the root's terminal
 * `lifecycle`). Every event's `seq` is its position in that order (see PROTOCOL_DEFAULTS) and
 * its `event_id` names its run and position, the same in every process and after a restart: a
 * client resuming `since` a `seq` gets exactly the events after it. Live token chunks (never
 * stored) carry the position of the durable part before them and an id of their own; a client
 * that resumes after them gets their message whole. Follows new runs until `signal` aborts.
 */
export async function* threadProjection(runtime: Runtime, threadId: string, from: ProjectionFrom, since: number | undefined, signal: AbortSignal): AsyncGenerator<ProtocolEvent> {
  let current = from.ordinal;
  // the runs as `startOrdinal` read them: read again only when a newer run is seen
  let runs = from.runs;
  let stale = false;
  // right after a run ended, the next is looked for at once (a queued run follows without a poll's wait)
  let look = false;
  while (!signal.aborted) {
    if (stale) runs = await threadRunsOldestFirst(runtime, threadId);
    if (current === 0 && runs.length > 0) current = 1;
    const run = current === 0 ? undefined : runs[current - 1];
    if (run === undefined) {
      // waiting for the thread's next run: one small read a poll, all runs again once it came
      if (!look) await sleep(PROTOCOL_DEFAULTS.idlePollMs, signal).catch(() => undefined);
      look = false;
      if (signal.aborted) return;
      const newest = await latestRun(runtime, threadId);
      stale = newest !== undefined && newest.run_id !== runs[runs.length - 1]?.run_id;
      continue;
    }
    stale = false;
    yield* runProjection(runtime, run, current, since, signal);
    current += 1;
    look = current > runs.length;
  }
}

/** Options of `runProjection`. */
export interface RunProjectionOptions {
  /** Called whenever the run's stream has sent all it can for now (it waits for the run): a caller that wants the run as it is now stops there. */
  idle?: (() => void) | undefined;
}

/**
 * The protocol events of one run (`ordinal`: its place in the thread), after `since`, as
 * `threadProjection` sends them; ends with the run (or when `signal` aborts).
 */
export async function* runProjection(runtime: Runtime, run: RunRecord, ordinal: number, since: number | undefined, signal: AbortSignal, options: RunProjectionOptions = {}): AsyncGenerator<ProtocolEvent> {
  const answered = run.resumes_run === null ? [] : [...new Set((await runtime.runs.resumes(run.resumes_run).catch(() => [])).flatMap((resume) => resume.interrupt_ids))];
  const projector = new RunPartProjector(run.graph_id, answered);
  const lifecycle = new SubgraphLifecycle();
  let lastPart = 0;
  const chunksSeen = new Map<string, number>();
  const wire = (event: ProjectedEvent, position: EventPosition, eventId: string): ProtocolEvent => ({ type: "event", seq: seqOf(position), event_id: eventId, method: event.method, params: event.params }) as ProtocolEvent;
  const after = (position: EventPosition): boolean => since === undefined || seqOf(position) > since;
  let interrupted = false;
  // the run as its stream last read it when it ended (not read again here)
  let ended: RunRecord | undefined;
  try {
    for await (const part of runStream(runtime, run.run_id, { modes: MODES, subgraphs: true, run, signal, streamedWhole: true, chunksAfterNamespace: true, ended: (last) => (ended = last), idle: options.idle })) {
      const now = Date.now();
      const events = projector.events(part, now);
      if (part.id === undefined) {
        // live only: the position of the durable part before it, and an id naming the message and
        // the chunk's place in it (a stream gets a message's chunks from its first), the same in
        // every stream that sends it
        const position = { ordinal, part: lastPart, index: PROTOCOL_DEFAULTS.partSeqSpan - 1 };
        const messageId = liveMessageId(part.data);
        const chunk = (chunksSeen.get(messageId) ?? 0) + 1;
        chunksSeen.set(messageId, chunk);
        for (const [index, event] of events.entries()) {
          if (since === undefined || seqOf(position) > since) yield wire(event, position, liveEventId(run.run_id, lastPart, messageId, chunk, index));
        }
        continue;
      }
      lastPart = Number(part.id) + 1;
      for (const [at, event] of withSubgraphLifecycle(lifecycle, events, now).entries()) {
        if (event.method === "input.requested") interrupted = true;
        const position = { ordinal, part: lastPart, index: event.slot ?? at };
        if (after(position)) yield wire(event, position, durableEventId(run.run_id, position));
      }
    }
  } catch (error) {
    // the run was deleted (with its thread, or by itself): nothing more of it
    if (!hasErrorCode(error, "RUN_NOT_FOUND") && !hasErrorCode(error, "THREAD_NOT_FOUND")) throw error;
    return;
  }
  if (signal.aborted) return;
  const last = ended ?? (await runtime.runs.get(run.run_id).catch(() => run));
  const now = Date.now();
  // the run's own record says whether it stopped at an interrupt (a resumed subgraph's stream
  // shows the interrupt it answered again); the events only for a record without a stop reason
  const terminal = terminalOf(last, last.stop_reason === "interrupt" || ((last.stop_reason ?? null) === null && interrupted));
  const subgraphEnds = lifecycle.finish(terminal, now);
  const closing: ProjectedEvent[] = [...projector.finishAll(now), ...(await finalValueEvents(runtime, last, projector.seenEvents())), ...subgraphEnds, { method: "lifecycle", params: { namespace: [], timestamp: now, data: terminal } }];
  const part = lastPart + 1;
  for (const [index, event] of closing.entries()) {
    const position = { ordinal, part, index };
    if (after(position)) yield wire(event, position, durableEventId(run.run_id, position));
  }
}

/** The message id of a live `messages` part (`[chunk, metadata]`). */
function liveMessageId(data: unknown): string {
  const chunk = Array.isArray(data) ? (data[0] as { id?: unknown } | undefined) : undefined;
  return typeof chunk?.id === "string" ? chunk.id : "unknown";
}
