import { notify } from "../../db/channels.js";
import type { Database } from "../../db/types.js";

/** NOTIFY channel carrying `model.delta` text of running runs to every process (PGlite: this process). */
export const MODEL_DELTAS_CHANNEL = "devmind_model_deltas";

/** A token delta as delivered to subscribers. */
export interface ModelDelta {
  type: "model.delta";
  run_id: string;
  round: number;
  text: string;
  /** The id the round's AI message is stored under (its tokens stream under it). */
  message_id: string;
  /** Characters of the round's text before `text` (0: the round's first token). */
  offset: number;
}

/**
 * Characters of text per notification: JSON escaping can grow a character to 6 bytes (`\uXXXX`,
 * 12 for a surrogate pair), which keeps every payload well under PostgreSQL's 8000-byte limit.
 */
const CHARS_PER_NOTIFICATION = 1_000;

/**
 * Publishes `model.delta` events on MODEL_DELTAS_CHANNEL so a server process that is not executing
 * a run can still stream its tokens (LangGraph `messages-tuple`). Deltas are live only, never
 * stored: a listener that connects late misses the earlier ones, and the complete message arrives
 * with the step's checkpoint anyway. Per run, notifications are sent one after another (each
 * NOTIFY commits before the next is sent, so listeners see them in order); text arriving while
 * one is in flight is coalesced into the next. A failed send is dropped: deltas are best effort.
 */
export class LiveDeltaPublisher {
  private readonly pending = new Map<string, { round: number; text: string; messageId: string; offset: number }[]>();
  private readonly sending = new Set<string>();

  constructor(private readonly db: Database) {}

  /** Queues `text` of model round `round` of run `runId`, `offset` characters into the round's message `messageId`. */
  publish(runId: string, round: number, text: string, messageId: string, offset: number): void {
    if (text === "") return;
    const key = runId.toLowerCase();
    const queue = this.pending.get(key) ?? [];
    const last = queue[queue.length - 1];
    if (last !== undefined && last.round === round && last.messageId === messageId) last.text += text;
    else queue.push({ round, text, messageId, offset });
    this.pending.set(key, queue);
    if (!this.sending.has(key)) void this.drain(key);
  }

  private async drain(key: string): Promise<void> {
    this.sending.add(key);
    try {
      for (;;) {
        const queue = this.pending.get(key);
        const next = queue?.shift();
        if (next === undefined) {
          this.pending.delete(key);
          return;
        }
        for (let at = 0; at < next.text.length; at += CHARS_PER_NOTIFICATION) {
          // do not split a surrogate pair across notifications
          let end = Math.min(next.text.length, at + CHARS_PER_NOTIFICATION);
          const code = next.text.charCodeAt(end - 1);
          if (end < next.text.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
          const payload = JSON.stringify({ r: key, k: next.round, t: next.text.slice(at, end), m: next.messageId, o: next.offset + at });
          await notify(this.db, MODEL_DELTAS_CHANNEL, payload).catch(() => undefined);
          at = end - CHARS_PER_NOTIFICATION;
        }
      }
    } finally {
      this.sending.delete(key);
    }
  }
}

/**
 * Calls `listener` with every `model.delta` of run `runId` published from any process (on PGlite,
 * from this one), until the returned function is awaited. Resolves once listening.
 */
export async function subscribeModelDeltas(db: Database, runId: string, listener: (delta: ModelDelta) => void): Promise<() => Promise<void>> {
  const key = runId.toLowerCase();
  return db.listen(MODEL_DELTAS_CHANNEL, (payload) => {
    let parsed: { r?: unknown; k?: unknown; t?: unknown; m?: unknown; o?: unknown };
    try {
      parsed = JSON.parse(payload) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.r !== key || typeof parsed.t !== "string" || typeof parsed.k !== "number" || typeof parsed.m !== "string" || typeof parsed.o !== "number") return;
    try {
      listener({ type: "model.delta", run_id: key, round: parsed.k, text: parsed.t, message_id: parsed.m, offset: parsed.o });
    } catch {
      // a listener's failure is its own
    }
  });
}
