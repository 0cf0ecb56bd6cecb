import { type Redactor, type TextStreamRedactor } from "../../secret-redaction.js";
import type { RunEventData } from "./run-events.js";

/** A live `model.delta` event. */
type ModelDelta = Extract<RunEventData, { type: "model.delta" }>;

/** One streamed message's redaction: its redactor, the round, and how many characters were shown. */
interface MessageStream {
  redactor: TextStreamRedactor | null;
  round: number;
  messageId: string;
  shown: number;
}

/**
 * Redacts the live `model.delta` events of every run as one text per streamed message, so a
 * configured secret split across two deltas is hidden like one inside a delta. Each delta is
 * shown minus a held-back tail that could begin a configured secret (usually none); the tail is shown
 * with the run's next delta or released by `flush` when any other event of the run comes (the
 * model round finished or failed, the run stopped). Offsets of the deltas shown count the characters shown
 * before them, redacted text included, so consumers that check continuity keep working.
 */
export class LiveDeltaRedaction {
  private readonly streams = new Map<string, MessageStream>();

  constructor(private readonly redactor: Redactor) {}

  /** The deltas to show for `delta` of run `runId` (none: everything is held back for now). */
  push(runId: string, delta: ModelDelta): ModelDelta[] {
    const current = this.streams.get(runId);
    // a new message of the run with no event between (not what the model node does): the old one is complete
    const shown = current !== undefined && current.messageId !== delta.message_id ? this.flush(runId, { end: true }) : [];
    let stream = this.streams.get(runId);
    if (stream === undefined) {
      stream = { redactor: this.redactor.stream?.() ?? null, round: delta.round, messageId: delta.message_id, shown: 0 };
      this.streams.set(runId, stream);
    }
    const text = stream.redactor === null ? this.redactor.text(delta.text) : stream.redactor.push(delta.text);
    return [...shown, ...this.shown(stream, text)];
  }

  /**
   * The held-back tail of run `runId`'s streamed message, as a delta (none when nothing is held).
   * `end`: the message is complete (its round finished, the run stopped): forget it. Otherwise
   * (a failed attempt the model call retries) its next deltas continue its offsets.
   */
  flush(runId: string, options: { end: boolean }): ModelDelta[] {
    const stream = this.streams.get(runId);
    if (stream === undefined) return [];
    if (options.end) this.streams.delete(runId);
    return this.shown(stream, stream.redactor?.flush() ?? "");
  }

  private shown(stream: MessageStream, text: string): ModelDelta[] {
    if (text === "") return [];
    const delta: ModelDelta = { type: "model.delta", round: stream.round, text, message_id: stream.messageId, offset: stream.shown };
    stream.shown += text.length;
    return [delta];
  }
}
