import { describe, expect, it } from "vitest";
import { matchKey, presentedKey } from "../../src/server/auth.js";
import { formatCursor, formatPartId, parseCursor, parseStreamResume, STREAM_START } from "../../src/server/stream-cursor.js";
import { toWire } from "../../src/server/wire.js";
import { AIMessage, HumanMessage } from "@langchain/core/messages";

describe("stream cursor", () => {
  it("round-trips whole and partial positions", () => {
    expect(formatCursor(STREAM_START)).toBe("0-0-0");
    for (const cursor of [
      { seq: 12, values: 4, settled: 3 },
      { seq: 7, values: 2, settled: 2, partial: { kind: "v" as const, parts: 2 } },
      { seq: 9, values: 5, settled: 4, partial: { kind: "i" as const, parts: 1 } },
    ]) {
      expect(parseCursor(formatCursor(cursor))).toEqual(cursor);
    }
  });

  it("numbers parts 0, 1, … and reads a Last-Event-ID as the last part the client has (-1: none), or an older cursor id", () => {
    expect([0, 1, 12].map(formatPartId)).toEqual(["0", "1", "12"]);
    expect(parseStreamResume("0")).toEqual({ after: 0 });
    expect(parseStreamResume(" 41 ")).toEqual({ after: 41 });
    expect(parseStreamResume("-1")).toEqual({ after: -1 });
    expect(parseStreamResume("12-4-3-v2")).toEqual({ from: { seq: 12, values: 4, settled: 3, partial: { kind: "v", parts: 2 } } });
    for (const id of ["", "abc", "-2", "1.5", "1e3", "9".repeat(10), "1-2", "1-1-2", " 3 ; drop", undefined, null]) {
      expect(parseStreamResume(id)).toBeUndefined();
    }
  });

  it("treats anything it did not write as no cursor (the stream starts over)", () => {
    for (const id of ["-1", "", "abc", "1-2", "1-2-3-x1", "1-2-3-v", "99999999999-1-1", "9999999999-1-1", "1-1-2", "1-2-3 ; drop", undefined, null]) {
      expect(parseCursor(id)).toBeUndefined();
    }
  });
});

describe("API keys", () => {
  const entries = [
    { name: "alice", key: "k-alice" },
    { name: "bob", key: "k-bob" },
  ];

  it("reads x-api-key first, then Authorization: Bearer", () => {
    expect(presentedKey(new Headers({ "x-api-key": "a", authorization: "Bearer b" }))).toBe("a");
    expect(presentedKey(new Headers({ authorization: "bearer  b " }))).toBe("b");
    expect(presentedKey(new Headers({ authorization: "Basic b" }))).toBeUndefined();
    expect(presentedKey(new Headers({}))).toBeUndefined();
  });

  it("matches exact keys only", () => {
    expect(matchKey(entries, "k-bob")?.name).toBe("bob");
    expect(matchKey(entries, "k-bo")).toBeUndefined();
    expect(matchKey(entries, "k-bob ")).toBeUndefined();
    expect(matchKey([], "k-bob")).toBeUndefined();
  });
});

describe("wire values", () => {
  it("turns LangChain messages into LangGraph message dicts, anywhere in a value", () => {
    const wire = toWire({ messages: [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "", id: "a1", tool_calls: [{ id: "c1", name: "add", args: { a: 1 } }] })], n: 1 }) as {
      messages: Record<string, unknown>[];
      n: number;
    };
    expect(wire.n).toBe(1);
    expect(wire.messages[0]).toMatchObject({ type: "human", content: "hi", id: "h1" });
    expect(wire.messages[1]).toMatchObject({ type: "ai", id: "a1", tool_calls: [{ id: "c1", name: "add", args: { a: 1 } }] });
  });
});
