import { convertToProtocolEvent } from "@langchain/langgraph/stream";
import type { LifecycleData, MessagesData } from "@langchain/protocol";
import { StreamedMessage, wholeMessageEvents, type MessageDict } from "./message-events.js";

/** A protocol event before its position: `method` and `params` (`namespace`, `timestamp`, `data`, `node`?). */
export interface ProjectedEvent {
  method: string;
  params: { namespace: string[]; timestamp: number; data: unknown; node?: string };
  /** Its index among its part's events when not its place in the list (the end of a streamed message: see `RunPartProjector`). */
  slot?: number;
}

/** One part of a run's LangGraph stream (`runStream`): `mode` or `mode|ns1|ns2`, its data, and its position when durable. */
export interface LegacyPart {
  event: string;
  data: unknown;
  id?: string | undefined;
  /** The whole message of a part that completes a streamed message (`runStream`'s `streamedWhole`). */
  whole?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The graph name of a namespace segment `node:task_id` (the node). */
function graphNameOf(segment: string): string {
  const colon = segment.indexOf(":");
  return colon < 0 ? segment : segment.slice(0, colon);
}

/** The checkpoint envelope the protocol's `checkpoints` channel carries, from a LangGraph `checkpoints` part. */
function checkpointEnvelope(data: unknown): Record<string, unknown> | undefined {
  if (!isRecord(data)) return undefined;
  const checkpoint = isRecord(data["checkpoint"]) ? data["checkpoint"] : undefined;
  const parent = isRecord(data["parent_checkpoint"]) ? data["parent_checkpoint"] : undefined;
  const metadata = isRecord(data["metadata"]) ? data["metadata"] : {};
  const id = checkpoint?.["checkpoint_id"];
  if (typeof id !== "string") return undefined;
  const source = typeof metadata["source"] === "string" ? metadata["source"] : "loop";
  return { id, ...(typeof parent?.["checkpoint_id"] === "string" ? { parent_id: parent["checkpoint_id"] } : {}), step: typeof metadata["step"] === "number" ? metadata["step"] : 0, source };
}

/**
 * Turns one run's LangGraph stream (the parts `runStream` derives from the run's stored events
 * and checkpoints, in their one order) into the protocol's events, as the official server's
 * session normalises its run stream: `values`, `updates` (`{node, values}`), `tools`, `tasks`,
 * `custom`, `checkpoints` (the envelope `{id, parent_id, step, source}`), `messages` (a whole
 * message as message-start .. message-finish, but a tool's result message, which LangGraph's
 * protocol stream does not send; a streamed one as its chunks' deltas, then at the
 * part of its whole message its blocks' finish and message-finish, in the slots those have
 * among the whole message's events, so a stream read later numbers them alike; open ones are
 * finished at the run's end), `input.requested` per interrupt (not one this run answers, which a
 * resumed subgraph shows again, nor that paused task's `tasks` result),
 * `lifecycle` `started` for the root (first part; then `input.answered` with the interrupts the
 * run resumes) and each subgraph namespace when first seen (a stored part: with
 * `chunksAfterNamespace` no token of a namespace comes before its first stored part).
 * Deterministic: the same parts give the same events, in any process.
 */
export class RunPartProjector {
  private readonly seen = new Set<string>();
  private readonly streaming = new Map<string, { state: StreamedMessage; ns: string[]; node: string | undefined }>();
  /** Streamed messages already finished: a later closing part of one is not sent again whole. */
  private readonly finished = new Set<string>();
  private rootStarted = false;
  /** The durable events projected so far, for the graph's stream transformers at the run's end. */
  private readonly durable: ProjectedEvent[] = [];

  /** `answered`: the interrupts this run resumes (its root's `input.answered` after `started`). */
  constructor(
    private readonly graphName: string,
    private readonly answered: readonly string[] = [],
  ) {}

  /** The protocol events of `part`, in order. */
  events(part: LegacyPart, timestamp: number): ProjectedEvent[] {
    const out = this.project(part, timestamp);
    if (part.id !== undefined) this.durable.push(...out);
    return out;
  }

  /** The durable events projected so far (what the run's stored parts gave), oldest first. */
  seenEvents(): readonly ProjectedEvent[] {
    return this.durable;
  }

  private project(part: LegacyPart, timestamp: number): ProjectedEvent[] {
    const [mode = "", ...ns] = part.event.split("|");
    const out: ProjectedEvent[] = [];
    if (!this.rootStarted) {
      this.rootStarted = true;
      out.push(lifecycle([], { event: "started", graph_name: this.graphName }, timestamp));
      if (this.answered.length > 0) out.push({ method: "input.answered", params: { namespace: [], timestamp, data: { interrupt_ids: [...this.answered] } } });
    }
    if (mode === "metadata" || mode === "error") return out;
    for (let depth = 1; depth <= ns.length; depth += 1) {
      const prefix = ns.slice(0, depth);
      const key = prefix.join("|");
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      out.push(lifecycle(prefix, { event: "started", graph_name: graphNameOf(prefix[prefix.length - 1] as string) }, timestamp));
    }
    switch (mode) {
      case "lifecycle":
        // a namespace's first stored task start (`runStream`'s `chunksAfterNamespace`): its `started` above is all it gives
        return out;
      case "messages":
        out.push(...this.messageEvents(part, ns, timestamp));
        return out;
      case "checkpoints": {
        const envelope = checkpointEnvelope(part.data);
        if (envelope !== undefined) out.push({ method: "checkpoints", params: { namespace: ns, timestamp, data: envelope } });
        return out;
      }
      case "updates":
        if (isRecord(part.data) && Array.isArray(part.data["__interrupt__"])) {
          for (const item of part.data["__interrupt__"] as unknown[]) {
            if (!isRecord(item) || typeof item["id"] !== "string") continue;
            // a resumed subgraph's stream shows the interrupt this run answers again: asked once, answered once
            if (this.answered.includes(item["id"])) continue;
            out.push({ method: "input.requested", params: { namespace: ns, timestamp, data: { interrupt_id: item["id"], payload: item["value"] } } });
          }
          return out;
        }
        break;
      case "values":
        if (isRecord(part.data) && "__interrupt__" in part.data) return out;
        break;
      case "tasks":
        if (this.answeredTaskResult(part.data)) return out;
        break;
      case "tools":
      case "custom":
        break;
      default:
        return out;
    }
    for (const event of convertToProtocolEvent({ namespace: ns, mode: mode as "values", payload: part.data, seq: 0 })) {
      out.push({ method: event.method, params: { ...(event.params as ProjectedEvent["params"]), timestamp } });
    }
    return out;
  }

  /**
   * A paused task's result whose interrupts are all ones this run answers: the earlier run sent
   * it; a resumed subgraph's stream shows it again, and a client would take the pause as new.
   */
  private answeredTaskResult(data: unknown): boolean {
    if (this.answered.length === 0 || !isRecord(data) || !Array.isArray(data["interrupts"]) || data["interrupts"].length === 0) return false;
    return (data["interrupts"] as unknown[]).every((item) => isRecord(item) && typeof item["id"] === "string" && this.answered.includes(item["id"]));
  }

  /** Finishes every message still streaming (the run ended): their blocks as they came. */
  finishAll(timestamp: number): ProjectedEvent[] {
    const out: ProjectedEvent[] = [];
    for (const open of this.streaming.values()) out.push(...open.state.finishEvents(undefined).map((data) => messageEvent(open.ns, open.node, data, timestamp)));
    for (const id of [...this.streaming.keys()]) this.streaming.delete(id);
    return out;
  }

  private messageEvents(part: LegacyPart, ns: string[], timestamp: number): ProjectedEvent[] {
    if (!Array.isArray(part.data)) return [];
    const [message, metadata] = part.data as [MessageDict, Record<string, unknown> | undefined];
    if (!isRecord(message)) return [];
    const node = typeof metadata?.["langgraph_node"] === "string" ? metadata["langgraph_node"] : undefined;
    const id = typeof message["id"] === "string" ? message["id"] : undefined;
    const open = id === undefined ? undefined : this.streaming.get(id);
    if (part.id === undefined && id !== undefined) {
      // a live chunk: the message streams
      const out: MessagesData[] = [];
      let state = open?.state;
      if (state === undefined) {
        state = new StreamedMessage();
        this.streaming.set(id, { state, ns, node });
        out.push({ event: "message-start", id, role: "ai" });
      }
      out.push(...state.chunkEvents(message));
      return out.map((data) => messageEvent(ns, node, data, timestamp));
    }
    if (id !== undefined && this.finished.has(id)) return [];
    if (open !== undefined && id !== undefined) {
      // the part that completes a streamed message: its end, where the whole message ends
      this.streaming.delete(id);
      this.finished.add(id);
      const whole = isRecord(part.whole) ? (part.whole as MessageDict) : message;
      const finish = open.state.finishEvents(whole);
      const offset = Math.max(0, wholeMessageEvents(whole, id).length - finish.length);
      // where it started (a subgraph's message, whole in its parent's state when the subgraph stores nothing)
      return finish.map((data, index) => ({ ...messageEvent(open.ns, open.node, data, timestamp), slot: offset + index }));
    }
    // a tool's result message is not a `messages` event (LangGraph's protocol stream sends a node's
    // output messages but those; the SDK reads tool results from `tools` and `values`)
    if (message["type"] === "tool") return [];
    return wholeMessageEvents(message, id ?? `message-${timestamp}`).map((data) => messageEvent(ns, node, data, timestamp));
  }

}

function lifecycle(namespace: string[], data: LifecycleData, timestamp: number): ProjectedEvent {
  return { method: "lifecycle", params: { namespace, timestamp, data } };
}

function messageEvent(namespace: string[], node: string | undefined, data: MessagesData, timestamp: number): ProjectedEvent {
  return { method: "messages", params: { namespace, timestamp, ...(node === undefined ? {} : { node }), data } };
}
