import { describe, expect, it } from "vitest";
import { indexTexts, textsAtPath, tokenizePath } from "../../src/store/index-text.js";
import { filterConditions } from "../../src/store/store-filter.js";
import { namespacePattern } from "../../src/store/store-sql.js";

describe("index paths (LangGraph's field syntax)", () => {
  const doc = { title: "T", n: 3, flag: true, meta: { a: "x", b: { c: "deep" } }, list: [{ t: "one" }, { t: "two" }], tags: ["p", "q"] };

  it("tokenizes dotted, indexed and multi-field paths", () => {
    expect(tokenizePath("a.b[*].{c,d.e}")).toEqual(["a", "b", "[*]", "{c,d.e}"]);
    expect(tokenizePath("list[-1].t")).toEqual(["list", "[-1]", "t"]);
  });

  it("extracts texts: fields, nesting, [*], [n], [-1], *, {a,b}, $", () => {
    expect(textsAtPath(doc, "title")).toEqual(["T"]);
    expect(textsAtPath(doc, "n")).toEqual(["3"]);
    expect(textsAtPath(doc, "meta.b.c")).toEqual(["deep"]);
    expect(textsAtPath(doc, "list[*].t")).toEqual(["one", "two"]);
    expect(textsAtPath(doc, "list[0].t")).toEqual(["one"]);
    expect(textsAtPath(doc, "list[-1].t")).toEqual(["two"]);
    expect(textsAtPath(doc, "list[5].t")).toEqual([]);
    expect(textsAtPath(doc, "tags[*]")).toEqual(["p", "q"]);
    expect(textsAtPath(doc, "meta.*")).toEqual(["x", JSON.stringify({ c: "deep" }, null, 2)]);
    expect(textsAtPath(doc, "meta.{a,b.c}")).toEqual(["x", "deep"]);
    expect(textsAtPath(doc, "missing.path")).toEqual([]);
    expect(textsAtPath(doc, "$")).toEqual([JSON.stringify(doc, null, 2)]);
  });

  it("numbers the texts of a field with several", () => {
    expect(indexTexts(doc, ["title", "list[*].t", "nope"])).toEqual([
      ["title", "T"],
      ["list[*].t.0", "one"],
      ["list[*].t.1", "two"],
    ]);
  });
});

describe("namespace match patterns", () => {
  const matches = (pattern: string, path: string): boolean => new RegExp(pattern).test(path);

  it("match whole labels at the start or the end, * being any one label", () => {
    expect(matches(namespacePattern("prefix", ["a", "b"]), "a.b")).toBe(true);
    expect(matches(namespacePattern("prefix", ["a", "b"]), "a.b.c")).toBe(true);
    expect(matches(namespacePattern("prefix", ["a", "b"]), "a.bc")).toBe(false);
    expect(matches(namespacePattern("prefix", ["a", "*", "c"]), "a.x.c.d")).toBe(true);
    expect(matches(namespacePattern("prefix", ["a", "*", "c"]), "a.c")).toBe(false);
    expect(matches(namespacePattern("suffix", ["b", "c"]), "a.b.c")).toBe(true);
    expect(matches(namespacePattern("suffix", ["b", "c"]), "a.xb.c")).toBe(false);
    expect(matches(namespacePattern("suffix", ["*", "c"]), "c")).toBe(false);
  });

  it("treat regex characters in labels literally", () => {
    expect(matches(namespacePattern("prefix", ["a+", "(b)"]), "a+.(b)")).toBe(true);
    expect(matches(namespacePattern("prefix", ["a+"]), "aa")).toBe(false);
    expect(matches(namespacePattern("suffix", ["$x", "[y]"]), "q.$x.[y]")).toBe(true);
  });
});

describe("search filters", () => {
  it("turn values and operators into conditions, refusing non-numeric bounds for comparisons", () => {
    expect(filterConditions({ a: "x", b: { $gt: 2, $lte: "5" }, c: { $in: [1, 2] }, d: { $nin: "no" }, e: { $gt: "abc" }, f: {} })).toEqual([
      { op: "has", object: '{"a":"x"}' },
      { op: "gt", key: "b", number: 2 },
      { op: "lte", key: "b", number: 5 },
      { op: "in", key: "c", json: "[1,2]" },
      { op: "false" },
    ]);
    expect(filterConditions({ nested: { x: 1, $gt: 2 } })).toEqual([{ op: "eq", key: "nested", json: '{"x":1,"$gt":2}' }]);
    expect(filterConditions(undefined)).toEqual([]);
  });
});
