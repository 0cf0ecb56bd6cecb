/**
 * The pure parts of the protocol's commands: a subgraph's lifecycle from a run's events (completed
 * after its parent's task result, before the next event; the run's end for those still running;
 * the same positions in every read), an `event_id`'s position, a subscription id that names its
 * filter.
 */
import { describe, expect, it } from "vitest";
import { eventIdPosition, liveEventId, seqOf } from "../../src/runtime/protocol/event-position.js";
import type { ProjectedEvent } from "../../src/runtime/protocol/part-events.js";
import { SubgraphLifecycle, withSubgraphLifecycle } from "../../src/runtime/protocol/subgraph-lifecycle.js";
import { filterOfSubscriptionId, subscriptionIdOf } from "../../src/runtime/protocol/subscription-id.js";

const event = (method: string, namespace: string[], data: unknown, node?: string): ProjectedEvent => ({ method, params: { namespace, timestamp: 0, data, ...(node === undefined ? {} : { node }) } });
const started = (namespace: string[]): ProjectedEvent => event("lifecycle", namespace, { event: "started", graph_name: namespace.at(-1)?.split(":")[0] });
const phases = (events: ProjectedEvent[]): string[] => events.filter((item) => item.method === "lifecycle").map((item) => `${item.params.namespace.join("/") || "root"} ${(item.params.data as { event: string }).event}`);

describe("SubgraphLifecycle", () => {
  it("completes a child after the part that reported its task's result, before the next event, at shifted indexes", () => {
    const lifecycle = new SubgraphLifecycle();
    const parts: ProjectedEvent[][] = [
      [started(["outer:1"]), event("custom", ["outer:1"], { payload: 1 })],
      [event("updates", [], { node: "outer", values: {} }, "outer")],
      [event("tasks", [], { id: "1", name: "outer", result: {} })],
      [event("messages", [], { event: "message-start" }, "after"), { ...event("messages", [], { event: "message-finish" }), slot: 4 }],
    ];
    const out = parts.map((part) => withSubgraphLifecycle(lifecycle, part, 0));
    // the update's completion waits for the task result, which attributes it exactly: after it
    expect(out[2]?.map((item) => item.method)).toEqual(["tasks"]);
    expect(out[3]?.map((item) => [item.method, item.slot])).toEqual([
      ["lifecycle", 0],
      ["messages", 1],
      ["messages", 5],
    ]);
    expect(phases(out.flat())).toEqual(["outer:1 started", "outer:1 completed"]);
    expect(phases(lifecycle.finish({ event: "completed" }, 0))).toEqual([]);
  });

  it("an interrupted or failed task result leaves its child running; the run's end ends it, outermost first", () => {
    const lifecycle = new SubgraphLifecycle();
    withSubgraphLifecycle(lifecycle, [started(["a:1"]), started(["a:1", "b:2"])], 0);
    withSubgraphLifecycle(lifecycle, [event("tasks", ["a:1"], { id: "2", name: "b", result: {}, interrupts: [{ id: "i" }] })], 0);
    withSubgraphLifecycle(lifecycle, [event("tasks", [], { id: "1", name: "a", result: {}, error: "boom" })], 0);
    expect(phases(lifecycle.finish({ event: "interrupted" }, 0))).toEqual(["a:1 interrupted", "a:1/b:2 interrupted"]);
    expect(lifecycle.statuses().map((entry) => entry.status)).toEqual(["interrupted", "interrupted"]);
  });

  it("a namespace first seen without its started (a live chunk had it) is known from its first durable event", () => {
    const lifecycle = new SubgraphLifecycle();
    withSubgraphLifecycle(lifecycle, [event("values", ["x:9"], {})], 0);
    withSubgraphLifecycle(lifecycle, [event("updates", [], { node: "x", values: {} }, "x")], 0);
    expect(phases(withSubgraphLifecycle(lifecycle, [event("values", [], {})], 0))).toEqual(["x:9 completed"]);
  });
});

describe("event ids and subscription ids", () => {
  it("an event_id names its run's position; a live one the end of the part before it; a bare seq itself", () => {
    expect(eventIdPosition("run-1:7:2")).toEqual({ runId: "run-1", part: 7, index: 2 });
    expect(eventIdPosition(liveEventId("run-1", 7, "msg:with:colons", 3, 1))).toEqual({ runId: "run-1", part: 7, index: 999 });
    expect(eventIdPosition("2000007002")).toEqual({ seq: 2000007002 });
    expect(seqOf({ ordinal: 2, part: 7, index: 2 })).toBe(2000007002);
    for (const bad of ["", "nope", "run-1:x:2", "run-1:live:x:y", "1e9"]) expect(eventIdPosition(bad)).toBeUndefined();
  });

  it("a subscription id names its filter (unique per subscription); anything else names none", () => {
    const filter = { channels: new Set(["values", "lifecycle"] as const), namespaces: [["outer:1"]], depth: 1 };
    const id = subscriptionIdOf(filter);
    expect(id).not.toBe(subscriptionIdOf(filter));
    expect(filterOfSubscriptionId(id)).toEqual({ channels: new Set(["values", "lifecycle"]), namespaces: [["outer:1"]], depth: 1, since: undefined });
    const encode = (value: unknown): string => `sub.${Buffer.from(JSON.stringify(value)).toString("base64url")}`;
    for (const bad of ["sub-1", "sub.", "sub.!!", encode({}), encode({ c: ["gossip"], k: "x" }), encode({ c: ["values"], k: "x", extra: 1 })]) expect(filterOfSubscriptionId(bad)).toBeUndefined();
  });
});
