import { LIVE_MESSAGES } from "../../constants.js";
import type { Database } from "../../db/types.js";
import { RUN_EVENTS_CHANNEL } from "./event-sql.js";
import { subscribeModelDeltas, type ModelDelta } from "./live-deltas.js";
import { subscribeLiveMessages, type LiveMessageChunk } from "./live-messages.js";

export type { ModelDelta } from "./live-deltas.js";
export type { LiveMessageChunk } from "./live-messages.js";

/**
 * What `runtime.runs.live` delivers, from whichever process executes the run: a token delta of a
 * model round (`model.delta`, live only, never stored), a chunk of a message a chat model streams
 * in the run's graph (`message.chunk`, LangGraph's `messages` stream mode, live only), or word that
 * events of the run were stored (`events.stored`: read them with `runs.events(runId, { after })`).
 */
export type LiveSignal = ModelDelta | LiveMessageChunk | { type: "events.stored"; run_id: string };

/** Which signals `listenRun` subscribes to: events and deltas by default, message chunks when asked. */
export interface LiveSignalOptions {
  events?: boolean;
  deltas?: boolean;
  messages?: boolean;
}

/**
 * Calls `listener` with the live signals of run `runId` from every process on the database (on
 * PGlite: this process, the only one) until the returned function is awaited. Resolves once
 * listening, so a caller that listens first and reads second misses nothing stored after its
 * read. Signals are best effort (a notification connection that broke and came back missed what
 * was sent meanwhile): callers keep a bounded poll as fallback. A listener's failure is its own.
 */
export async function listenRun(
  db: Database,
  runId: string,
  listener: (signal: LiveSignal) => void,
  options: LiveSignalOptions = {},
  sentSoFar?: (runId: string) => LiveMessageChunk[],
): Promise<() => Promise<void>> {
  const key = runId.toLowerCase();
  const deliver = (signal: LiveSignal): void => {
    try {
      listener(signal);
    } catch {
      // a listener's failure is its own
    }
  };
  // message chunks: those this process sent before the subscription listened come first (a
  // stream opened right after its run's create), then the live ones, each chunk once
  const seen = new Set<string>();
  let early: LiveMessageChunk[] | null = [];
  const deliverChunk = (chunk: LiveMessageChunk): void => {
    if (early !== null) return void early.push(chunk);
    const id = `${chunk.message_id}\u0000${chunk.index}`;
    if (seen.has(id)) return;
    if (seen.size < LIVE_MESSAGES.replayMax * 2) seen.add(id);
    deliver(chunk);
  };
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(stops.splice(0).map((unlisten) => unlisten().catch(() => undefined)));
  };
  try {
    if (options.events !== false) stops.push(await db.listen(RUN_EVENTS_CHANNEL, (payload) => payload === key && deliver({ type: "events.stored", run_id: key })));
    if (options.deltas !== false) stops.push(await subscribeModelDeltas(db, key, deliver));
    if (options.messages === true) {
      stops.push(await subscribeLiveMessages(db, key, deliverChunk));
      const live = early;
      early = null;
      for (const chunk of [...(sentSoFar?.(key) ?? []), ...live]) deliverChunk(chunk);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}
