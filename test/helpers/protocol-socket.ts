import WebSocket from "ws";
import type { WireEvent } from "./protocol-sse.js";

/** A protocol frame as a WebSocket sends it: a command's answer (`id`) or an event. */
export type Frame = Record<string, unknown>;

/**
 * A WebSocket on `GET /threads/{id}/stream/events` that keeps every frame it got: send commands,
 * wait (bounded) for an answer or for events. `close()` ends it.
 */
export class ProtocolSocket {
  readonly frames: Frame[] = [];
  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => this.frames.push(JSON.parse(data.toString()) as Frame));
  }

  /** Opens one (rejects when the upgrade is refused). */
  static async open(url: string, threadId: string, headers: Record<string, string>): Promise<ProtocolSocket> {
    const socket = new WebSocket(`${url.replace("http", "ws")}/threads/${threadId}/stream/events`, { headers });
    const opened = new ProtocolSocket(socket);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    return opened;
  }

  /** Sends a command (an object as JSON, a string as it is). */
  send(command: unknown): void {
    this.socket.send(typeof command === "string" ? command : JSON.stringify(command));
  }

  /** The events received so far. */
  events(): WireEvent[] {
    return this.frames.filter((frame) => frame["type"] === "event") as unknown as WireEvent[];
  }

  /** Waits until `predicate` holds for the frames so far (at most `limitMs`); returns whether it did. */
  async until(predicate: (frames: Frame[]) => boolean, limitMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + limitMs;
    while (!predicate(this.frames)) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return true;
  }

  /** Sends a command and waits for the answer with its `id` (or the next error without an id, for `idless`). */
  async command(command: { id: unknown } & Record<string, unknown>, idless = false): Promise<Frame> {
    const seen = this.frames.length;
    this.send(command);
    const match = (frame: Frame): boolean => frame["type"] !== "event" && (idless ? frame["id"] === null : frame["id"] === command.id);
    await this.until((frames) => frames.slice(seen).some(match));
    const answer = this.frames.slice(seen).find(match);
    if (answer === undefined) throw new Error(`no answer to ${JSON.stringify(command).slice(0, 200)}`);
    return answer;
  }

  close(): void {
    this.socket.close();
  }
}
