import { describe, expect, it } from "vitest";

// The page's start form (input-form.js): fields from a graph's input schema, read and checked
// before anything is sent. A browser module without type declarations: imported by path.
interface Field {
  name: string;
  kind: string;
  required: boolean;
  folded: boolean;
  options: unknown[];
}
interface Form {
  fields: Field[];
  whole: boolean;
}
const formPath = "../../src/server/web/assets/input-form.js";
const { inputForm, readInput } = (await import(formPath)) as {
  inputForm: (schema: unknown) => Form;
  readInput: (form: Form, values: Map<string, string | boolean>) => { input: unknown; errors: { name: string; message: string }[] };
};

/** A Zod state `{topic: string, depth: number, tags?: string[], mode?: "fast"|"deep", draft?: boolean, extra?: {a: number}, note?: string|null}` as `/schemas` gives it. */
const TYPED = {
  type: "object",
  properties: {
    topic: { type: "string" },
    depth: { type: "number" },
    tags: { type: "array", items: { type: "string" } },
    mode: { type: "string", enum: ["fast", "deep"] },
    draft: { type: "boolean" },
    extra: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
    count: { type: "integer" },
  },
  required: ["topic", "depth"],
};
/** devmind's agent: an Annotation state, channel names only. */
const AGENT = { type: "object", properties: { messages: {}, run_start: {}, stop_reason: {}, usage: {} } };

describe("the page's start form", () => {
  it("gives each input property a field of its kind, required ones marked", () => {
    const form = inputForm(TYPED);
    expect(form.whole).toBe(false);
    expect(form.fields.map((field) => [field.name, field.kind, field.required])).toEqual([
      ["topic", "string", true],
      ["depth", "number", true],
      ["tags", "strings", false],
      ["mode", "enum", false],
      ["draft", "boolean", false],
      ["extra", "json", false],
      ["note", "string", false],
      ["count", "integer", false],
    ]);
    expect(form.fields.find((field) => field.name === "mode")?.options).toEqual(["fast", "deep"]);
  });

  it("reads the values into the input, leaving empty optional fields out", () => {
    const form = inputForm(TYPED);
    const values = new Map<string, string | boolean>([
      ["topic", " durable runs "],
      ["depth", "2.5"],
      ["tags", "a\n\n b \n"],
      ["mode", "deep"],
      ["draft", true],
      ["extra", '{"a": 1}'],
      ["note", ""],
      ["count", ""],
    ]);
    expect(readInput(form, values)).toEqual({ input: { topic: "durable runs", depth: 2.5, tags: ["a", "b"], mode: "deep", draft: true, extra: { a: 1 } }, errors: [] });
  });

  it("checks before sending: required, numbers, whole numbers, enums, JSON and objects", () => {
    const form = inputForm(TYPED);
    const values = new Map<string, string | boolean>([
      ["topic", ""],
      ["depth", "deep"],
      ["mode", "slow"],
      ["extra", "[1]"],
      ["count", "1.5"],
    ]);
    expect(readInput(form, values).errors).toEqual([
      { name: "topic", message: "topic is required." },
      { name: "depth", message: "depth must be a number." },
      { name: "mode", message: "mode must be one of fast, deep." },
      { name: "extra", message: "extra must be a JSON object." },
      { name: "count", message: "count must be a whole number." },
    ]);
    expect(readInput(form, new Map([["topic", "t"], ["depth", "1"], ["extra", "{oops"]])).errors).toEqual([{ name: "extra", message: "extra is not valid JSON." }]);
  });

  it("a conversation graph: the task box sends messages; its untyped channels are folded away and left out when empty", () => {
    const form = inputForm(AGENT);
    expect(form.fields.map((field) => [field.name, field.kind, field.required, field.folded])).toEqual([
      ["messages", "messages", true, false],
      ["run_start", "free", false, true],
      ["stop_reason", "free", false, true],
      ["usage", "free", false, true],
    ]);
    expect(readInput(form, new Map([["messages", "add 2 and 3"]]))).toEqual({ input: { messages: [{ role: "user", content: "add 2 and 3" }] }, errors: [] });
    expect(readInput(form, new Map()).errors).toEqual([{ name: "messages", message: "Write a task first." }]);
    // createAgent's schema names its messages channel's type
    expect(inputForm({ type: "object", properties: { messages: { langgraph_type: "messages" } } }).fields[0]?.kind).toBe("messages");
  });

  it("an untyped channel takes JSON or plain text", () => {
    const form = inputForm({ type: "object", properties: { topic: {}, depth: {} } });
    expect(readInput(form, new Map([["topic", "the report"], ["depth", "3"]]))).toEqual({ input: { topic: "the report", depth: 3 }, errors: [] });
  });

  it("no usable schema: one JSON editor for the whole input", () => {
    for (const schema of [null, undefined, {}, { properties: {} }, { properties: [] }, "x"]) expect(inputForm(schema)).toEqual({ fields: [], whole: true });
    const whole = inputForm(null);
    expect(readInput(whole, new Map([["", '{"a": [1]}']]))).toEqual({ input: { a: [1] }, errors: [] });
    expect(readInput(whole, new Map([["", "{not json"]])).errors).toEqual([{ name: "", message: "The input is not valid JSON." }]);
    expect(readInput(whole, new Map([["", " "]])).errors).toEqual([{ name: "", message: "Write the graph's input (JSON) first." }]);
  });
});
