import { describe, expect, it } from "vitest";
import { compileFilter, forgesFilteredKey, matchesFilter } from "../../src/server/custom-auth/auth-filter.js";
import { hasErrorCode } from "../../src/errors.js";

describe("auth handler filters (the official isAuthMatching semantics, as one JSON containment)", () => {
  it.each([
    ["no filter matches anything", { a: "x" }, undefined, true],
    ["an empty filter matches anything", { a: "x" }, {}, true],
    ["a missing key does not match", {}, { a: "x" }, false],
    ["equal strings match", { a: "foo", b: "bar" }, { a: "foo" }, true],
    ["different strings do not", { a: "foo" }, { a: "baz" }, false],
    ["$eq matches the value", { a: "foo" }, { a: { $eq: "foo" } }, true],
    ["$eq refuses another value", { a: "foo" }, { a: { $eq: "baz" } }, false],
    ["$contains a string in the array", { a: ["foo", "bar"] }, { a: { $contains: "bar" } }, true],
    ["$contains a string not in it", { a: ["foo", "bar"] }, { a: { $contains: "qux" } }, false],
    ["$contains on a non-array", { a: "bar" }, { a: { $contains: "bar" } }, false],
    ["$contains every value of a list", { a: ["foo", "bar", "baz"] }, { a: { $contains: ["bar", "baz"] } }, true],
    ["$contains a list not all present", { a: ["foo", "bar"] }, { a: { $contains: ["bar", "baz"] } }, false],
    ["every condition must hold", { a: "foo", c: ["baz"] }, { a: "foo", c: { $contains: "baz" } }, true],
    ["one failing condition fails", { a: "foo", c: ["baz"] }, { a: "other", c: { $contains: "baz" } }, false],
  ])("%s", (_name, metadata, filter, expected) => {
    const compiled = filter === undefined ? undefined : compileFilter(filter, "threads:read");
    expect(matchesFilter(metadata, compiled)).toBe(expected);
  });

  it("compiles to the containment object the SQL applies (`metadata @> filter`)", () => {
    expect(compileFilter({ owner: "alice", tier: { $eq: 2 }, tags: { $contains: "x" }, teams: { $contains: ["a", "b"] } }, "threads:read")).toEqual({ owner: "alice", tier: 2, tags: ["x"], teams: ["a", "b"] });
  });

  it.each([
    ["an unknown operator", { owner: { $gt: 1 } }],
    ["two operators", { owner: { $eq: "a", $contains: "a" } }],
    ["null", { owner: null }],
    ["a nested object", { owner: { name: "alice" } }],
    ["an array", { owner: ["alice"] }],
    ["$contains of objects", { tags: { $contains: [{ a: 1 }] } }],
    ["an array as the filter", ["owner"]],
  ])("refuses a malformed filter (%s): AUTH_HANDLER_FAILED, never a wider read", (_name, filter) => {
    let caught: unknown;
    try {
      compileFilter(filter as object, "threads:search");
    } catch (error) {
      caught = error;
    }
    expect(hasErrorCode(caught, "AUTH_HANDLER_FAILED")).toBe(true);
    expect((caught as Error).message).toMatch(/threads:search returned a malformed filter/);
  });

  it("a write forges a filtered key only when it sets it to another value", () => {
    const filter = compileFilter({ owner: "alice", teams: { $contains: "red" } }, "threads:create");
    expect(forgesFilteredKey({ owner: "bob" }, filter)).toBe(true);
    expect(forgesFilteredKey({ teams: ["blue"] }, filter)).toBe(true);
    expect(forgesFilteredKey({ owner: "alice", teams: ["red", "blue"] }, filter)).toBe(false);
    expect(forgesFilteredKey({ topic: "x" }, filter)).toBe(false);
    expect(forgesFilteredKey({ owner: "bob" }, undefined)).toBe(false);
  });
});
