import { randomUUID } from "node:crypto";
import type { BaseMessageChunk } from "@langchain/core/messages";
import { notify } from "../../db/channels.js";
import type { Database } from "../../db/types.js";
import { LIVE_MESSAGES } from "../../constants.js";
import { plainJson } from "./plain-json.js";

/** NOTIFY channel carrying the message chunks chat models stream inside running graphs, to every process (PGlite: this process). */
export const LIVE_MESSAGES_CHANNEL = "devmind_live_messages";

/**
 * A chunk of a message a chat model streams inside a run's graph, as LangGraph's `messages`
 * stream mode gives it (`[chunk, metadata]`), delivered live to whoever listens (never stored).
 */
export interface LiveMessageChunk {
  type: "message.chunk";
  run_id: string;
  /** LangGraph's namespace of the graph it was streamed in (empty: the root graph). */
  ns: string[];
  message_id: string;
  /**
   * Its place in the message's chunks: 0 for the first, each next one +1 (a listener that missed
   * the first, or sees a gap, knows it has not got the whole message).
   */
  index: number;
  /** The chunk as a message dict (`{type: "ai", content, id, tool_call_chunks, …}`: LangChain's `toDict()` of an AIMessageChunk). */
  chunk: Record<string, unknown>;
  /** LangGraph's metadata of the message (langgraph_node, langgraph_step, langgraph_checkpoint_ns, ls_*, …): on the first chunk only. */
  metadata?: Record<string, unknown>;
}

/** Where the executor hands the chunks of LangGraph's `messages` stream mode. */
export interface LiveMessageSink {
  /** Queues one chunk of run `runId`'s graph for every listener; returns at once. */
  publish(runId: string, ns: string[], chunk: BaseMessageChunk, metadata: Record<string, unknown>): void;
  /** The run's attempt ended in this process: forget its messages once what is queued was sent. */
  finish(runId: string): void;
  /** The chunks of run `runId` sent so far by this process while it executes the run (oldest first; none once it ended). */
  sentSoFar?(runId: string): LiveMessageChunk[];
}

interface Queued {
  ns: string[];
  id: string;
  index: number;
  chunk: BaseMessageChunk;
  metadata: Record<string, unknown> | undefined;
}

interface RunQueue {
  queue: Queued[];
  /** The next index of each message of the run. */
  counts: Map<string, number>;
  sending: boolean;
  finished: boolean;
  /** The chunks sent, for a listener of this process that came late (LIVE_MESSAGES.replayMax at most). */
  sent: LiveMessageChunk[];
}

/**
 * Publishes the message chunks of running graphs on LIVE_MESSAGES_CHANNEL, so a server process
 * that is not executing a run still streams its tokens (LangGraph `messages-tuple`, `messages`).
 * Best effort and live only: a listener that connects late misses the earlier chunks, and the
 * complete message arrives with the checkpoint of its node anyway. Per run, notifications are
 * sent one after another (each commits before the next is sent, so listeners get them in order);
 * chunks arriving meanwhile go together in the next one, each kept as LangGraph gave it (clients
 * see the model's own chunks). A notification larger than PostgreSQL's payload limit is sent in
 * parts that the listener joins. A failed send is dropped.
 */
export class LiveMessagePublisher implements LiveMessageSink {
  private readonly runs = new Map<string, RunQueue>();
  /** Tells this publisher's multi-part notifications apart from another process's. */
  private readonly origin = randomUUID().slice(0, 8);
  private sent = 0;

  constructor(private readonly db: Database) {}

  publish(runId: string, ns: string[], chunk: BaseMessageChunk, metadata: Record<string, unknown>): void {
    const id = chunk.id;
    if (id === undefined || id === "") return;
    const key = runId.toLowerCase();
    let run = this.runs.get(key);
    if (run === undefined) {
      run = { queue: [], counts: new Map(), sending: false, finished: false, sent: [] };
      this.runs.set(key, run);
    }
    const index = run.counts.get(id) ?? 0;
    run.counts.set(id, index + 1);
    run.queue.push({ ns, id, index, chunk, metadata: index === 0 ? metadata : undefined });
    if (!run.sending) void this.drain(key, run);
  }

  sentSoFar(runId: string): LiveMessageChunk[] {
    return [...(this.runs.get(runId.toLowerCase())?.sent ?? [])];
  }

  finish(runId: string): void {
    const key = runId.toLowerCase();
    const run = this.runs.get(key);
    if (run === undefined) return;
    run.finished = true;
    if (!run.sending && run.queue.length === 0) this.runs.delete(key);
  }

  private async drain(key: string, run: RunQueue): Promise<void> {
    run.sending = true;
    try {
      for (let batch = run.queue.splice(0); batch.length > 0; batch = run.queue.splice(0)) {
        // each chunk as plain JSON once: the notification's body and the replay keep the same objects
        let sent: LiveMessageChunk[];
        let body: string;
        try {
          sent = batch.map((next) => ({ type: "message.chunk", run_id: key, ns: next.ns, message_id: next.id, index: next.index, chunk: plainJson(next.chunk) as Record<string, unknown>, ...(next.metadata === undefined ? {} : { metadata: plainJson(next.metadata) as Record<string, unknown> }) }));
          body = JSON.stringify(sent.map((chunk) => ({ n: chunk.ns, m: chunk.message_id, x: chunk.index, c: chunk.chunk, ...(chunk.metadata === undefined ? {} : { d: chunk.metadata }) })));
        } catch {
          continue;
        }
        this.sent += 1;
        const parts = splitPayload(body);
        for (let index = 0; index < parts.length; index += 1) {
          const payload = JSON.stringify({ r: key, k: `${this.origin}:${this.sent}`, i: index, t: parts.length, p: parts[index] });
          await notify(this.db, LIVE_MESSAGES_CHANNEL, payload).catch(() => undefined);
        }
        run.sent.push(...sent);
        if (run.sent.length > LIVE_MESSAGES.replayMax) run.sent.splice(0, run.sent.length - LIVE_MESSAGES.replayMax);
      }
    } finally {
      run.sending = false;
      if (run.finished && run.queue.length === 0) this.runs.delete(key);
    }
  }
}

/**
 * `body` in pieces whose JSON string form stays under LIVE_MESSAGES.payloadBytes (PostgreSQL
 * refuses a NOTIFY payload of 8000 bytes or more; JSON escaping can make a character 6 bytes).
 * A piece may end inside a surrogate pair: each is escaped on its own and joined back exactly.
 */
function splitPayload(body: string): string[] {
  const fits = (piece: string): boolean => Buffer.byteLength(JSON.stringify(piece)) <= LIVE_MESSAGES.payloadBytes;
  if (fits(body)) return [body];
  const parts: string[] = [];
  for (let start = 0; start < body.length; ) {
    let end = Math.min(body.length, start + LIVE_MESSAGES.payloadBytes);
    while (end - start > 1 && !fits(body.slice(start, end))) end = start + Math.floor((end - start) / 2);
    parts.push(body.slice(start, end));
    start = end;
  }
  return parts;
}

/**
 * Calls `listener` with every message chunk of run `runId` published from any process (on
 * PGlite, from this one), in order, until the returned function is awaited. Resolves once
 * listening. A notification sent in parts is delivered once all its parts came, in order; one
 * missing a part is dropped (the message's next chunk then shows a gap in `index`).
 */
export async function subscribeLiveMessages(db: Database, runId: string, listener: (chunk: LiveMessageChunk) => void): Promise<() => Promise<void>> {
  const key = runId.toLowerCase();
  let partial: { k: string; parts: string[]; total: number } | undefined;
  const deliver = (body: string): void => {
    let batch: unknown;
    try {
      batch = JSON.parse(body);
    } catch {
      return;
    }
    for (const entry of Array.isArray(batch) ? (batch as { n?: unknown; m?: unknown; x?: unknown; c?: unknown; d?: unknown }[]) : []) {
      if (!Array.isArray(entry.n) || typeof entry.m !== "string" || typeof entry.x !== "number" || entry.c === null || typeof entry.c !== "object") continue;
      const metadata = entry.d !== null && typeof entry.d === "object" ? (entry.d as Record<string, unknown>) : undefined;
      try {
        listener({ type: "message.chunk", run_id: key, ns: entry.n.map(String), message_id: entry.m, index: entry.x, chunk: entry.c as Record<string, unknown>, ...(metadata === undefined ? {} : { metadata }) });
      } catch {
        // a listener's failure is its own
      }
    }
  };
  return db.listen(LIVE_MESSAGES_CHANNEL, (payload) => {
    let envelope: { r?: unknown; k?: unknown; i?: unknown; t?: unknown; p?: unknown };
    try {
      envelope = JSON.parse(payload) as typeof envelope;
    } catch {
      return;
    }
    const { r, k, i, t, p } = envelope;
    if (r !== key || typeof k !== "string" || typeof i !== "number" || typeof t !== "number" || typeof p !== "string") return;
    if (t === 1) {
      deliver(p);
      return;
    }
    if (i === 0) partial = { k, parts: [p], total: t };
    else if (partial !== undefined && partial.k === k && partial.parts.length === i) partial.parts.push(p);
    else partial = undefined;
    if (partial !== undefined && partial.parts.length === partial.total) {
      const body = partial.parts.join("");
      partial = undefined;
      deliver(body);
    }
  });
}
