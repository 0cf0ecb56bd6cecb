import { describe, expect, it } from "vitest";
import { filterOf } from "../../src/runtime/protocol/command-schema.js";
import { matchesFilter } from "../../src/runtime/protocol/event-filter.js";
import { durableEventId, positionOf, seqOf } from "../../src/runtime/protocol/event-position.js";
import { RunPartProjector } from "../../src/runtime/protocol/part-events.js";
import { wholeMessageEvents } from "../../src/runtime/protocol/message-events.js";
import { SubgraphLifecycle, withSubgraphLifecycle } from "../../src/runtime/protocol/subgraph-lifecycle.js";

describe("protocol positions", () => {
  it("seq orders runs, then parts, then events within a part, and reads back", () => {
    const seqs = [
      { ordinal: 1, part: 1, index: 0 },
      { ordinal: 1, part: 1, index: 4 },
      { ordinal: 1, part: 2, index: 0 },
      { ordinal: 2, part: 1, index: 0 },
    ].map(seqOf);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(4);
    expect(positionOf(seqOf({ ordinal: 3, part: 17, index: 5 }))).toEqual({ ordinal: 3, part: 17, index: 5 });
    expect(durableEventId("r1", { ordinal: 3, part: 17, index: 5 })).toBe("r1:17:5");
  });
});

describe("the filter", () => {
  const event = (method: string, namespace: string[], seq = 10, data: unknown = {}) => ({ method, seq, params: { namespace, data } });
  it("matches channels (custom:NAME by custom too), namespace prefixes with depth, and since", () => {
    const result = filterOf({ channels: ["values", "custom"], namespaces: [["outer:1"]], depth: 1, since: 5 });
    if (!("filter" in result)) throw new Error("refused");
    const { filter } = result;
    expect(matchesFilter(filter, event("values", ["outer:1"]))).toBe(true);
    expect(matchesFilter(filter, event("values", ["outer:1", "inner:2"]))).toBe(true);
    expect(matchesFilter(filter, event("values", ["outer:1", "inner:2", "deep:3"]))).toBe(false);
    expect(matchesFilter(filter, event("values", ["other:9"]))).toBe(false);
    expect(matchesFilter(filter, event("updates", ["outer:1"]))).toBe(false);
    expect(matchesFilter(filter, event("custom", ["outer:1"], 10, { name: "stats", payload: 1 }))).toBe(true);
    expect(matchesFilter(filter, event("values", ["outer:1"], 5))).toBe(false);
  });
  it("refuses an unknown channel by name", () => {
    expect(filterOf({ channels: ["values", "gossip"] })).toEqual({ unknownChannel: "gossip" });
  });
});

describe("RunPartProjector", () => {
  it("starts the root once, then each new subgraph namespace, and turns an interrupt into input.requested", () => {
    const projector = new RunPartProjector("g", ["i-0"]);
    const first = projector.events({ event: "metadata", data: {}, id: "0" }, 1);
    expect(first.map((event) => [event.method, (event.params.data as { event?: string }).event])).toEqual([
      ["lifecycle", "started"],
      ["input.answered", undefined],
    ]);
    const inner = projector.events({ event: "custom|sub:1", data: { a: 1 }, id: "1" }, 2);
    expect(inner.map((event) => [event.method, event.params.namespace])).toEqual([
      ["lifecycle", ["sub:1"]],
      ["custom", ["sub:1"]],
    ]);
    expect(projector.events({ event: "custom|sub:1", data: { a: 2 }, id: "2" }, 3).map((event) => event.method)).toEqual(["custom"]);
    const interrupt = projector.events({ event: "updates", data: { __interrupt__: [{ id: "i-1", value: { q: "?" } }] }, id: "3" }, 4);
    expect(interrupt).toEqual([{ method: "input.requested", params: { namespace: [], timestamp: 4, data: { interrupt_id: "i-1", payload: { q: "?" } } } }]);
  });

  it("a streamed message ends in the slots its whole message's end has; a message not streamed comes whole", () => {
    const whole = { type: "ai", id: "m1", content: "hello", usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } };
    const streamed = new RunPartProjector("g");
    const chunkEvents = [
      ...streamed.events({ event: "messages", data: [{ type: "AIMessageChunk", id: "m1", content: "hel" }, { langgraph_node: "n" }] }, 1),
      ...streamed.events({ event: "messages", data: [{ type: "AIMessageChunk", id: "m1", content: "lo" }, {}] }, 2),
    ].filter((event) => event.method === "messages");
    expect(chunkEvents.map((event) => (event.params.data as { event: string }).event)).toEqual(["message-start", "content-block-start", "content-block-delta", "content-block-delta"]);
    const end = streamed.events({ event: "messages", data: [whole, {}], id: "5", whole }, 3);
    const full = wholeMessageEvents(whole, "m1");
    expect(end.map((event) => event.slot)).toEqual([full.length - 2, full.length - 1]);
    expect(end.map((event) => event.params.data)).toEqual(full.slice(-2));
    const replay = new RunPartProjector("g");
    replay.events({ event: "metadata", data: {}, id: "0" }, 1);
    expect(replay.events({ event: "messages", data: [whole, {}], id: "5" }, 3).map((event) => event.params.data)).toEqual(full);
  });

  it("a subgraph's end before a streamed message's end in the same part takes the part's first slot, live as read later", () => {
    // the subgraph stores nothing: its message streamed under its namespace, and comes whole in the parent's state
    const ns = ["research:t1"];
    const whole = { type: "ai", id: "m1", content: "hello" };
    const parts = (projector: RunPartProjector, lifecycle: SubgraphLifecycle, live: boolean) => {
      const out: { slot: number; method: string; event: string; namespace: string[] }[] = [];
      const stored = (part: { event: string; data: unknown; id: string; whole?: unknown }) => {
        const events = withSubgraphLifecycle(lifecycle, projector.events(part, 1), 1);
        for (const [at, event] of events.entries()) out.push({ slot: event.slot ?? at, method: event.method, event: String((event.params.data as { event?: unknown }).event), namespace: event.params.namespace });
      };
      stored({ event: "metadata", data: {}, id: "0" });
      stored({ event: "lifecycle|research:t1", data: null, id: "1" });
      if (live) projector.events({ event: "messages|research:t1", data: [{ type: "AIMessageChunk", id: "m1", content: "hello" }, { langgraph_node: "think" }] }, 1);
      stored({ event: "tasks", data: { id: "t1", name: "research", result: {} }, id: "2" });
      stored({ event: "messages", data: [whole, { langgraph_node: "research" }], id: "3", ...(live ? { whole } : {}) });
      return out;
    };
    const live = parts(new RunPartProjector("g"), new SubgraphLifecycle(), true);
    const later = parts(new RunPartProjector("g"), new SubgraphLifecycle(), false);
    const ended = (list: typeof live) => list.find((event) => event.method === "lifecycle" && event.event === "completed");
    expect(ended(live)?.slot).toBe(0);
    expect(ended(later)?.slot).toBe(0);
    // the end of the streamed message: the slots of the whole message's end, where it started
    const finish = live.filter((event) => event.event === "message-finish");
    expect(finish.map((event) => [event.slot, event.namespace])).toEqual([[later.filter((event) => event.method === "messages" || event.method === "lifecycle").find((event) => event.event === "message-finish")?.slot, ns]]);
  });
});
