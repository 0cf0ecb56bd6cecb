import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { argsDigest, canonicalJson } from "../../src/runtime/interrupts/digest.js";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: "x y" } })).toBe('{"a":{"c":"x y","d":[3,1]},"b":1}');
  });

  it("keeps array order and sorts keys of objects inside arrays", () => {
    expect(canonicalJson([{ z: 1, y: 2 }, 3, "a"])).toBe('[{"y":2,"z":1},3,"a"]');
  });

  it("follows JSON.stringify for undefined, functions, non-finite numbers and toJSON", () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: null, d: Number.NaN, e: new Date(0) })).toBe('{"c":null,"d":null,"e":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson([undefined, () => 1, Number.POSITIVE_INFINITY])).toBe("[null,null,null]");
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson(-0)).toBe("0");
  });

  it("escapes strings and keys like JSON", () => {
    expect(canonicalJson({ 'q"k': 'line\nbreak "quoted"', é: "ü" })).toBe('{"q\\"k":"line\\nbreak \\"quoted\\"","é":"ü"}');
  });

  it("refuses cycles and BigInt like JSON.stringify, but allows shared references", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson({ n: 10n })).toThrow(TypeError);
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
  });
});

describe("argsDigest", () => {
  it("is the sha256 hex of the canonical JSON", () => {
    expect(argsDigest({})).toBe(sha256("{}"));
    expect(argsDigest({ path: "a.txt", content: "hi" })).toBe(sha256('{"content":"hi","path":"a.txt"}'));
    expect(argsDigest({ path: "a.txt" })).toMatch(/^[0-9a-f]{64}$/);
  });

  it("gives the same digest for the same arguments in any key order, nested too", () => {
    const one = { path: "notes/a.txt", options: { mode: "append", flags: { sync: true, mkdir: false } }, lines: ["x", "y"] };
    const two = { lines: ["x", "y"], options: { flags: { mkdir: false, sync: true }, mode: "append" }, path: "notes/a.txt" };
    expect(argsDigest(two)).toBe(argsDigest(one));
    expect(argsDigest(JSON.parse(JSON.stringify(one)))).toBe(argsDigest(one));
  });

  it("differs when a value, an array order or the nesting differs", () => {
    const base = argsDigest({ a: [1, 2], b: { c: 1 } });
    expect(argsDigest({ a: [2, 1], b: { c: 1 } })).not.toBe(base);
    expect(argsDigest({ a: [1, 2], b: { c: 2 } })).not.toBe(base);
    expect(argsDigest({ a: [1, 2], b: { c: "1" } })).not.toBe(base);
    expect(argsDigest({ a: [1, 2], c: 1 })).not.toBe(base);
  });

  it("keeps the digests stored with existing decisions (pinned before canonicalJson moved to src/vocabulary)", () => {
    const args = { path: "notes/a.txt", content: 'héllo "world"\n', options: { mode: "append", flags: { sync: true, mkdir: false } }, lines: [3, 1.5, -0, null, "x"] };
    expect(canonicalJson(args)).toBe('{"content":"héllo \\"world\\"\\n","lines":[3,1.5,0,null,"x"],"options":{"flags":{"mkdir":false,"sync":true},"mode":"append"},"path":"notes/a.txt"}');
    expect(argsDigest(args)).toBe("c3baa23c2a3517bfef5e5e9bbdbd2526b66040b9636e1c43cf8ca88ba844e733");
    expect(argsDigest({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  });

  it("ignores properties that are undefined, as JSON does", () => {
    expect(argsDigest({ a: 1, b: undefined })).toBe(argsDigest({ a: 1 }));
  });
});
