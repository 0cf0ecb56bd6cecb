import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { concat } from "@langchain/core/utils/stream";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DevmindError, ModelError } from "../../src/errors.js";
import { classifyModelError } from "../../src/model/model-errors.js";
import { loadScriptFile, ScriptedChatModel, type ScriptedTurn } from "../../src/model/scripted-model.js";

const human = (text: string) => new HumanMessage(text);

/** Streams one call and returns the chunks and their concatenation. */
async function streamed(model: ScriptedChatModel, messages: BaseMessage[], options: { signal?: AbortSignal } = {}) {
  const chunks: AIMessageChunk[] = [];
  for await (const chunk of await model.stream(messages, options)) chunks.push(chunk);
  const merged = chunks.reduce((all, chunk) => concat(all, chunk));
  return { chunks, merged };
}

/** Runs `fn`, expecting a DevmindError, and returns it. */
async function rejection(fn: () => unknown): Promise<DevmindError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DevmindError);
    return error as DevmindError;
  }
  throw new Error("expected a rejection");
}

function scriptError(turns: unknown): ModelError {
  try {
    new ScriptedChatModel(turns as ScriptedTurn[]);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).code).toBe("SCRIPT_INVALID");
    return error as ModelError;
  }
  throw new Error("expected SCRIPT_INVALID");
}

describe("ScriptedChatModel turns", () => {
  it("answers a content turn with stop and no usage unless scripted", async () => {
    const model = new ScriptedChatModel([{ content: "hello there" }]);
    const message = await model.invoke([human("hi")]);
    expect(message.content).toBe("hello there");
    expect(message.tool_calls).toEqual([]);
    expect(message.invalid_tool_calls).toEqual([]);
    expect(message.response_metadata.finish_reason).toBe("stop");
    expect(message.usage_metadata).toBeUndefined();
  });

  it("reports usage with total_tokens and a scripted finish_reason", async () => {
    const model = new ScriptedChatModel([{ content: "cut", usage: { input_tokens: 12, output_tokens: 30 }, finish_reason: "length" }]);
    const message = await model.invoke([human("hi")]);
    expect(message.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 30, total_tokens: 42 });
    expect(message.response_metadata.finish_reason).toBe("length");
  });

  it("answers a tool_calls turn with default ids call_<turn>_<i>, explicit ids, args and content", async () => {
    const model = new ScriptedChatModel([
      { content: "first" },
      {
        content: "let me add",
        tool_calls: [
          { name: "add", args: { a: 1, b: 2 } },
          { id: "mine", name: "get_current_time", args: { timezone: "UTC" } },
          { name: "add", args_json: '{"a": 5, "b": 6}' },
        ],
      },
    ]);
    const message = await model.invoke([human("hi"), new AIMessage("first"), human("again")]);
    expect(message.content).toBe("let me add");
    expect(message.tool_calls).toEqual([
      { type: "tool_call", id: "call_1_0", name: "add", args: { a: 1, b: 2 } },
      { type: "tool_call", id: "mine", name: "get_current_time", args: { timezone: "UTC" } },
      { type: "tool_call", id: "call_1_2", name: "add", args: { a: 5, b: 6 } },
    ]);
    expect(message.response_metadata.finish_reason).toBe("tool_calls");
  });

  it("puts unparsable args_json into invalid_tool_calls with the raw text and an error", async () => {
    const model = new ScriptedChatModel([
      {
        tool_calls: [
          { name: "add", args: { a: 1, b: 2 } },
          { name: "add", args_json: "{not json" },
          { name: "add", args_json: "[1, 2]" },
        ],
      },
    ]);
    const message = await model.invoke([human("hi")]);
    expect(message.tool_calls?.map((call) => call.id)).toEqual(["call_0_0"]);
    expect(message.invalid_tool_calls).toHaveLength(2);
    expect(message.invalid_tool_calls?.[0]).toMatchObject({ id: "call_0_1", name: "add", args: "{not json" });
    expect(message.invalid_tool_calls?.[0]?.error).toEqual(expect.any(String));
    expect(message.invalid_tool_calls?.[1]).toMatchObject({ id: "call_0_2", name: "add", args: "[1, 2]" });
  });

  it("fails an error turn with MODEL_FAILED and the scripted message", async () => {
    const model = new ScriptedChatModel([{ error: "upstream exploded" }]);
    const error = await rejection(() => model.invoke([human("hi")]));
    expect(error.code).toBe("MODEL_FAILED");
    expect(error.message).toBe("upstream exploded");
    expect(classifyModelError(error)).toEqual({ code: "MODEL_FAILED", message: "upstream exploded" });
  });

  it("fails past the end of the script with a message naming the turn and the script length", async () => {
    const model = new ScriptedChatModel([{ content: "only" }]);
    const error = await rejection(() => model.invoke([human("hi"), new AIMessage("only"), human("more")]));
    expect(error.code).toBe("SCRIPT_EXHAUSTED");
    expect(error.message).toContain("the script has no turn for answer 1 (1 turns, 1 answers)");
    expect(model.calls).toHaveLength(1);
    expect(classifyModelError(error).code).toBe("MODEL_FAILED");
  });

  it("reads error turns as failed attempts: a retry at the same position gets the next turn", async () => {
    const model = new ScriptedChatModel([{ error: "rate limited", status: 429 }, { error: "overloaded", status: 503 }, { content: "finally" }, { content: "second answer" }]);
    const first = await rejection(() => model.invoke([human("hi")]));
    expect(first.message).toBe("rate limited");
    expect((first as unknown as { status: number }).status).toBe(429);
    const second = await rejection(() => model.invoke([human("hi")]));
    expect((second as unknown as { status: number }).status).toBe(503);
    expect((await model.invoke([human("hi")])).content).toBe("finally");
    // the answer repeats for further attempts at that position; the next position is the next answer
    expect((await model.invoke([human("hi")])).content).toBe("finally");
    expect((await model.invoke([human("hi"), new AIMessage("finally"), human("more")])).content).toBe("second answer");
    expect(model.calls.map((c) => c.turn)).toEqual([0, 1, 2, 2, 3]);
  });

  it("keeps a final error without status repeating (a permanent failure)", async () => {
    const model = new ScriptedChatModel([{ error: "boom" }]);
    for (let i = 0; i < 3; i += 1) {
      const error = await rejection(() => model.invoke([human("hi")]));
      expect(error.message).toBe("boom");
      expect((error as unknown as { status?: number }).status).toBeUndefined();
    }
  });

  it("refuses an error status outside 400..599", () => {
    expect(() => new ScriptedChatModel([{ error: "x", status: 200 } as ScriptedTurn])).toThrow(/status/);
  });
});

describe("ScriptedChatModel determinism and call log", () => {
  const script: ScriptedTurn[] = [
    { tool_calls: [{ name: "add", args: { a: 1, b: 2 } }] },
    { content: "the sum is 3" },
  ];
  const history = [
    human("add 1 and 2"),
    new AIMessage({ content: "", tool_calls: [{ id: "call_0_0", name: "add", args: { a: 1, b: 2 } }] }),
    new ToolMessage({ tool_call_id: "call_0_0", content: '{"ok":true}' }),
  ];

  it("picks the turn by the number of AI messages, so a fresh instance (a new process) continues the script", async () => {
    const resumed = new ScriptedChatModel(script);
    const answer = await resumed.invoke(history);
    expect(answer.content).toBe("the sum is 3");
    // the same input always gets the same turn
    expect((await resumed.invoke(history)).content).toBe("the sum is 3");
    expect((await resumed.invoke(history.slice(0, 1))).tool_calls?.[0]?.id).toBe("call_0_0");
    expect(resumed.calls.map((call) => call.turn)).toEqual([1, 1, 0]);
  });

  it("counts AI message chunks as AI messages", async () => {
    const model = new ScriptedChatModel(script);
    const answer = await model.invoke([human("x"), new AIMessageChunk("partial"), human("y")]);
    expect(answer.content).toBe("the sum is 3");
  });

  it("records every call with its input messages and bound tool names, shared with bindTools models", async () => {
    const model = new ScriptedChatModel([...script, { error: "boom" }]);
    const addTool = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
      name: "add",
      description: "adds",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    const openAiFormat = { type: "function", function: { name: "get_current_time", description: "now", parameters: { type: "object", properties: {} } } };
    const bound = model.bindTools([addTool, openAiFormat]);
    expect(bound).toBeInstanceOf(ScriptedChatModel);
    await bound.invoke(history.slice(0, 1));
    await model.invoke(history);
    await expect(bound.invoke([...history, new AIMessage("the sum is 3"), human("and?")])).rejects.toThrow("boom");
    expect(model.calls).toHaveLength(3);
    expect((bound as ScriptedChatModel).calls).toBe(model.calls);
    expect(model.calls.map((call) => ({ turn: call.turn, tools: call.tools, count: call.messages.length }))).toEqual([
      { turn: 0, tools: ["add", "get_current_time"], count: 1 },
      { turn: 1, tools: [], count: 3 },
      { turn: 2, tools: ["add", "get_current_time"], count: 5 },
    ]);
    expect(model.calls[1]?.messages[2]).toBe(history[2]);
  });
});

describe("ScriptedChatModel streaming", () => {
  const turns: ScriptedTurn[] = [
    { content: "streamed content in several pieces", usage: { input_tokens: 5, output_tokens: 7 } },
    {
      content: "calling",
      tool_calls: [
        { name: "add", args: { a: 1, b: 2 } },
        { id: "bad", name: "add", args_json: "{oops" },
      ],
      usage: { input_tokens: 9, output_tokens: 3 },
    },
    { tool_calls: [{ name: "read_file", args: { path: "a.txt" } }], finish_reason: "length" },
    { content: "" },
  ];
  const inputs = [0, 1, 2, 3].map((n) => [human("start"), ...Array.from({ length: n }, () => new AIMessage("x"))]);

  it("streams content in several chunks, then a chunk with tool_call_chunks", async () => {
    const model = new ScriptedChatModel(turns);
    const { chunks } = await streamed(model, inputs[1] as BaseMessage[]);
    const texts = chunks.map((chunk) => chunk.content);
    expect(texts.filter((text) => text !== "").length).toBeGreaterThan(1);
    expect(texts.join("")).toBe("calling");
    const last = chunks.at(-1) as AIMessageChunk;
    expect(last.tool_call_chunks?.map((c) => ({ id: c.id, name: c.name, args: c.args, index: c.index }))).toEqual([
      { id: "call_1_0", name: "add", args: '{"a":1,"b":2}', index: 0 },
      { id: "bad", name: "add", args: "{oops", index: 1 },
    ]);
  });

  it("gives the same tool_calls, invalid_tool_calls, usage and finish_reason as invoke", async () => {
    for (const [index, input] of inputs.entries()) {
      const model = new ScriptedChatModel(turns);
      const generated = await model.invoke(input);
      const { merged } = await streamed(model, input);
      const label = `turn ${index}`;
      expect(merged.content, label).toEqual(generated.content);
      expect(merged.tool_calls, label).toEqual(generated.tool_calls);
      expect(merged.invalid_tool_calls, label).toEqual(generated.invalid_tool_calls);
      expect(merged.usage_metadata, label).toEqual(generated.usage_metadata);
      expect(merged.response_metadata.finish_reason, label).toBe(generated.response_metadata.finish_reason);
    }
  });

  it("surfaces token deltas to streaming callbacks during invoke", async () => {
    const model = new ScriptedChatModel(turns);
    const tokens: string[] = [];
    // LangGraph's "messages" stream mode uses a handler like this one
    class TokenHandler extends BaseCallbackHandler {
      name = "tokens";
      lc_prefer_streaming = true;
      override handleLLMNewToken(token: string): void {
        tokens.push(token);
      }
    }
    await model.invoke(inputs[0] as BaseMessage[], { callbacks: [new TokenHandler()] });
    expect(tokens.filter((t) => t !== "").length).toBeGreaterThan(1);
    expect(tokens.join("")).toBe("streamed content in several pieces");
  });
});

describe("ScriptedChatModel delay_ms", () => {
  it("waits delay_ms before answering", async () => {
    const model = new ScriptedChatModel([{ content: "late", delay_ms: 60 }]);
    const started = performance.now();
    await model.invoke([human("hi")]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
  });

  it("rejects promptly when the call's signal is aborted (cancel)", async () => {
    const model = new ScriptedChatModel([{ content: "never", delay_ms: 20_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = performance.now();
    const error = await model.invoke([human("hi")], { signal: controller.signal }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(classifyModelError(error, { signal: controller.signal }).code).toBe("MODEL_CANCELLED");
    expect(classifyModelError(error).code).toBe("MODEL_CANCELLED");
  }, 5_000);

  it("rejects promptly with a timeout when a timeout signal fires, while streaming too", async () => {
    const model = new ScriptedChatModel([{ content: "never", delay_ms: 20_000 }]);
    const signal = AbortSignal.timeout(40);
    const started = performance.now();
    const error = await streamed(model, [human("hi")], { signal }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(classifyModelError(error).code).toBe("MODEL_TIMEOUT");
  }, 5_000);
});

describe("ScriptedChatModel script validation", () => {
  it("rejects a script that is not an array", () => {
    expect(scriptError({ content: "x" }).message).toContain("expected a JSON array of turns");
  });

  it("names the turn index and the problem", () => {
    const cases: [unknown[], string][] = [
      [[{ content: "ok" }, "text"], "turn 1: expected an object, got a string"],
      [[{ contnet: "typo" }], 'turn 0: expected "content", "tool_calls" or "error"'],
      [[{ content: 42 }], "turn 0: content: expected string"],
      [[{ content: "x", colour: "red" }], 'turn 0: unknown key "colour"'],
      [[{ tool_calls: [] }], "turn 0: tool_calls: expected at least one tool call"],
      [[{ tool_calls: [{ args: {} }] }], "turn 0: tool_calls[0].name: expected string"],
      [[{ tool_calls: [{ name: "add" }] }], 'turn 0: tool_calls[0]: expected exactly one of "args"'],
      [[{ tool_calls: [{ name: "add", args: {}, args_json: "{}" }] }], 'turn 0: tool_calls[0]: expected exactly one of "args"'],
      [[{ tool_calls: [{ name: "add", args: [1, 2] }] }], "turn 0: tool_calls[0].args: expected an object"],
      [[{ tool_calls: [{ name: "add", args_json: {} }] }], "turn 0: tool_calls[0].args_json: expected string"],
      [[{ content: "x", delay_ms: -1 }], "turn 0: delay_ms:"],
      [[{ content: "x", usage: { input_tokens: 1 } }], "turn 0: usage.output_tokens: expected number"],
      [[{ error: "x", content: "y" }], 'turn 0: an error turn cannot also have "content" or "tool_calls"'],
      [[{ error: "x", usage: { input_tokens: 1, output_tokens: 1 } }], 'turn 0: unknown key "usage"'],
      [
        [{ tool_calls: [{ id: "same", name: "a", args: {} }] }, { tool_calls: [{ id: "same", name: "b", args: {} }] }],
        'turn 1: tool_calls[0].id: duplicate tool call id "same" (first used in turn 0)',
      ],
    ];
    for (const [turns, expected] of cases) expect(scriptError(turns).message, JSON.stringify(turns)).toContain(expected);
  });

  it("lists every problem at once, with structured details", () => {
    const error = scriptError([{ content: 1 }, { content: "fine" }, { error: "" }]);
    const problems = error.details.problems as { turn: number }[];
    expect(problems.map((p) => p.turn)).toEqual([0, 2]);
    expect(error.message).toContain("(2 problems)");
  });
});

describe("loadScriptFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "devmind-script-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("loads a valid script", async () => {
    const path = file("ok.json", JSON.stringify([{ tool_calls: [{ name: "add", args: { a: 1, b: 2 } }] }, { content: "3" }]));
    const model = new ScriptedChatModel(loadScriptFile(path));
    expect((await model.invoke([human("x")])).tool_calls?.[0]?.name).toBe("add");
  });

  it("says when the file is missing", () => {
    const path = join(dir, "nope.json");
    expect(() => loadScriptFile(path)).toThrow(`Scripted model file ${path} not found`);
  });

  it("gives the line and column of a JSON syntax error", () => {
    const path = file("bad.json", '[\n  {"content": "a"},\n  {"content": }\n]');
    let error: ModelError | undefined;
    try {
      loadScriptFile(path);
    } catch (e) {
      error = e as ModelError;
    }
    expect(error?.code).toBe("SCRIPT_INVALID");
    expect(error?.message).toContain(`${path} is not valid JSON`);
    expect(error?.message).toContain('expected a JSON value, found "}" at line 3, column 15');
    expect(error?.details).toMatchObject({ line: 3, column: 15 });
  });

  it("locates other JSON mistakes too", () => {
    const cases: [string, string][] = [
      ['[{"content": "a"},]', 'expected a JSON value, found "]" at line 1, column 19'],
      ["[{'content': 'a'}]", "expected a property name in double quotes, found \"'\" at line 1, column 3"],
      ['[{"content": "a"}', "expected ',' or ']', found end of input at line 1, column 18"],
      ['[{"content": "a"}] x', 'expected end of input, found "x" at line 1, column 20'],
    ];
    for (const [text, expected] of cases) expect(() => loadScriptFile(file("case.json", text)), text).toThrow(expected);
  });

  it("names the file and the turn for schema errors", () => {
    const path = file("schema.json", JSON.stringify([{ content: "a" }, { tool_calls: [{ name: "x", args: "nope" }] }]));
    expect(() => loadScriptFile(path)).toThrow(new RegExp(`in ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[\\s\\S]*turn 1: tool_calls\\[0\\]\\.args: expected an object`));
  });
});
