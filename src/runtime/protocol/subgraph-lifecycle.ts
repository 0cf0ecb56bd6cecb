import type { AgentStatus, LifecycleData } from "@langchain/protocol";
import type { ProjectedEvent } from "./part-events.js";

/** A namespace of a run as its lifecycle knows it: its graph name and last status. */
export interface NamespaceStatus {
  namespace: string[];
  graphName: string;
  status: AgentStatus;
}

/** A child completion waiting for the next event (LangGraph's order: the parent's update, then the child's end). */
interface Pending {
  key: string;
  /** Set when an `updates` event attributed it (a task result's exact attribution replaces it). */
  node?: { parent: string; name: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

const keyOf = (namespace: readonly string[]): string => namespace.join("\u0000");

function graphNameOf(namespace: readonly string[]): string {
  const last = namespace[namespace.length - 1] ?? "";
  const colon = last.indexOf(":");
  return colon < 0 ? last : last.slice(0, colon);
}

/**
 * The end of each subgraph of a run, in the protocol's `lifecycle` channel, as LangGraph's
 * lifecycle transformer derives it (the official server forwards its events): a child namespace
 * `[...ns, "node:task_id"]` is `completed` once its parent namespace reports that task's result
 * (a `tasks` result with that id) or, failing that, the node's `updates`; the completion goes out
 * before the next event, so the parent's update comes first. When the run ends, every namespace
 * still running gets the run's own end (`completed`, `interrupted` or `failed`) before the root's.
 * One difference, on purpose: a task result that carries interrupts or an error does not complete
 * its subgraph (LangGraph's would call it completed); the subgraph ends `interrupted` or `failed`
 * with the run.
 *
 * Fed only the events of durable parts (never live token chunks), in order: the same stored parts
 * give the same lifecycle events at the same positions, live or read again after a restart.
 * `started` comes from `RunPartProjector` (each namespace when first seen); this tracker records it.
 */
export class SubgraphLifecycle {
  private readonly namespaces = new Map<string, NamespaceStatus>();
  private pending: Pending[] = [];

  /**
   * The lifecycle events that go before `event` (the next event of a durable part): the
   * completions earlier events left waiting (but one that `event`, a task's result, attributes
   * exactly itself). Then reads `event`: the namespaces it starts, the completions it causes.
   */
  before(event: ProjectedEvent, timestamp: number): ProjectedEvent[] {
    const result = taskResultOf(event);
    // the exact attribution wins over an `updates` one of the same node
    if (result !== undefined) this.pending = this.pending.filter((pending) => pending.node === undefined || pending.node.parent !== keyOf(event.params.namespace) || pending.node.name !== result.name);
    const out = this.flush(timestamp);
    this.observe(event, result);
    return out;
  }

  /**
   * The run's end: the completions still waiting, then `terminal` (the root's end) for every
   * subgraph still running, outermost first (no `error` text: that is the root's).
   */
  finish(terminal: LifecycleData, timestamp: number): ProjectedEvent[] {
    const out = this.flush(timestamp);
    for (const entry of this.namespaces.values()) {
      if (entry.status !== "started") continue;
      entry.status = terminal.event;
      out.push(lifecycleEvent(entry, timestamp));
    }
    return out;
  }

  /** Every subgraph namespace seen so far with its status, in the order they started. */
  statuses(): NamespaceStatus[] {
    return [...this.namespaces.values()].map((entry) => ({ ...entry, namespace: [...entry.namespace] }));
  }

  private flush(timestamp: number): ProjectedEvent[] {
    const out: ProjectedEvent[] = [];
    for (const { key } of this.pending.splice(0)) {
      const entry = this.namespaces.get(key);
      if (entry === undefined || entry.status !== "started") continue;
      entry.status = "completed";
      out.push(lifecycleEvent(entry, timestamp));
    }
    return out;
  }

  private observe(event: ProjectedEvent, result: TaskResult | undefined): void {
    const namespace = event.params.namespace;
    if (event.method === "lifecycle" && namespace.length > 0) {
      const data = event.params.data as LifecycleData;
      const known = this.namespaces.get(keyOf(namespace));
      if (known === undefined) this.namespaces.set(keyOf(namespace), { namespace: [...namespace], graphName: data.graph_name ?? graphNameOf(namespace), status: data.event });
      else known.status = data.event;
      return;
    }
    // a namespace seen first by a live chunk was started there: known from its first durable event
    for (let depth = 1; depth <= namespace.length; depth += 1) {
      const prefix = namespace.slice(0, depth);
      if (!this.namespaces.has(keyOf(prefix))) this.namespaces.set(keyOf(prefix), { namespace: prefix, graphName: graphNameOf(prefix), status: "started" });
    }
    if (result !== undefined) {
      if (!result.interrupted && !result.failed) this.enqueue(keyOf([...namespace, `${result.name}:${result.id}`]));
      return;
    }
    const node = event.params.node;
    if (event.method === "updates" && typeof node === "string" && !node.startsWith("__")) {
      const child = this.startedChild(namespace, node);
      if (child !== undefined) this.enqueue(child, { parent: keyOf(namespace), name: node });
    }
  }

  private enqueue(key: string, node?: Pending["node"]): void {
    if (this.namespaces.get(key)?.status !== "started") return;
    if (this.pending.some((pending) => pending.key === key)) return;
    this.pending.push(node === undefined ? { key } : { key, node });
  }

  /** The oldest running child of `parent` that node `node` runs (`node` or `node:task_id`). */
  private startedChild(parent: readonly string[], node: string): string | undefined {
    for (const [key, entry] of this.namespaces) {
      if (entry.status !== "started" || entry.namespace.length !== parent.length + 1) continue;
      if (!parent.every((segment, index) => entry.namespace[index] === segment)) continue;
      const last = entry.namespace[parent.length] as string;
      if (last === node || last.startsWith(`${node}:`)) return key;
    }
    return undefined;
  }
}

function lifecycleEvent(entry: NamespaceStatus, timestamp: number): ProjectedEvent {
  return { method: "lifecycle", params: { namespace: [...entry.namespace], timestamp, data: { event: entry.status, graph_name: entry.graphName } } };
}

/**
 * One durable part's events with the lifecycle events that go before each
 * (`SubgraphLifecycle.before`), each with its index in the part (`slot`): an event's own index
 * (its `slot`, else its place) shifted by the lifecycle events inserted before it, so a part
 * numbers its events alike live and read again.
 */
export function withSubgraphLifecycle(lifecycle: SubgraphLifecycle, events: readonly ProjectedEvent[], timestamp: number): ProjectedEvent[] {
  const out: ProjectedEvent[] = [];
  let inserted = 0;
  for (const [at, event] of events.entries()) {
    const base = event.slot ?? at;
    // before a part's first event they are its first (a streamed message's end, live, starts at a later slot)
    const place = at === 0 ? 0 : base;
    for (const ended of lifecycle.before(event, timestamp)) {
      out.push({ ...ended, slot: place + inserted });
      inserted += 1;
    }
    out.push(inserted === 0 ? event : { ...event, slot: base + inserted });
  }
  return out;
}

interface TaskResult {
  name: string;
  id: string;
  interrupted: boolean;
  failed: boolean;
}

/** A `tasks` event reporting a task's result (not a task start, nor an internal `__` task). */
function taskResultOf(event: ProjectedEvent): TaskResult | undefined {
  const data = event.params.data;
  if (event.method !== "tasks" || !isRecord(data) || !("result" in data)) return undefined;
  const { name, id } = data;
  if (typeof name !== "string" || typeof id !== "string" || name.startsWith("__")) return undefined;
  return { name, id, interrupted: Array.isArray(data["interrupts"]) && data["interrupts"].length > 0, failed: data["error"] !== undefined && data["error"] !== null };
}
