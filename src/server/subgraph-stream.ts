import { withStateMessageIds } from "./message-ids.js";
import type { BaseMessage } from "@langchain/core/messages";
import type { StateSnapshot } from "@langchain/langgraph";
import { isRunEvent, type Runtime, type StoredRunEvent } from "../runtime/runtime.js";
import type { GraphOfRun } from "../runtime/threads/thread-state.js";
import { interruptsOf, toWire } from "./wire.js";
import { freshMessages, takeHeld } from "./stream-messages.js";
import { checkpointParts, modeEvent, taskResultParts, taskStartParts, type ModePart } from "./stream-modes.js";

type SnapshotTask = StateSnapshot["tasks"][number];

/** The namespace (`["node:task_id", ...]`) a task of a checkpoint runs its subgraph in, if it is a subgraph. */
export function subgraphNamespaceOf(task: SnapshotTask): string[] | undefined {
  const ns = (task.state as { configurable?: { checkpoint_ns?: unknown } } | undefined)?.configurable?.checkpoint_ns;
  return typeof ns === "string" && ns !== "" ? ns.split("|") : undefined;
}

/** One invocation of a subgraph as LangGraph writes it: its input checkpoint, then its loop's. */
interface NamespaceCheckpoints {
  input: StateSnapshot | undefined;
  steps: StateSnapshot[];
}

function hasTasks(snapshot: StateSnapshot): boolean {
  return snapshot.tasks.some((task) => !task.name.startsWith("__"));
}

function isInput(snapshot: StateSnapshot): boolean {
  return snapshot.metadata?.source === "input";
}

/**
 * The invocation that holds checkpoint `index` of a namespace's history (oldest first): from the
 * input checkpoint at or before it to the one before the next input. A subgraph's own namespace
 * (`node:task_id`) holds one; a `checkpointer: true` subgraph keeps every invocation of the thread
 * under one namespace (`node`), each starting with its input checkpoint.
 */
function invocationAt(all: readonly StateSnapshot[], index: number): NamespaceCheckpoints {
  let first = Math.min(index, all.length - 1);
  while (first > 0 && !isInput(all[first] as StateSnapshot)) first -= 1;
  let next = first + 1;
  while (next < all.length && !isInput(all[next] as StateSnapshot)) next += 1;
  const head = all[first];
  if (head === undefined) return { input: undefined, steps: [] };
  return isInput(head) ? { input: head, steps: all.slice(first + 1, next) } : { input: undefined, steps: all.slice(first, next) };
}

/** A namespace as its stored checkpoints name it (`checkpointer: true` subgraphs: without task ids), or `ns` when none says. */
function storedNamespace(ns: readonly string[], all: readonly StateSnapshot[]): string[] {
  const stored = all[0]?.config?.configurable?.["checkpoint_ns"];
  return typeof stored === "string" && stored !== "" ? stored.split("|") : [...ns];
}

/** A message a subgraph's node wrote as its `messages|ns` part (`snapshot` holds it, `previous` started the task). */
export type SubgraphMessagePart = (ns: readonly string[], message: BaseMessage, snapshot: StateSnapshot, previous: StateSnapshot | undefined) => ModePart;

/**
 * The parts of subgraphs for `stream_subgraphs`, derived from the checkpoints each subgraph
 * invocation stored under its namespace, as LangGraph streams them (`values|ns`, `updates|ns`,
 * `checkpoints|ns`, `tasks|ns`, `debug|ns`): the parts up to the checkpoint that started a
 * subgraph task go with that task's `node.started` event, the rest with the `node.finished` event
 * of the parent task that ran the subgraph. Attached to stored events, they are sent and replayed
 * in the events' order. Reads go through `refresh` (async) before the parts are asked for. A
 * subgraph compiled with `checkpointer: true` streams and stores under its node's name (no task
 * id), every invocation of the thread in one history: each task's parts come from its own
 * invocation, named as LangGraph streams them.
 */
export class SubgraphParts {
  /** Each namespace's history, oldest first, by the namespace asked for. */
  private readonly lists = new Map<string, StateSnapshot[]>();
  /** Namespaces of subgraphs that store no checkpoints (`checkpointer: false`): none is waited for. */
  private readonly unsaved = new Set<string>();

  /**
   * `runCreatedAt`: when the streamed run was created; a subgraph checkpoint older than it was
   * written by an earlier run of the thread (the one this run resumes). `run`: the streamed run's
   * graph, which reads its subgraphs' checkpoints (not the graph of the thread's newest run).
   */
  constructor(
    private readonly runtime: Runtime,
    private readonly threadId: string,
    private readonly modes: ReadonlySet<string>,
    private readonly runCreatedAt: string = "",
    private readonly run?: GraphOfRun,
    private readonly messagePart?: SubgraphMessagePart,
  ) {}

  /**
   * The subgraph parts that go with a node event: before a subgraph task starts, its subgraph's
   * checkpoints up to the one that started it; when a task that ran a subgraph ends, the rest of
   * that subgraph (`root`: the run's own checkpoints, where top-level tasks are). Undefined while
   * the checkpoint of a started task is not stored yet, unless `settled` (then none is coming).
   */
  async partsFor(event: StoredRunEvent, root: readonly StateSnapshot[], settled: boolean): Promise<ModePart[] | undefined> {
    if (!isRunEvent(event)) return [];
    if (event.type === "node.started" && event.ns.length > 0) {
      if (!this.knows(event.ns, event.task_id)) await this.refresh(event.ns);
      if (!this.knows(event.ns, event.task_id) && !settled && !this.unsaved.has(event.ns.join("|"))) return undefined;
      return this.startedParts(event.ns, event.task_id);
    }
    if (event.type === "node.finished") {
      const steps = event.ns.length === 0 ? root : this.history(event.ns);
      const task = steps.flatMap((snapshot) => snapshot.tasks).find((item) => item.id === event.task_id);
      const child = task === undefined ? undefined : subgraphNamespaceOf(task);
      if (child === undefined) return [];
      await this.refresh(child);
      return this.finishedParts(child, event.at);
    }
    return [];
  }

  /** Reads (again) a namespace's checkpoints (a running subgraph adds some; one that stores none has none). */
  async refresh(ns: readonly string[]): Promise<void> {
    const key = ns.join("|");
    if (this.unsaved.has(key)) return;
    const all = await this.runtime.threads.namespaceSnapshots(this.threadId, key, this.run);
    if (all === undefined) this.unsaved.add(key);
    this.lists.set(key, all ?? []);
  }

  /** The checkpoints read for a namespace, oldest first (root tasks' namespaces come from the run's own checkpoints). */
  history(ns: readonly string[]): StateSnapshot[] {
    return this.lists.get(ns.join("|")) ?? [];
  }

  /** Whether the checkpoint that started task `taskId` in `ns` was read. */
  knows(ns: readonly string[], taskId: string): boolean {
    return this.history(ns).some((snapshot) => snapshot.tasks.some((task) => task.id === taskId));
  }

  /**
   * The parts to send before subgraph task `taskId` of `ns` starts: the checkpoints since the one
   * whose tasks started before it, once per checkpoint (with its first task; a resumed task
   * starts again from its checkpoint, which LangGraph streams again too).
   */
  startedParts(ns: readonly string[], taskId: string): ModePart[] {
    const all = this.history(ns);
    const index = all.findIndex((snapshot) => snapshot.tasks.some((task) => task.id === taskId));
    if (index < 0 || (all[index] as StateSnapshot).tasks.find((task) => !task.name.startsWith("__"))?.id !== taskId) return [];
    const invocation = invocationAt(all, index);
    const named = storedNamespace(ns, all);
    const at = invocation.steps.indexOf(all[index] as StateSnapshot);
    const startedBy = all[index] as StateSnapshot;
    if (Date.parse(startedBy.createdAt ?? "") < Date.parse(this.runCreatedAt)) {
      // a task of an earlier run's checkpoint, which this run resumes: LangGraph streams that
      // checkpoint's state and tasks again, not the updates that made it (the earlier run sent those)
      return [
        ...(this.modes.has("values") ? [{ event: modeEvent("values", named), data: toWire(startedBy.values ?? {}) }] : []),
        ...checkpointParts(startedBy, this.modes, named),
        ...taskStartParts(startedBy, this.modes, named),
      ];
    }
    let before = at - 1;
    while (before >= 0 && !hasTasks(invocation.steps[before] as StateSnapshot)) before -= 1;
    return this.range(invocation, named, before + 1, at);
  }

  /**
   * The parts left of a subgraph when its parent task ended at `endedAt` (the event's time): the
   * checkpoints made by then after its last task start, and the interrupts of the last one.
   * Bounded by time so that a replay after a resume sends what the live stream sent.
   */
  finishedParts(ns: readonly string[], endedAt: string): ModePart[] {
    const end = Date.parse(endedAt);
    const all = this.history(ns);
    let lastMade = all.length - 1;
    while (lastMade >= 0 && Date.parse((all[lastMade] as StateSnapshot).createdAt ?? "") > end) lastMade -= 1;
    if (lastMade < 0) return [];
    const invocation = invocationAt(all, lastMade);
    const named = storedNamespace(ns, all);
    const steps = invocation.steps.filter((snapshot) => !(Date.parse(snapshot.createdAt ?? "") > end));
    let last = steps.length - 1;
    while (last >= 0 && !hasTasks(steps[last] as StateSnapshot)) last -= 1;
    const parts = this.range({ input: invocation.input, steps }, named, last + 1, steps.length - 1);
    const final = steps[steps.length - 1];
    if (final !== undefined) parts.push(...this.interruptParts(final, named));
    return parts;
  }

  /** Checkpoints `from`..`to` of an invocation, named `ns` (each after the interrupts of the one before it). */
  private range(list: NamespaceCheckpoints, ns: readonly string[], from: number, to: number): ModePart[] {
    const parts: ModePart[] = [];
    for (let index = from; index <= to; index += 1) {
      const snapshot = list.steps[index] as StateSnapshot;
      const previous = index > 0 ? list.steps[index - 1] : list.input;
      if (index > 0) parts.push(...this.interruptParts(list.steps[index - 1] as StateSnapshot, ns));
      if (index === 0 && list.input !== undefined) parts.push(...checkpointParts(list.input, this.modes, ns));
      const claimed = new Set<string>();
      // the messages its nodes wrote, each before its node's update, as LangGraph streams them
      const fresh = this.messagePart === undefined || !this.modes.has("messages") ? [] : freshMessages(previous, snapshot);
      const placed = new Set<BaseMessage>();
      for (const task of previous?.tasks ?? []) {
        if (task.result === undefined || task.name.startsWith("__")) continue;
        // a message the node wrote without an id has the one the state gave it, as LangGraph's parts do
        const result = withStateMessageIds(toWire(task.result), toWire(previous?.values ?? {}), toWire(snapshot.values ?? {}), claimed);
        for (const message of takeHeld(fresh, placed, result)) parts.push((this.messagePart as SubgraphMessagePart)(ns, message, snapshot, previous));
        if (this.modes.has("updates")) parts.push({ event: modeEvent("updates", ns), data: { [task.name]: result } });
        parts.push(...taskResultParts(previous as StateSnapshot, task, snapshot, this.modes, ns, result));
      }
      // (none from the input: what enters a subgraph is not its nodes' output)
      if (previous !== list.input) for (const message of fresh) if (!placed.has(message)) parts.push((this.messagePart as SubgraphMessagePart)(ns, message, snapshot, previous));
      if (this.modes.has("values")) parts.push({ event: modeEvent("values", ns), data: toWire(snapshot.values ?? {}) });
      parts.push(...checkpointParts(snapshot, this.modes, ns), ...taskStartParts(snapshot, this.modes, ns));
    }
    return parts;
  }

  /** A subgraph checkpoint's interrupts (`updates|ns` and `values|ns`) and its paused or failed tasks' results. */
  private interruptParts(snapshot: StateSnapshot, ns: readonly string[]): ModePart[] {
    const interrupts = interruptsOf(snapshot);
    const parts: ModePart[] = [];
    if (interrupts.length > 0 && this.modes.has("updates")) parts.push({ event: modeEvent("updates", ns), data: { __interrupt__: interrupts } });
    if (interrupts.length > 0 && this.modes.has("values")) parts.push({ event: modeEvent("values", ns), data: { __interrupt__: interrupts } });
    for (const task of snapshot.tasks) {
      if (task.interrupts.length > 0 || (task.error !== undefined && task.error !== null)) parts.push(...taskResultParts(snapshot, task, undefined, this.modes, ns));
    }
    return parts;
  }
}
