import { randomUUID } from "node:crypto";
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { CompiledGraphLike } from "../../src/graphs/graph-kinds.js";
import { graphChunks, type GraphChunk } from "../../src/runtime/execution/graph-stream-events.js";
import type { GraphRunEvent } from "../../src/runtime/events/run-events.js";

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
  big: Annotation<unknown>({ reducer: (_, next) => next, default: () => null }),
});

/** Three nodes, one writing a custom part; `bigint` makes the last node write a value JSON cannot hold. */
function graph(bigint = false): CompiledGraphLike {
  return new StateGraph(State)
    .addNode("one", (_state: typeof State.State, config: LangGraphRunnableConfig) => {
      config.writer?.({ from: "one" });
      return { steps: ["one"] };
    })
    .addNode("two", () => ({ steps: ["two"] }))
    .addNode("three", () => ({ steps: ["three"], ...(bigint ? { big: 10n } : {}) }))
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", "three")
    .addEdge("three", END)
    .compile() as unknown as CompiledGraphLike;
}

const OPTIONS = { streamMode: ["tasks", "custom", "updates"], subgraphs: true } as never;

async function drain(chunks: AsyncIterable<GraphChunk>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

/** A chunk without its task ids (they differ between two executions). */
const withoutIds = (chunks: unknown[]): unknown => JSON.parse(JSON.stringify(chunks).replace(/"id":"[^"]+"/g, '"id":"-"'));

describe("graphChunks: LangChain stream events recorded beside the graph's stream", () => {
  it("without a recording it is the graph's stream; with one the same chunks, and every other event in order, the root first and last", async () => {
    const plain = await drain(await graphChunks(graph(), { steps: [] }, OPTIONS, randomUUID(), null));
    const recorded: GraphRunEvent[] = [];
    const rootRunId = randomUUID();
    const chunks = await drain(await graphChunks(graph(), { steps: [] }, OPTIONS, rootRunId, { limit: 1_000, emit: (event) => recorded.push(event) }));
    expect(withoutIds(chunks)).toEqual(withoutIds(plain));
    expect(chunks).toContainEqual([[], "custom", { from: "one" }]);
    const events = recorded.map((event) => (event.type === "events" ? (event.data as { event: string; name: string; run_id: string }) : null));
    expect(events.every((event) => event !== null)).toBe(true);
    const lines = events.map((event) => `${event?.event} ${event?.name}`);
    expect(lines).toEqual([
      "on_chain_start LangGraph",
      "on_chain_start one",
      "on_chain_end one",
      "on_chain_start two",
      "on_chain_end two",
      "on_chain_start three",
      "on_chain_end three",
      "on_chain_end LangGraph",
    ]);
    expect(events[0]?.run_id).toBe(rootRunId);
    expect(events.at(-1)).toMatchObject({ run_id: rootRunId, data: { output: { steps: ["one", "two", "three"] } } });
  });

  it("past the limit: one events.truncated marker, later events left out but the root's end", async () => {
    const recorded: GraphRunEvent[] = [];
    const rootRunId = randomUUID();
    await drain(await graphChunks(graph(), { steps: [] }, OPTIONS, rootRunId, { limit: 3, emit: (event) => recorded.push(event) }));
    expect(recorded.map((event) => (event.type === "events" ? `${(event.data as { event: string; name: string }).event} ${(event.data as { name: string }).name}` : event.type))).toEqual([
      "on_chain_start LangGraph",
      "on_chain_start one",
      "on_chain_end one",
      "events.truncated",
      "on_chain_end LangGraph",
    ]);
    expect(recorded[3]).toEqual({ type: "events.truncated", limit: 3 });
  });

  it("an event JSON cannot hold keeps its name and says why its data is missing; the graph still finishes", async () => {
    const recorded: GraphRunEvent[] = [];
    const chunks = await drain(await graphChunks(graph(true), { steps: [] }, OPTIONS, randomUUID(), { limit: 1_000, emit: (event) => recorded.push(event) }));
    expect(chunks.length).toBeGreaterThan(0);
    const last = recorded.at(-1) as { type: "events"; data: { event: string; name: string; data: { unserialisable?: string } } };
    expect(last.data).toMatchObject({ event: "on_chain_end", name: "LangGraph", data: { unserialisable: expect.stringContaining("BigInt") } });
    // every recorded event is plain JSON
    expect(JSON.parse(JSON.stringify(recorded))).toEqual(recorded);
  });
});
