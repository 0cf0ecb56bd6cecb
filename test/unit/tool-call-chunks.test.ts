import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { concat } from "@langchain/core/utils/stream";
import { describe, expect, it } from "vitest";
import { uniformChunk } from "../../src/graph/identified-model.js";
import { ToolCallChunker } from "../../src/model/tool-call-chunks.js";
import { SentMessage } from "../../src/server/stream-messages.js";

describe("ToolCallChunker", () => {
  it("keeps streamed deltas, giving an id-less call one id on its first delta only", () => {
    const chunker = new ToolCallChunker("p");
    const first = chunker.chunksOf({ tool_call_chunks: [{ index: 0, name: "add", args: '{"a":' }] });
    const later = chunker.chunksOf({ tool_call_chunks: [{ index: 0, args: "1}" }] });
    const withId = chunker.chunksOf({ tool_call_chunks: [{ index: 1, id: "given", name: "add", args: "{}" }] });
    expect(first).toEqual([{ index: 0, id: "call_p_0", name: "add", args: '{"a":' }]);
    expect(later).toEqual([{ index: 0, args: "1}" }]);
    expect(withId).toEqual([{ index: 1, id: "given", name: "add", args: "{}" }]);
  });

  it("turns whole calls and unparsable ones into chunks, ids kept or given", () => {
    const chunker = new ToolCallChunker("p");
    expect(
      chunker.chunksOf({
        tool_calls: [
          { id: "c1", name: "add", args: { a: 1 } },
          { name: "add", args: { a: 2 } },
        ],
        invalid_tool_calls: [{ name: "add", args: "{oops" }],
      }),
    ).toEqual([
      { type: "tool_call_chunk", id: "c1", name: "add", args: '{"a":1}' },
      { type: "tool_call_chunk", id: "call_p_0", name: "add", args: '{"a":2}' },
      { type: "tool_call_chunk", id: "call_p_1", name: "add", args: "{oops" },
    ]);
  });
});

describe("uniformChunk", () => {
  it("a whole message (a model without native streaming) and deltas concatenate without losing a call", () => {
    const chunker = new ToolCallChunker("m");
    const whole = uniformChunk(new AIMessage({ content: "", tool_calls: [{ id: "w", name: "add", args: { a: 1 } }], invalid_tool_calls: [{ id: "bad", name: "add", args: "{nope", error: "x", type: "invalid_tool_call" }] }), chunker, "msg");
    const delta = uniformChunk(new AIMessageChunk({ content: "", tool_call_chunks: [{ index: 5, id: "d", name: "add", args: '{"a":2}' }] }), chunker, "msg");
    const joined = concat(whole, delta);
    expect(joined.id).toBe("msg");
    expect((joined.tool_calls ?? []).map((call) => [call.id, call.args])).toEqual([
      ["w", { a: 1 }],
      ["d", { a: 2 }],
    ]);
    expect((joined.invalid_tool_calls ?? []).map((call) => [call.id, call.args])).toEqual([["bad", "{nope"]]);
  });
});

describe("SentMessage of the messages stream", () => {
  it("a streamed whole message keeps its calls in the partial message, and they count as sent", () => {
    const sent = new SentMessage({});
    const dict = { type: "ai", id: "m1", content: "", tool_calls: [{ id: "w1", name: "add", args: { a: 1 }, type: "tool_call" }], tool_call_chunks: [] };
    sent.add(dict);
    const partial = sent.join(dict) as { tool_calls: { id: string }[] };
    expect(partial.tool_calls.map((call) => call.id)).toEqual(["w1"]);
    expect([...sent.calls]).toEqual(["w1"]);
  });
});
