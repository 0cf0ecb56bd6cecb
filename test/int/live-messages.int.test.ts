/**
 * The live message channel on a real database: chunks reach a listener in order, each as it was
 * published (those that pile up while one is being sent go in one notification), with their
 * index in the message and LangGraph's metadata on the first; one larger than PostgreSQL's NOTIFY
 * payload limit arrives whole.
 */
import { AIMessageChunk } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { LiveMessagePublisher, subscribeLiveMessages, type LiveMessageChunk } from "../../src/runtime/events/live-messages.js";
import { listenRun, type LiveSignal } from "../../src/runtime/events/live-follow.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

describe.each(BACKENDS)("live message chunks on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });

  it("delivers a run's chunks in order and one by one, a large one in parts joined back exactly", async () => {
    const runId = "0d4c2a39-6b0e-4a57-9d6f-1f0b8f6c9a11";
    const got: LiveMessageChunk[] = [];
    const others: LiveMessageChunk[] = [];
    const stop = await subscribeLiveMessages(db, runId.toUpperCase(), (chunk) => got.push(chunk));
    const stopOther = await subscribeLiveMessages(db, "8f1e6a52-3c1d-4f1e-bb7a-2d9c3e4f5a60", (chunk) => others.push(chunk));
    const publisher = new LiveMessagePublisher(db);
    const metadata = { langgraph_node: "writer", langgraph_step: 1, langgraph_checkpoint_ns: "writer:task-1" };
    // 30 000 characters with quotes, control characters and surrogate pairs: far past 8000 bytes once escaped
    const large = `"\n${"é😀\u0001".repeat(7_500)}"`;
    try {
      publisher.publish(runId, [], new AIMessageChunk({ id: "msg-1", content: "Once " }), metadata);
      // queued while the first is in flight: sent together, delivered one by one
      publisher.publish(runId, [], new AIMessageChunk({ id: "msg-1", content: "upon " }), metadata);
      publisher.publish(runId, [], new AIMessageChunk({ id: "msg-1", content: "a time" }), metadata);
      await waitUntil("the first chunks arrived", () => got.map((chunk) => chunk.chunk["content"]).join("") === "Once upon a time", 10_000);
      publisher.publish(runId, ["sub:task-2"], new AIMessageChunk({ id: "msg-2", content: large, tool_call_chunks: [{ type: "tool_call_chunk", id: "call-1", name: "look", args: '{"q":', index: 0 }] }), { ...metadata, langgraph_checkpoint_ns: "sub:task-2|inner:task-3" });
      await waitUntil("the large chunk arrived", () => got.some((chunk) => chunk.message_id === "msg-2"), 10_000);
    } finally {
      publisher.finish(runId);
      await stop();
      await stopOther();
    }
    expect(got.map((chunk) => [chunk.message_id, chunk.index, chunk.chunk["content"] === large ? "large" : chunk.chunk["content"]])).toEqual([
      ["msg-1", 0, "Once "],
      ["msg-1", 1, "upon "],
      ["msg-1", 2, "a time"],
      ["msg-2", 0, "large"],
    ]);
    expect(got.every((chunk) => chunk.run_id === runId && chunk.type === "message.chunk")).toBe(true);
    // LangGraph's metadata on a message's first chunk only
    expect(got.map((chunk) => chunk.metadata?.["langgraph_checkpoint_ns"])).toEqual(["writer:task-1", undefined, undefined, "sub:task-2|inner:task-3"]);
    expect(got[3]?.ns).toEqual(["sub:task-2"]);
    expect(got[3]?.chunk).toMatchObject({ type: "ai", id: "msg-2", tool_call_chunks: [{ id: "call-1", name: "look", args: '{"q":', index: 0 }] });
    expect(others).toEqual([]);
  });

  it("a listener of the executing process that subscribes after the run began streaming gets the chunks sent so far first, then the live ones, each once", async () => {
    const runId = "5b7e1c2d-9a3f-4e8b-a1c2-3d4e5f6a7b8c";
    const publisher = new LiveMessagePublisher(db);
    const metadata = { langgraph_node: "agent", langgraph_step: 1 };
    const got: LiveSignal[] = [];
    let stop: (() => Promise<void>) | undefined;
    try {
      publisher.publish(runId, [], new AIMessageChunk({ id: "m", content: "b" }), metadata);
      publisher.publish(runId, [], new AIMessageChunk({ id: "m", content: "e" }), metadata);
      await waitUntil("the first chunks were sent", () => publisher.sentSoFar(runId).length === 2, 10_000);
      // the stream of a run opened right after its create: the model already streamed
      stop = await listenRun(db, runId, (signal) => got.push(signal), { events: false, deltas: false, messages: true }, (key) => publisher.sentSoFar(key));
      publisher.publish(runId, [], new AIMessageChunk({ id: "m", content: "gin" }), metadata);
      await waitUntil("the live chunk arrived", () => got.length === 3, 10_000);
      // nothing more comes (no chunk twice)
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      publisher.finish(runId);
      await stop?.();
    }
    const chunks = got.filter((signal): signal is LiveMessageChunk => signal.type === "message.chunk");
    expect(chunks.map((chunk) => [chunk.index, chunk.chunk["content"]])).toEqual([
      [0, "b"],
      [1, "e"],
      [2, "gin"],
    ]);
    expect(chunks[0]?.metadata).toMatchObject(metadata);
    // forgotten once the run's attempt ended here
    expect(publisher.sentSoFar(runId)).toEqual([]);
  });
});
