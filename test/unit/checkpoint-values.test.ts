import { JsonPlusSerializer, compareChannelVersions, maxChannelVersion } from "@langchain/langgraph-checkpoint";
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { decodeValue, encodeMetadata, encodeValue } from "../../src/checkpoint/value-codec.js";
import { nextChannelVersion } from "../../src/checkpoint/versions.js";
import { sortWrites } from "../../src/checkpoint/tuple-rows.js";

const serde = new JsonPlusSerializer();

describe("channel versions", () => {
  it("increase the integer part and stay numbers", () => {
    const first = nextChannelVersion(undefined);
    const second = nextChannelVersion(first);
    expect(Math.floor(first)).toBe(1);
    expect(Math.floor(second)).toBe(2);
    expect(second).toBeGreaterThan(first);
    expect(compareChannelVersions(second, first)).toBe(1);
    expect(maxChannelVersion(first, second, 1)).toBe(second);
  });

  it("continue from integer versions written by other savers", () => {
    expect(Math.floor(nextChannelVersion(7))).toBe(8);
    expect(nextChannelVersion(7)).toBeGreaterThan(7);
  });

  it("differ between two branches forked from the same version", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i += 1) seen.add(nextChannelVersion(5));
    expect(seen.size).toBeGreaterThan(195);
    for (const version of seen) expect(Math.floor(version)).toBe(6);
  });
});

describe("value codec", () => {
  it("keeps JSON values as text and round-trips LangChain messages", async () => {
    const message = new AIMessage({ content: "hi", tool_calls: [{ id: "c1", name: "add", args: { a: 1 } }] });
    const encoded = await encodeValue(serde, [message]);
    expect(encoded.type).toBe("json");
    expect(encoded.bytes).toBeNull();
    expect(typeof encoded.json).toBe("string");
    const [decoded] = (await decodeValue(serde, encoded.type, encoded.json, encoded.bytes)) as AIMessage[];
    expect(decoded).toBeInstanceOf(AIMessage);
    expect(decoded?.tool_calls?.[0]?.id).toBe("c1");
  });

  it("keeps binary values as bytes", async () => {
    const bytes = new Uint8Array([0, 255, 1, 2]);
    const encoded = await encodeValue(serde, bytes);
    expect(encoded).toEqual({ type: "bytes", json: null, bytes });
    expect(await decodeValue(serde, "bytes", null, encoded.bytes)).toEqual(bytes);
  });

  it("stores JSON containing NUL characters (escaped) as text", async () => {
    const encoded = await encodeValue(serde, { s: "a\u0000b" });
    expect(encoded.json).toContain("\\u0000");
    expect(await decodeValue(serde, "json", encoded.json, null)).toEqual({ s: "a\u0000b" });
  });

  it("falls back to bytes when a custom serde emits invalid UTF-8 as json", async () => {
    const custom = { dumpsTyped: async () => ["json", new Uint8Array([0xff, 0xfe])] as [string, Uint8Array], loadsTyped: async (_t: string, d: unknown) => d };
    const encoded = await encodeValue(custom, {});
    expect(encoded.json).toBeNull();
    expect(encoded.bytes).toEqual(new Uint8Array([0xff, 0xfe]));
  });

  it("drops NUL escapes from metadata (jsonb cannot hold them) but keeps escaped backslashes", async () => {
    const text = await encodeMetadata(serde, { a: "x\u0000\u0000y", b: "back\\u0000slash" });
    expect(JSON.parse(text)).toEqual({ a: "xy", b: "back\\u0000slash" });
  });
});

describe("pending write order", () => {
  it("sorts by task path, then task id, then idx, by code point", () => {
    const writes = [
      { taskPath: "~b", taskId: "1", idx: 0 },
      { taskPath: "", taskId: "z", idx: 1 },
      { taskPath: "~a", taskId: "9", idx: 1 },
      { taskPath: "~a", taskId: "9", idx: -1 },
      { taskPath: "", taskId: "z", idx: 0 },
      { taskPath: "~a", taskId: "10", idx: 0 },
    ];
    expect(sortWrites(writes).map((w) => `${w.taskPath}|${w.taskId}|${w.idx}`)).toEqual([
      "|z|0",
      "|z|1",
      "~a|10|0",
      "~a|9|-1",
      "~a|9|1",
      "~b|1|0",
    ]);
  });
});

describe("limits from the configuration", () => {
  it("takes every limit of CONTRACT section 2, model timeout and retries included", async () => {
    const { loadConfig } = await import("../../src/config.js");
    const { limitsFromConfig } = await import("../../src/vocabulary/limits.js");
    const config = loadConfig({ DEVMIND_MAX_MODEL_ROUNDS: "3", DEVMIND_MODEL_TIMEOUT_MS: "1234", DEVMIND_MODEL_MAX_RETRIES: "0", DEVMIND_CONTEXT_TOKENS: "999" });
    expect(limitsFromConfig(config)).toMatchObject({ maxModelRounds: 3, modelTimeoutMs: 1234, modelMaxRetries: 0, contextTokens: 999, maxToolCalls: 16 });
  });
});
