import type { BaseMessage } from "@langchain/core/messages";
import { FINAL_EVENT_TYPES, FINAL_STATUSES } from "../runtime/runtime.js";
import type { StateSnapshot } from "@langchain/langgraph";
import { SERVER_DEFAULTS } from "../constants.js";
import { retryDatabaseFaults } from "../runtime/execution/backoff.js";
import type { RunRecord } from "../runtime/queue/run-record.js";
import { isRunEvent, type LiveMessageChunk, type Runtime, type StoredRunEvent } from "../runtime/runtime.js";
import { checkpointIdOf } from "../runtime/threads/thread-state.js";
import { formatPartId, STREAM_START, type StreamCursor } from "./stream-cursor.js";
import { withStateMessageIds } from "./message-ids.js";
import { closingChunk, completedMessages, freshMessages, MESSAGES_EVENTS_MODE, nodeMetadata, rootTaskOf, SentMessage, takeHeld } from "./stream-messages.js";
import { checkpointParts, modeEvent, taskResultParts, taskStartParts } from "./stream-modes.js";
import { eventsParts } from "./stream-events.js";
import { toolParts } from "./stream-tools.js";
import { SubgraphParts } from "./subgraph-stream.js";
import { interruptsOf, toWire } from "./wire.js";
import { runErrorPart } from "./run-error-part.js";
import { sleep, wakeableSleep } from "../sleep.js";


/** The step events a graph's nodes report (the agent's model rounds and tool calls): custom parts of its stream, as they were written. */
const STEP_EVENT_TYPES: ReadonlySet<string> = new Set(["model.started", "model.finished", "model.failed", "tool.call.started", "tool.call.finished"]);

/** One SSE part of a LangGraph run stream: `event` name, JSON `data`, and the resume `id` when durable. */
export interface StreamPart {
  event: string;
  data: unknown;
  id?: string;
  /** With `streamedWhole`: the whole message of a `messages` part that completes a streamed one. */
  whole?: unknown;
  /** With `streamedWhole`: a part that holds its position but is not for LangGraph's wire (a streamed message's whole). */
  silent?: boolean;
}

/** A part before its position. */
type RawPart = Omit<StreamPart, "id">;

/** What `runStream` emits and from where. */
export interface RunStreamOptions {
  /**
   * LangGraph stream modes: values, updates, messages (for messages-tuple), custom, checkpoints,
   * tasks, debug, tools, events (the routes refuse any other).
   */
  modes: ReadonlySet<string>;
  /**
   * The client has the parts up to this position (a `Last-Event-ID`; -1 or undefined: none): the
   * stream sends the ones after it, numbered as every stream of the run numbers them.
   */
  after?: number | undefined;
  /**
   * The client has what the stream holds before this read position (a resumed run's earlier
   * parts, or an older devmind's `Last-Event-ID`): those parts are not sent, and the rest keep
   * their positions in the run's stream.
   */
  from?: StreamCursor | undefined;
  /** `stream_subgraphs`: parts of subgraphs too, named `mode|ns` (user graphs; the agent has none). */
  subgraphs?: boolean | undefined;
  /** The run as the caller just made or read it (its ids, graph, config and a status no newer than the database's): not read again. */
  run?: RunRecord | undefined;
  /**
   * A message that streamed as chunks always keeps the position its whole `messages` part has
   * when the run is read later (where no chunk streamed), so every stream numbers a run's parts
   * alike, live or read later. On LangGraph's wire that position is a closing chunk (what the
   * chunks lacked) or no part at all (an id skipped). With `streamedWhole` (the protocol
   * projection) the part is yielded anyway: `silent` when nothing was lacking, and with the whole
   * message as `whole`.
   */
  streamedWhole?: boolean | undefined;
  /**
   * A subgraph's live chunks wait until a stored part of their namespace was sent (the subgraph's
   * first checkpoint, with its first task's start), so a subgraph's first part is always a stored
   * one: the protocol announces a namespace (`lifecycle` `started`) at its first part, and a
   * stream read later (no chunks) must put it at the same place. A namespace's first stored task
   * start gives such a part (`lifecycle|ns`, silent) where nothing else did. A message's parts,
   * its chunks too, go in the namespace of the node that wrote it (`[...ns, "node:task_id"]`, as
   * LangGraph's protocol stream sends them), its stored `message.started` giving that part. Chunks
   * whose task completes before that are dropped (their message comes whole).
   */
  chunksAfterNamespace?: boolean | undefined;
  /** Called with the run as the stream read it when it ended (interrupted or terminal), before the stream ends. */
  ended?: ((run: RunRecord) => void) | undefined;
  /** Called each time the stream sent everything stored so far and waits for more (a reader of the run as it is now stops there). */
  idle?: (() => void) | undefined;
  signal: AbortSignal;
}

const TERMINAL: ReadonlySet<string> = new Set(FINAL_STATUSES);

function timeOf(text: string | undefined): number {
  const parsed = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(parsed) ? 0 : parsed;
}

interface Unit {
  kind: "v" | "i" | "e";
  /** Sort time (ms): checkpoint creation or event time. */
  at: number;
  parts: () => RawPart[];
}


/**
 * The LangGraph Platform stream of one run, derived from what is durable — the run's events and
 * the checkpoints its graph wrote — so any server process can stream a run any worker executes,
 * and a reconnecting client (`Last-Event-ID`) gets exactly the parts after its last one.
 *
 * Parts: `metadata {run_id, attempt}` first (and again when a later attempt starts); the
 * checkpoint the run started from (`checkpoints` / `debug`; a continued run's `values` and task
 * starts too); per checkpoint of the run, `updates` (one per task that produced it: `{node:
 * writes}`, messages with the ids the state gave them), `messages` (`[message, metadata]` for each
 * new non-human message) and `values` (the state); when a checkpoint's tasks were interrupted (an
 * approval), `updates` and `values` with `{__interrupt__: [{id, value}]}`, and `{__interrupt__:
 * []}` after the last checkpoint of a run that stopped at a static breakpoint; `custom`: for the agent each
 * stored run event (but its recorded LangChain stream events), for any other graph the data of each stored `custom` event (what the graph
 * wrote with `config.writer`); the chunks chat models stream in any node, live, as `messages`
 * parts with LangGraph's metadata (`tokens`: after the task starts, before the checkpoint that
 * completes it; not replayed; a streamed message is never sent again whole); `checkpoints`, `tasks` and `debug` from the checkpoints
 * (`stream-modes.ts`), `tools` from tool events (`stream-tools.ts`), `events` from the LangChain
 * stream events the run recorded (`stream-events.ts`), subgraph parts with
 * `subgraphs` (`subgraph-stream.ts`); `error {error, message}` (`runErrorPart`) at the end of a failed or
 * timed-out run. The agent's parts are merged by time; a user graph's in the order its graph
 * streamed them (`byTask`). Ends when the run is interrupted or terminal and everything up to
 * then was sent, or when `signal` aborts. Every part but the live token chunks has its position
 * in the run's stream as its `id` (`0` the metadata), the same in every process: a reconnecting
 * client passes its last one as `after`.
 */
export async function* runStream(runtime: Runtime, runId: string, options: RunStreamOptions): AsyncGenerator<StreamPart, void, undefined> {
  const { modes, signal } = options;
  const faultRetry = { maxMs: SERVER_DEFAULTS.streamFaultMaxMs, signal };
  const initial = options.run?.run_id.toLowerCase() === runId.toLowerCase() ? options.run : await retryDatabaseFaults(() => runtime.runs.get(runId), faultRetry);
  const threadId = initial.thread_id;
  const key = initial.run_id.toLowerCase();
  // every durable part has its position in the run's stream as its id, from 0 (this part), as the
  // official server numbers them: the stream is derived from the start every time, in one order,
  // and the parts the client has (`after`, `from`) are counted but not sent
  const after = options.after ?? -1;
  const from = options.from;
  let index = -1;
  // the namespaces (and their prefixes) of the stored parts sent so far: "" for the root
  const namespacesSent = new Set<string>([""]);
  function* send(part: RawPart, held = false): Generator<StreamPart> {
    index += 1;
    if (options.chunksAfterNamespace === true && part.event.includes("|")) {
      const ns = part.event.split("|").slice(1);
      for (let depth = 1; depth <= ns.length; depth += 1) namespacesSent.add(ns.slice(0, depth).join("|"));
    }
    if (index <= after || held) return;
    if (options.streamedWhole === true) yield { ...part, id: formatPartId(index) };
    // LangGraph's wire: a streamed message's position is held (no part), its closing chunk has no whole
    else if (part.silent !== true) yield { event: part.event, data: part.data, id: formatPartId(index) };
  }
  // LangGraph Platform's first part: the run and its attempt (1 for the first; a later attempt,
  // after a worker died, announces itself again where it starts, as the official server's do)
  let announced = 1;
  yield* send({ event: "metadata", data: { run_id: initial.run_id, attempt: announced } });

  const cursor: StreamCursor = { ...STREAM_START };
  let poked = false;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    poked = true;
    wake?.();
  };
  const chunks: LiveMessageChunk[] = [];
  // LangGraph's metadata of each message whose first chunk came (the later ones come without it)
  const firstChunks = new Map<string, Record<string, unknown>>();
  // stored events and (for messages) the chunks chat models stream, from whichever process executes the run
  const unlisten = await runtime.runs
    .live(
      key,
      (signal) => {
        if (signal.type === "message.chunk") {
          if (signal.index === 0 && signal.metadata !== undefined) firstChunks.set(signal.message_id, signal.metadata);
          // bounded: chunks of tasks this stream never sees start are dropped oldest first
          if (chunks.push(signal) > SERVER_DEFAULTS.streamChunksMax) chunks.shift();
        }
        poke();
      },
      { deltas: false, messages: modes.has("messages") || modes.has(MESSAGES_EVENTS_MODE) },
    )
    .catch(() => null);
  signal.addEventListener("abort", poke, { once: true });

  const snapshots: StateSnapshot[] = [];
  // what this stream sent of each message as live `messages` chunks, by its id
  const streamed = new Map<string, SentMessage>();
  // ...and of those it sent as `messages/partial` only (a subgraph's, without `subgraphs`)
  const partialOnly = new Map<string, SentMessage>();
  // messages this stream sent with the checkpoint that stores them: their chunks are late
  const complete = new Set<string>();
  // top-level tasks whose start this stream sent (their `node.started`)
  const startedTasks = new Set<string>();
  // ...and the last of them per node (a `checkpointer: true` subgraph's chunks name the node, not the task)
  const rootTasksByNode = new Map<string, string>();
  // the run's metadata, as LangGraph gives it to every message of the run
  const runMetadata: Record<string, unknown> = { ...initial.metadata, graph_id: initial.graph_id, assistant_id: initial.assistant_id, run_id: key, thread_id: threadId };
  let boundary: string | undefined;
  // the run's own graph reads its checkpoints (no lookup of the thread's latest run per read)
  const ofRun = { graphId: initial.graph_id, configurable: initial.config.configurable };
  // the checkpoint the run started from, before its first own one: the one LangGraph wrote for its
  // input (step -1), or the thread's checkpoint a run without input (or a resume) continues; its
  // tasks are the run's first. LangGraph streams it first: the `checkpoints` and `debug` modes
  // start with it, and a continued run's `values` and `tasks` too (its state and the tasks it
  // starts). None for a run that forked its start into a checkpoint of its own (time travel).
  let start: StateSnapshot | undefined;
  let startKnown = false;
  // the start as read after the run's first own checkpoint (its tasks' results are in it)
  let startFinal = false;
  let startSent = false;
  const readSnapshots = async (): Promise<void> => {
    const read = await runtime.threads.runSnapshots(threadId, key, boundary, ofRun);
    // the last one read before may have gained its tasks' writes (results, interrupts) since
    const previous = snapshots[snapshots.length - 1];
    if (previous !== undefined && read.after !== undefined && checkpointIdOf(read.after) === checkpointIdOf(previous)) snapshots[snapshots.length - 1] = read.after;
    snapshots.push(...read.snapshots);
    const last = snapshots[snapshots.length - 1];
    boundary = last === undefined ? read.newestId : checkpointIdOf(last);
    const first = snapshots[0];
    if (!startFinal && first !== undefined) {
      // read (again, if `startOf` read it while its tasks ran) once the run wrote a checkpoint of
      // its own: by then the start's tasks have their results
      const parentId = first.parentConfig?.configurable?.["checkpoint_id"];
      // (the checkpoint this read's walk stopped at is that parent, read just now, when the read found the run's first)
      const stopped = [read.stoppedAt, read.after].find((snapshot) => snapshot !== undefined && checkpointIdOf(snapshot) === parentId);
      start = first.metadata?.source === "fork" || typeof parentId !== "string" ? undefined : (stopped ?? (await runtime.threads.stateAt(threadId, parentId, { run: ofRun })));
      [startKnown, startFinal] = [true, true];
    }
  };
  /**
   * Before the run wrote a checkpoint of its own, the checkpoint that started task `taskId` is the
   * thread's newest (the one it continues, or its input's): the start, when it has that task.
   */
  const startOf = async (taskId: string): Promise<void> => {
    if (startKnown || boundary === undefined || snapshots.length > 0) return;
    const newest = await runtime.threads.stateAt(threadId, boundary, { run: ofRun });
    if (newest.tasks.some((task) => task.id === taskId)) [start, startKnown] = [newest, true];
  };
  /** The start's parts, once, before any other checkpoint's or task's (LangGraph's first). */
  const startParts = (): { event: string; data: unknown }[] => {
    if (start === undefined) return [];
    const parts: { event: string; data: unknown }[] = [];
    const continued = start.metadata?.source !== "input";
    if (continued && modes.has("values")) parts.push({ event: "values", data: toWire(start.values ?? {}) });
    parts.push(...checkpointParts(start, modes, []), ...taskStartParts(start, modes, []));
    return parts;
  };
  // the start is behind a resume point past the run's beginning
  const startHeld = from !== undefined && (from.seq > 0 || from.values > 0 || from.settled > 0 || from.partial !== undefined);
  function* sendStart(): Generator<StreamPart> {
    if (startSent || !startKnown) return;
    startSent = true;
    for (const part of startParts()) yield* send(part, startHeld);
  }

  /**
   * Where a message's parts go: LangGraph's stream namespace `ns`; with `chunksAfterNamespace`
   * (the event protocol) the namespace of the node that wrote it (its metadata's
   * `langgraph_checkpoint_ns`: `[...ns, "node:task_id"]`), as LangGraph's protocol stream sends
   * every message event.
   */
  function messageNamespace(ns: readonly string[], metadata: Record<string, unknown> | undefined): readonly string[] {
    const node = metadata?.["langgraph_checkpoint_ns"];
    return options.chunksAfterNamespace === true && typeof node === "string" && node !== "" ? node.split("|") : ns;
  }
  /**
   * Where a `tools` part goes: as `toolParts` names it (`name`: `tools` or `tools|ns`); with
   * `chunksAfterNamespace` (the event protocol) the namespace of the task that ran the tool (the
   * stored event's `checkpoint_ns`), as LangGraph's protocol stream sends tool events.
   */
  function toolNamespace(event: StoredRunEvent, name: string): readonly string[] {
    const task = isRunEvent(event) && event.type === "tools" ? event.checkpoint_ns : undefined;
    return options.chunksAfterNamespace === true && task !== undefined && task !== "" ? task.split("|") : name.split("|").slice(1);
  }
  // message ids given to a step's id-less written messages (`withStateMessageIds`), per checkpoint
  const claimedIds = new Set<string>();
  // messages a subgraph's `messages|ns` part sent (stream_subgraphs): the parent does not send them again
  const sentBySubgraph = new Set<string>();
  /**
   * A node's output message as a `messages` part (`ns`: a subgraph's): whole, or when it streamed
   * as chunks only what they lacked, if anything (the part holds its position either way: the
   * positions are the stored data's, whether or not chunks streamed).
   */
  const messagePart = (ns: readonly string[], message: BaseMessage, metadata: Record<string, unknown>): RawPart => {
    const sent = message.id === undefined ? undefined : streamed.get(message.id);
    if (message.id !== undefined) complete.add(message.id);
    const wire = toWire(message) as Record<string, unknown>;
    const event = modeEvent("messages", messageNamespace(ns, sent?.metadata ?? metadata));
    if (sent === undefined) return { event, data: [wire, metadata] };
    const closing = closingChunk(wire, sent);
    if (closing !== undefined) return { event, data: [closing, sent.metadata], whole: wire };
    return { event, data: [wire, sent.metadata], whole: wire, silent: true };
  };
  const valuesUnit = (index: number): Unit => {
    const snapshot = snapshots[index] as StateSnapshot;
    const previous = index > 0 ? snapshots[index - 1] : undefined;
    // the checkpoint whose tasks made this one: the previous, or the run's start for its first
    const producer = previous ?? start;
    return {
      kind: "v",
      at: timeOf(snapshot.createdAt),
      parts: () => {
        const parts: RawPart[] = [];
        // what a node of this run wrote: the messages the checkpoint before did not hold (for the
        // run's first, the one it continues; a fork's copy of a past checkpoint wrote none), but
        // those a subgraph's part sent (LangGraph sends a message once, where its node ran)
        const fresh = modes.has("messages") ? freshMessages(previous ?? (snapshot.metadata?.source === "fork" ? snapshot : start), snapshot).filter((message) => message.id === undefined || !sentBySubgraph.has(message.id)) : [];
        const placed = new Set<BaseMessage>();
        // LangGraph's order: each finished task's messages, update and result, the values and
        // checkpoint they made, then the tasks that checkpoint starts
        if (producer !== undefined) {
          claimedIds.clear();
          const [before, made] = [toWire(producer.values ?? {}), toWire(snapshot.values ?? {})];
          for (const task of producer.tasks) {
            if (task.name.startsWith("__")) continue;
            // a task without a result paused or failed (the interrupt unit reports it), or ran and
            // wrote nothing: LangGraph sends `{node: {}}` for that one
            if (task.result === undefined && (task.interrupts.length > 0 || (task.error !== undefined && task.error !== null))) continue;
            // a message the node wrote without an id has the one the state gave it, as LangGraph's parts do
            const result = task.result === undefined ? {} : withStateMessageIds(toWire(task.result), before, made, claimedIds);
            for (const message of takeHeld(fresh, placed, result)) parts.push(messagePart([], message, nodeMetadata(runMetadata, snapshot, previous, message.id)));
            if (modes.has("updates")) parts.push({ event: "updates", data: { [task.name]: result } });
            parts.push(...taskResultParts(producer, task, snapshot, modes, [], result));
          }
        }
        for (const message of fresh) if (!placed.has(message)) parts.push(messagePart([], message, nodeMetadata(runMetadata, snapshot, previous, message.id)));
        if (modes.has("values")) parts.push({ event: "values", data: toWire(snapshot.values ?? {}) });
        // after the values, as the official server reads them from each values chunk
        if (modes.has(MESSAGES_EVENTS_MODE)) {
          const complete = completedMessages(snapshot, previous, toWire);
          if (complete !== undefined) parts.push(complete);
        }
        parts.push(...checkpointParts(snapshot, modes, []), ...taskStartParts(snapshot, modes, []));
        return parts;
      },
    };
  };
  const interruptUnit = (index: number): Unit => {
    const snapshot = snapshots[index] as StateSnapshot;
    return {
      kind: "i",
      at: timeOf(snapshot.createdAt),
      parts: () => {
        const interrupts = interruptsOf(snapshot);
        const parts: { event: string; data: unknown }[] = [];
        if (interrupts.length > 0 && modes.has("updates")) parts.push({ event: "updates", data: { __interrupt__: interrupts } });
        if (interrupts.length > 0 && modes.has("values")) parts.push({ event: "values", data: { __interrupt__: interrupts } });
        // a task that paused or failed has no next checkpoint to report it: its result goes here
        for (const task of snapshot.tasks) {
          if (task.interrupts.length > 0 || (task.error !== undefined && task.error !== null)) parts.push(...taskResultParts(snapshot, task, undefined, modes, []));
        }
        return parts;
      },
    };
  };
  // without stream_subgraphs a subgraph's custom writes reach the parent's stream (as LangGraph's do)
  const subgraphs =
    options.subgraphs === true
      ? new SubgraphParts(runtime, threadId, modes, initial.created_at, ofRun, (ns, message, snapshot, previous) => {
          if (message.id !== undefined) sentBySubgraph.add(message.id);
          return messagePart(ns, message, nodeMetadata(runMetadata, snapshot, previous, message.id, ns));
        })
      : undefined;
  /** A later attempt of the run (a worker died and another took it over) starts with its own metadata part. */
  const attemptPart = (event: StoredRunEvent): { event: string; data: unknown }[] => {
    if (!isRunEvent(event)) return [];
    const attempt = event.type === "run.started" || (event.type === "run.resumed" && (event.reason === "recovery" || event.reason === "manual" || event.reason === "reload")) ? event.attempt : undefined;
    if (typeof attempt !== "number" || attempt <= announced) return [];
    announced = attempt;
    return [{ event: "metadata", data: { run_id: initial.run_id, attempt: announced } }];
  };
  const eventUnit = (event: StoredRunEvent, attached: { event: string; data: unknown }[] = []): Unit => ({
    kind: "e",
    at: timeOf(event.at),
    parts: () => [
      ...attemptPart(event),
      ...attached,
      // what the graph wrote with config.writer, as LangGraph streams it: its custom writes, and
      // the step events (model.*, tool.call.*) its nodes report through the run handle's writer
      ...(modes.has("custom") && isRunEvent(event) && event.type === "custom" ? [{ event: modeEvent("custom", subgraphs === undefined ? [] : event.ns), data: toWire(event.data) }] : []),
      ...(modes.has("custom") && STEP_EVENT_TYPES.has(event.type) ? [{ event: "custom", data: event }] : []),
      ...(modes.has("tools") ? toolParts(event, subgraphs !== undefined).map((part) => (options.chunksAfterNamespace === true ? { ...part, event: modeEvent("tools", toolNamespace(event, part.event)) } : part)) : []),
      ...(modes.has("events") ? eventsParts(event, options.subgraphs === true) : []),
    ],
  });

  /**
   * What to do with a live chunk now: send it once the stream sent its top-level task's start
   * (its `node.started`, or the checkpoint that starts it) and, with `chunksAfterNamespace`, a
   * stored part of its namespace; wait before that, drop it once the
   * checkpoint completing that task was sent (its message came whole, or closed its chunks), and
   * drop every chunk of a message whose first chunk this stream did not get (it joined mid-way,
   * or a notification was lost): such a message comes whole with its checkpoint.
   */
  const taskStarts = new Map<string, number>();
  const chunkVerdict = (chunk: LiveMessageChunk, book: Map<string, SentMessage>): "send" | "wait" | "drop" => {
    const metadata = firstChunks.get(chunk.message_id);
    const sent = book.get(chunk.message_id);
    if (metadata === undefined || complete.has(chunk.message_id) || sent?.broken === true) return "drop";
    const named = rootTaskOf(metadata);
    if (named === undefined) return "drop";
    // a persistent subgraph's namespace names its node only: the node's top-level task started last
    const task = "id" in named ? named.id : rootTasksByNode.get(named.node);
    if (task === undefined) return "wait";
    let start = taskStarts.get(task);
    if (start === undefined) {
      start = snapshots.findIndex((snapshot) => snapshot.tasks.some((candidate) => candidate.id === task));
      if (start >= 0) taskStarts.set(task, start);
    }
    if (start >= 0 && cursor.values > start + 1) return "drop";
    if (start < 0) {
      // its start is not among the run's checkpoints (a task the run resumed): the first one sent completes it
      const step = metadata["langgraph_step"];
      if (chunk.ns.length === 0 && typeof step === "number" && snapshots.slice(0, cursor.values).some((snapshot) => (snapshot.metadata?.step ?? -1) >= step)) return "drop";
    }
    const started = startedTasks.has(task) || (start >= 0 && cursor.values === start + 1);
    if (started && options.chunksAfterNamespace === true && !namespacesSent.has(messageNamespace(chunk.ns, metadata).join("|"))) return "wait";
    return started ? "send" : "wait";
  };

  /**
   * Sends the live chunks that may go now (`chunkVerdict`), in the order they came: `messages`
   * parts `[chunk, metadata]` (LangGraph's metadata of the message, from its first chunk), and for
   * LangGraph's older `messages` mode the message's metadata at its first chunk then the message
   * so far (`messages/partial`). A subgraph's chunks are `messages|ns` parts with `subgraphs`
   * only, as LangGraph streams them (the older mode has them either way, as the official server
   * reads chat model events at any depth). Chunks have no id: live only, never replayed.
   */
  function* tokens(): Generator<StreamPart> {
    if (chunks.length === 0) return;
    const waiting: LiveMessageChunk[] = [];
    for (const chunk of chunks.splice(0)) {
      const tuple = modes.has("messages") && (chunk.ns.length === 0 || options.subgraphs === true);
      if (!tuple && !modes.has(MESSAGES_EVENTS_MODE)) continue;
      // a message sent as `messages` chunks is not sent whole with its checkpoint: only those count in `streamed`
      const book = tuple ? streamed : partialOnly;
      const verdict = chunkVerdict(chunk, book);
      if (verdict === "wait") waiting.push(chunk);
      if (verdict !== "send") continue;
      const metadata = firstChunks.get(chunk.message_id) as Record<string, unknown>;
      let sent = book.get(chunk.message_id);
      if (sent === undefined) {
        sent = new SentMessage(metadata);
        book.set(chunk.message_id, sent);
      }
      if (chunk.index !== sent.next) {
        sent.broken = true;
        continue;
      }
      sent.next += 1;
      sent.add(chunk.chunk);
      if (tuple) yield { event: modeEvent("messages", messageNamespace(chunk.ns, metadata)), data: [chunk.chunk, metadata] };
      if (modes.has(MESSAGES_EVENTS_MODE)) {
        // as the official server's: the chat model's metadata (without the tags and name LangGraph's messages mode adds)
        const { tags: _tags, name: _name, ...modelMetadata } = metadata;
        if (chunk.index === 0) yield { event: "messages/metadata", data: { [chunk.message_id]: { metadata: modelMetadata } } };
        yield { event: "messages/partial", data: [sent.join(chunk.chunk)] };
      }
    }
    chunks.unshift(...waiting);
  }

  /** Emits a unit's parts (but those before `from`), then moves the read position past it. */
  function* emit(unit: Unit, seq?: number): Generator<StreamPart> {
    // every checkpoint comes after the run's start (an event's parts may come before it: its
    // position is fixed by the first task start or checkpoint, alike live and in a replay)
    if (unit.kind !== "e") yield* sendStart();
    const parts = unit.parts();
    for (const [at, part] of parts.entries()) yield* send(part, beforeFrom(unit, seq, at));
    if (unit.kind === "v") cursor.values += 1;
    else if (unit.kind === "i") cursor.settled += 1;
    else cursor.seq = seq ?? cursor.seq;
  }
  // the first event after `from.seq`: the one a partial `e` position counts parts of
  let firstAfterFrom: number | undefined;
  /** Whether part `at` of `unit` is before `from` (the client has it). */
  function beforeFrom(unit: Unit, seq: number | undefined, at: number): boolean {
    if (from === undefined) return false;
    const partial = from.partial?.kind === unit.kind ? from.partial.parts : 0;
    if (unit.kind === "v") return cursor.values < from.values || (cursor.values === from.values && at < partial);
    if (unit.kind === "i") return cursor.settled < from.settled || (cursor.settled === from.settled && at < partial);
    const eventSeq = seq ?? 0;
    if (eventSeq <= from.seq) return true;
    firstAfterFrom ??= eventSeq;
    return eventSeq === firstAfterFrom && at < partial;
  }

  /** The next checkpoint unit to send: a checkpoint's interrupts once settled, else the next checkpoint. */
  const nextCheckpointUnit = (settledUpTo: number): Unit | undefined => {
    if (cursor.settled < settledUpTo && cursor.settled < cursor.values) return interruptUnit(cursor.settled);
    return cursor.values < snapshots.length ? valuesUnit(cursor.values) : undefined;
  };

  /**
   * The merge of every graph's stream, in the order its graph streamed: events in `seq` order (the executor
   * stores them as LangGraph's stream gives them), and before a top-level task's `node.started`
   * the checkpoint that started it (with everything before it), so a task's `custom` and `tools`
   * parts come after its `tasks` start and before the checkpoint its result made. Once the run
   * stopped, the checkpoints left follow the last event. Returns true when an event waits for a
   * checkpoint not read yet (the caller reads again soon); a checkpoint that never comes (a task
   * outside the run's checkpoints) is waited for SERVER_DEFAULTS.streamCheckpointPatienceMs.
   */
  let waiting: { seq: number; since: number } | undefined;
  // top-level tasks whose `node.finished` (no error, no interrupt) the stream came to
  const finishedTasks = new Set<string>();
  // a `node.finished` was just sent: the step it may complete is looked at before the next part
  let stepCheck: { since: number } | undefined;
  /**
   * The step sent as soon as it is stored: right after the `node.finished` of the last of the
   * tasks that make the next checkpoint (its producer's: the previous checkpoint's, or the run's
   * start's), that checkpoint's parts (and the interrupt check of the one before) go, as
   * LangGraph streams a step's writes, values and checkpoint once its tasks finished. A pure
   * function of what is stored (the run's events and checkpoints), so a stream read later
   * numbers its parts alike; the parts after that event wait for the checkpoint (saved
   * asynchronously), at most SERVER_DEFAULTS.streamStepPatienceMs or until the run stopped.
   * Returns true while waiting. A step with a task that failed, paused or ran before this run
   * has no such event: its checkpoint goes before the first task it starts (`byTask`).
   */
  async function* stepDone(settledUpTo: number, paused: boolean): AsyncGenerator<StreamPart, boolean> {
    if (stepCheck === undefined) return false;
    const patient = !paused && Date.now() - stepCheck.since <= SERVER_DEFAULTS.streamStepPatienceMs;
    const next = cursor.values;
    if (next === 0 && !startKnown) {
      // the run's first step: its producer is the run's start, known once its first checkpoint is read
      if (snapshots.length === 0 && patient) return true;
      stepCheck = undefined;
      return false;
    }
    const producer = next > 0 ? snapshots[next - 1] : start;
    const tasks = producer?.tasks.filter((task) => !task.name.startsWith("__")) ?? [];
    if (tasks.length === 0 || !tasks.every((task) => finishedTasks.has(task.id))) {
      stepCheck = undefined;
      return false;
    }
    if (snapshots.length <= next && patient) return true;
    stepCheck = undefined;
    yield* sendStart();
    while (cursor.values <= next) {
      const unit = nextCheckpointUnit(settledUpTo);
      if (unit === undefined) break;
      yield* tokens();
      yield* emit(unit);
    }
    return false;
  }
  /**
   * With `chunksAfterNamespace`: a stored task start in a namespace no part was sent in yet first
   * gives a `lifecycle|ns` part (no data, `silent`), so every subgraph has a stored first part
   * where its tokens may follow, also one that stores no checkpoints (`checkpointer: false`).
   */
  const namespaceMark = (event: StoredRunEvent): RawPart[] => {
    if (options.chunksAfterNamespace !== true || !isRunEvent(event)) return [];
    // a subgraph's first task start, the node a streamed message comes from (its tokens follow), or the node a tool runs in
    const ns = event.type === "node.started" ? event.ns : event.type === "message.started" ? event.checkpoint_ns.split("|") : event.type === "tools" && event.checkpoint_ns !== undefined && modes.has("tools") ? event.checkpoint_ns.split("|") : [];
    if (ns.length === 0 || namespacesSent.has(ns.join("|"))) return [];
    return [{ event: `lifecycle|${ns.join("|")}`, data: null, silent: true }];
  };
  async function* byTask(events: StoredRunEvent[], settledUpTo: number, paused: boolean): AsyncGenerator<StreamPart, boolean> {
    if (yield* stepDone(settledUpTo, paused)) return true;
    for (const event of events) {
      if (signal.aborted) return false;
      if (waiting?.seq !== event.seq) waiting = { seq: event.seq, since: Date.now() };
      const settled = paused || Date.now() - waiting.since > SERVER_DEFAULTS.streamCheckpointPatienceMs;
      // the root tasks are the run's checkpoints' and its start's (a task the run resumed started there)
      const attached = subgraphs === undefined ? [] : await subgraphs.partsFor(event, start === undefined ? snapshots : [start, ...snapshots], settled);
      if (attached === undefined) return true;
      if (isRunEvent(event) && event.type === "node.started" && event.ns.length === 0) {
        const startedBy = snapshots.findIndex((snapshot) => snapshot.tasks.some((task) => task.id === event.task_id));
        if (startedBy < 0) await startOf(event.task_id);
        const fromStart = start?.tasks.some((task) => task.id === event.task_id) === true;
        // saved asynchronously by LangGraph: the checkpoint may be stored just after the event
        if (startedBy < 0 && !fromStart && !settled) return true;
        yield* sendStart();
        while (cursor.values <= startedBy) {
          const unit = nextCheckpointUnit(settledUpTo);
          if (unit === undefined) break;
          // tokens that arrived meanwhile go before the checkpoint that completes their round
          yield* tokens();
          yield* emit(unit);
        }
      }
      yield* emit(eventUnit(event, [...namespaceMark(event), ...attached]), event.seq);
      // its tokens may follow now
      if (isRunEvent(event) && event.type === "node.started" && event.ns.length === 0) {
        startedTasks.add(event.task_id);
        rootTasksByNode.set(event.node, event.task_id);
      }
      if (isRunEvent(event) && event.type === "node.finished" && event.ns.length === 0 && event.error === null && !event.interrupted) {
        finishedTasks.add(event.task_id);
        stepCheck = { since: Date.now() };
        if (yield* stepDone(settledUpTo, paused)) return true;
      }
    }
    if (paused) {
      for (let unit = nextCheckpointUnit(settledUpTo); unit !== undefined && !signal.aborted; unit = nextCheckpointUnit(settledUpTo)) {
        yield* tokens();
        yield* emit(unit);
      }
    }
    return false;
  }

  // the run as last read: its status decides when the stream ends
  let latest: RunRecord = initial;
  try {
    // the checkpoints are read in each pass, after its events (the first pass too)
    for (;;) {
      if (signal.aborted) return;
      poked = false;
      // tokens that woke this pass, before reading checkpoints that may already complete their round
      yield* tokens();
      // a database away for a moment is waited out here while heartbeats keep the connection
      // open; every read below can be repeated, and what was sent is in `cursor`, so the client
      // gets neither a gap nor a duplicate
      const { run, events } = await retryDatabaseFaults(async () => {
        const read: StoredRunEvent[] = [];
        for await (const event of runtime.runs.events(key, { after: cursor.seq })) read.push(event);
        // the run's final event commits with its final status: the run is read once, when it
        // ended (a pass that read no final event saw the run before it ended, as a status read
        // first would have); whatever was written before it ended is read below
        // (both reads after the events: the checkpoints read are at least those the events knew of)
        const ended = !TERMINAL.has(latest.status) && read.some((event) => FINAL_EVENT_TYPES.includes(event.type));
        if (!ended && latest.status === "pending" && read.some((event) => event.type === "run.started")) latest = { ...latest, status: "running" };
        const [run] = await Promise.all([ended ? runtime.runs.get(key) : latest, readSnapshots()]);
        latest = run;
        return { run: latest, events: read };
      }, faultRetry);

      // a checkpoint's interrupts are final once a newer one exists or the run stopped running
      const paused = TERMINAL.has(run.status);
      const settledUpTo = paused ? snapshots.length : snapshots.length - 1;
      if (yield* byTask(events, settledUpTo, paused)) {
        options.idle?.();
        await sleep(SERVER_DEFAULTS.streamCheckpointWaitMs);
        continue;
      }
      yield* tokens();

      if (TERMINAL.has(run.status)) {
        yield* sendStart();
        // stopped at a static breakpoint (interrupt_before / interrupt_after): LangGraph's
        // interrupt without interrupts, in `updates` and `values`, as the official stream ends
        const last = snapshots[snapshots.length - 1];
        if (run.stop_reason === "interrupt" && last !== undefined && atBreakpoint(last)) {
          if (modes.has("updates")) yield* send({ event: "updates", data: { __interrupt__: [] } });
          if (modes.has("values")) yield* send({ event: "values", data: { __interrupt__: [] } });
        }
        if (run.status === "error" || run.status === "timeout") {
          yield* send({ event: "error", data: runErrorPart(run) });
        }
        options.ended?.(run);
        return;
      }
      if (!poked) {
        options.idle?.();
        const pollMs = run.status === "running" ? SERVER_DEFAULTS.streamPollMs : 1_000;
        await wakeableSleep(pollMs, (done) => {
          wake = done;
          return () => (wake = null);
        });
      }
    }
  } finally {
    signal.removeEventListener("abort", poke);
    await unlisten?.().catch(() => undefined);
  }
}

/** A run's last checkpoint when its graph stopped at a static breakpoint: tasks left, none interrupted or failed. */
function atBreakpoint(snapshot: StateSnapshot): boolean {
  return snapshot.next.length > 0 && snapshot.tasks.every((task) => task.interrupts.length === 0 && (task.error === undefined || task.error === null));
}
