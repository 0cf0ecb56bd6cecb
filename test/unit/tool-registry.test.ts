import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { Command, GraphInterrupt, ParentCommand } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOL_LIMITS } from "../../src/constants.js";
import { DevmindError, RunCancelledError, ToolDefinitionError } from "../../src/errors.js";
import { defineTool, type Tool } from "../../src/tools/define-tool.js";
import { canonicalJson } from "../../src/vocabulary/canonical-json.js";
import { canonicalToolCallKey, failureResult, toolMessageContent, ToolRegistry, type ToolRegistryOptions } from "../../src/tools/registry.js";
import { ToolFailure } from "../../src/tools/tool-failure.js";
import type { ToolContext, ToolResult, ToolSpec } from "../../src/tools/types.js";

const addSchema = z.object({ a: z.number(), b: z.number() });

/** A tool with sensible metadata; `overrides` replace any field. */
function tool<S extends z.ZodType = typeof addSchema>(overrides: Partial<ToolSpec<S>> & { name?: string } = {}): Tool<S> {
  return defineTool({
    name: "add",
    description: "Add two numbers.",
    schema: addSchema as unknown as S,
    sideEffect: "none",
    approval: false,
    idempotent: true,
    execute: async (args: z.infer<S>) => ({ sum: (args as { a: number }).a + (args as { b: number }).b }),
    ...overrides,
  } as ToolSpec<S>);
}

/** A tool named `name` whose execute is `execute` and whose schema accepts anything object-like. */
function runner(name: string, execute: (args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>, extra: Partial<ToolSpec> = {}): Tool {
  return defineTool({ name, description: `${name} tool`, schema: z.object({}), sideEffect: "none", approval: false, idempotent: true, execute, ...extra });
}

function registry(tools: Tool[], options: Partial<ToolRegistryOptions> = {}): ToolRegistry {
  return new ToolRegistry(tools, { workspace: "/workspace", defaultTimeoutMs: 1_000, maxOutputChars: 1_000, ...options });
}

function call(name: string, args: unknown = {}, id = "call_1") {
  return { id, name, args: args as Record<string, unknown> };
}

function failure(result: ToolResult): { code: string; message: string } {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error("unreachable");
  return result.error;
}

describe("defineTool", () => {
  it("returns a frozen tool with its input JSON Schema", () => {
    const defined = tool();
    expect(Object.isFrozen(defined)).toBe(true);
    expect(defined.parameters).toEqual({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] });
    expect(() => {
      (defined as { name: string }).name = "other";
    }).toThrow(TypeError);
  });

  it.each(["", "has space", "a".repeat(65), "ünïcode", "dot.ted", "slash/name"])("rejects the name %j", (name) => {
    expect(() => tool({ name })).toThrow(ToolDefinitionError);
  });

  it("accepts names of letters, digits, _ and - up to 64 chars", () => {
    expect(tool({ name: `a-b_C9${"x".repeat(58)}` }).name).toHaveLength(64);
  });

  it("rejects a schema that is not a zod object", () => {
    const error = captureSync(() => tool({ schema: z.string() as never }));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect((error as DevmindError).code).toBe("TOOL_DEFINITION_INVALID");
    expect((error as Error).message).toBe("tool add: schema must be a zod object (z.object({...}))");
  });

  it("rejects a schema with no JSON Schema form", () => {
    expect(() => tool({ schema: z.object({ when: z.date() }) as never })).toThrow(/no JSON Schema form/);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])("rejects timeoutMs %s", (timeoutMs) => {
    expect(() => tool({ timeoutMs })).toThrow(/timeoutMs must be a positive integer/);
  });

  it("rejects a bad sideEffect, approval, idempotent, description and maxOutputChars", () => {
    expect(() => tool({ sideEffect: "remote" as never })).toThrow(/sideEffect/);
    expect(() => tool({ approval: "yes" as never })).toThrow(/approval/);
    expect(() => tool({ idempotent: undefined as never })).toThrow(/idempotent/);
    expect(() => tool({ description: " " })).toThrow(/description/);
    expect(() => tool({ maxOutputChars: 0 })).toThrow(/maxOutputChars/);
  });
});

describe("ToolRegistry construction", () => {
  it("refuses two tools with one name", () => {
    const error = captureSync(() => registry([tool(), tool()]));
    expect(error).toBeInstanceOf(DevmindError);
    expect((error as DevmindError).code).toBe("TOOL_NAME_DUPLICATE");
  });

  it("ignores unknown names in requireApproval and autoApprove", () => {
    const reg = registry([tool()], { requireApproval: ["nope"], autoApprove: ["ghost"] });
    expect(reg.names()).toEqual(["add"]);
  });

  it("refuses invalid limits", () => {
    expect(() => registry([tool()], { defaultTimeoutMs: 0 })).toThrow(ToolDefinitionError);
    expect(() => registry([tool()], { maxOutputChars: -5 })).toThrow(ToolDefinitionError);
  });

  it("looks names up without touching the prototype", () => {
    const reg = registry([tool()]);
    expect(reg.get("add")?.name).toBe("add");
    expect(reg.get("__proto__")).toBeUndefined();
    expect(reg.get("constructor")).toBeUndefined();
  });
});

describe("modelTools", () => {
  const withDefaults = tool({
    name: "read",
    schema: z.object({
      path: z.string().describe("file"),
      offset: z.number().int().min(0).default(0),
      limit: z.number().int().default(400),
      note: z.string().optional(),
    }) as never,
  });

  it("gives OpenAI function definitions whose fields with defaults are not required, without $schema", () => {
    const [definition] = registry([withDefaults]).modelTools();
    expect(definition).toEqual({
      type: "function",
      function: {
        name: "read",
        description: "Add two numbers.",
        parameters: {
          type: "object",
          properties: {
            path: { type: "string", description: "file" },
            offset: { type: "integer", default: 0, minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
            limit: { type: "integer", default: 400, minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
            note: { type: "string" },
          },
          required: ["path"],
        },
      },
    });
    expect(JSON.stringify(definition)).not.toContain("$schema");
  });

  it("caches the definitions and is what LangChain's bindTools accepts unchanged", () => {
    const reg = registry([withDefaults, tool()]);
    const first = reg.modelTools();
    const second = reg.modelTools();
    expect(second[0]).toBe(first[0]);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(first.map((t) => t.function.name)).toEqual(["read", "add"]);
    expect(convertToOpenAITool(first[0] as never)).toBe(first[0]);
  });
});

describe("check: approval, risk and deny", () => {
  it("maps side effects to risk", () => {
    const reg = registry([
      tool({ name: "low" }),
      tool({ name: "medium", sideEffect: "local" }),
      tool({ name: "high", sideEffect: "external" }),
    ]);
    const risk = (name: string) => {
      const checked = reg.check(call(name, { a: 1, b: 2 }));
      return checked.kind === "ready" ? checked.risk : checked.kind;
    };
    expect([risk("low"), risk("medium"), risk("high")]).toEqual(["low", "medium", "high"]);
  });

  it("combines the predicate with requireApproval and autoApprove", () => {
    const tools = [
      tool({ name: "big", approval: ({ a }: { a: number }) => a > 10 }),
      tool({ name: "never" }),
      tool({ name: "always", approval: true }),
      tool({ name: "both", approval: false }),
    ];
    const reg = registry(tools, { requireApproval: ["never", "both"], autoApprove: ["always", "both"] });
    const needs = (name: string, a: number) => {
      const checked = reg.check(call(name, { a, b: 0 }));
      if (checked.kind !== "ready") throw new Error(checked.kind);
      return checked.needsApproval;
    };
    expect(needs("big", 5)).toBe(false);
    expect(needs("big", 50)).toBe(true);
    expect(needs("never", 1)).toBe(true);
    expect(needs("always", 1)).toBe(false);
    expect(needs("both", 1)).toBe(false);
  });

  it("needs approval when the predicate throws (fails closed)", () => {
    const reg = registry([
      tool({
        approval: () => {
          throw new Error("oops");
        },
      }),
    ]);
    expect(reg.check(call("add", { a: 1, b: 1 }))).toMatchObject({ kind: "ready", needsApproval: true });
  });

  it("passes parsed arguments (defaults applied, unknown keys dropped)", () => {
    const reg = registry([tool({ schema: z.object({ a: z.number(), b: z.number().default(7) }) as never })]);
    expect(reg.check(call("add", { a: 1, extra: "x" }))).toMatchObject({ kind: "ready", args: { a: 1, b: 7 } });
  });

  it("evaluates deny before approval and returns PERMISSION_DENIED from execute", async () => {
    let ran = false;
    const guarded = tool({
      approval: true,
      deny: ({ a }: { a: number }) => (a < 0 ? "negative numbers are not allowed" : null),
      execute: async () => {
        ran = true;
        return null;
      },
    });
    const reg = registry([guarded]);
    expect(reg.check(call("add", { a: -1, b: 0 }))).toEqual({ kind: "denied", reason: "negative numbers are not allowed" });
    expect(reg.check(call("add", { a: 1, b: 0 }))).toMatchObject({ kind: "ready", needsApproval: true });
    const result = await reg.execute(call("add", { a: -1, b: 0 }));
    expect(toolMessageContent(result)).toBe(
      '{"ok":false,"tool":"add","data":null,"error":{"code":"PERMISSION_DENIED","message":"negative numbers are not allowed"}}',
    );
    expect(ran).toBe(false);
  });

  it("denies when the deny function throws", () => {
    const reg = registry([
      tool({
        deny: () => {
          throw new Error("policy down");
        },
      }),
    ]);
    expect(reg.check(call("add", { a: 1, b: 1 }))).toEqual({ kind: "denied", reason: "policy check failed: policy down" });
  });
});

describe("execute: envelopes", () => {
  it("wraps success exactly as the contract says", async () => {
    const result = await registry([tool()]).execute(call("add", { a: 2, b: 3 }));
    expect(result).toEqual({ ok: true, tool: "add", data: { sum: 5 }, error: null, truncated: false });
    expect(toolMessageContent(result)).toBe('{"ok":true,"tool":"add","data":{"sum":5},"error":null,"truncated":false}');
  });

  it("names the missing tool and lists the available ones", async () => {
    const result = await registry([tool(), runner("echo", async () => 1)]).execute(call("subtract", { a: 1 }));
    expect(toolMessageContent(result)).toBe(
      '{"ok":false,"tool":"subtract","data":null,"error":{"code":"TOOL_NOT_FOUND","message":"unknown tool \\"subtract\\"; available tools: add, echo"}}',
    );
  });

  it("summarises zod issues as path: message", async () => {
    const result = await registry([tool()]).execute(call("add", { a: "1" }));
    expect(failure(result)).toEqual({
      code: "INVALID_ARGUMENTS",
      message: "invalid arguments for add: a: Invalid input: expected number, received string; b: Invalid input: expected number, received undefined",
    });
  });

  it("shows nested paths and caps the number of issues listed", async () => {
    const nested = tool({ name: "nested", schema: z.object({ items: z.array(z.object({ n: z.number() })) }) as never });
    const items = Array.from({ length: 12 }, () => ({ n: "x" }));
    const { message } = failure(await registry([nested]).execute(call("nested", { items })));
    expect(message.startsWith("invalid arguments for nested: items[0].n: Invalid input: expected number, received string; items[1].n:")).toBe(true);
    expect(message.endsWith(`; (and ${12 - TOOL_LIMITS.validationIssuesShown} more)`)).toBe(true);
  });

  it("keeps the code of a thrown ToolFailure", async () => {
    const reg = registry([
      runner("guarded", async () => {
        throw new ToolFailure("PERMISSION_DENIED", "path ../x is outside the workspace");
      }),
    ]);
    expect(failure(await reg.execute(call("guarded")))).toEqual({ code: "PERMISSION_DENIED", message: "path ../x is outside the workspace" });
  });

  it("turns any other error into TOOL_FAILED with its message and no stack", async () => {
    const reg = registry([
      runner("plain", async () => {
        throw new Error("disk on fire");
      }),
      runner("typed", async () => {
        throw new TypeError("x is not a function");
      }),
      runner("stringly", async () => {
        throw "just a string";
      }),
      runner("nully", async () => {
        throw null;
      }),
      runner("sync", (() => {
        throw new Error("thrown synchronously");
      }) as never),
      runner("long", async () => {
        throw new Error("y".repeat(50_000));
      }),
    ]);
    expect(failure(await reg.execute(call("plain")))).toEqual({ code: "TOOL_FAILED", message: "disk on fire" });
    expect(failure(await reg.execute(call("typed")))).toEqual({ code: "TOOL_FAILED", message: "TypeError: x is not a function" });
    expect(failure(await reg.execute(call("stringly")))).toEqual({ code: "TOOL_FAILED", message: "just a string" });
    expect(failure(await reg.execute(call("nully")))).toEqual({ code: "TOOL_FAILED", message: "null" });
    expect(failure(await reg.execute(call("sync")))).toEqual({ code: "TOOL_FAILED", message: "thrown synchronously" });
    const long = failure(await reg.execute(call("long")));
    expect(long.message.length).toBeLessThanOrEqual(TOOL_LIMITS.errorMessageMaxChars);
    expect(long.message).toMatch(/…\[truncated \d+ chars\]$/);
    expect(long.message).not.toContain("    at ");
  });

  it("makes data JSON-safe: undefined is null, Dates become strings", async () => {
    const when = new Date("2024-01-15T12:00:00.000Z");
    const reg = registry([runner("nothing", async () => undefined), runner("date", async () => ({ when, gone: undefined }))]);
    expect(await reg.execute(call("nothing"))).toEqual({ ok: true, tool: "nothing", data: null, error: null, truncated: false });
    expect(await reg.execute(call("date"))).toEqual({ ok: true, tool: "date", data: { when: "2024-01-15T12:00:00.000Z" }, error: null, truncated: false });
  });

  it("reports a result that is not JSON-serializable as TOOL_FAILED", async () => {
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    const reg = registry([runner("circular", async () => circular), runner("bigint", async () => ({ n: 10n })), runner("fn", async () => () => 1)]);
    for (const name of ["circular", "bigint", "fn"]) {
      const error = failure(await reg.execute(call(name)));
      expect(error.code).toBe("TOOL_FAILED");
      expect(error.message).toMatch(/^result is not JSON-serializable/);
    }
  });
});

describe("execute: truncation", () => {
  it("cuts long strings to the limit with a marker and truncated: true", async () => {
    const reg = registry([runner("big", async () => "a".repeat(5_000))], { maxOutputChars: 100 });
    const result = await reg.execute(call("big"));
    expect(result.ok && result.truncated).toBe(true);
    const data = result.data as string;
    expect(data.length).toBeLessThanOrEqual(100);
    const marker = "…[truncated 4923 chars]"; // 77 kept + 23 marker chars = 100
    expect(data).toBe("a".repeat(100 - marker.length) + marker);
  });

  it("replaces other values by their JSON text, cut the same way", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ i }));
    const reg = registry([runner("rows", async () => rows)], { maxOutputChars: 50 });
    const result = await reg.execute(call("rows"));
    expect(result).toMatchObject({ ok: true, truncated: true });
    const data = result.data as string;
    expect(typeof data).toBe("string");
    expect(data.length).toBeLessThanOrEqual(50);
    expect(data.startsWith('[{"i":0},{"i":1}')).toBe(true);
    expect(data).toMatch(/…\[truncated \d+ chars\]$/);
  });

  it("leaves output at the limit alone and lets a tool set its own limit", async () => {
    const reg = registry([runner("exact", async () => "b".repeat(100)), runner("own", async () => "c".repeat(100), { maxOutputChars: 10 })], { maxOutputChars: 100 });
    expect(await reg.execute(call("exact"))).toMatchObject({ ok: true, data: "b".repeat(100), truncated: false });
    const own = await reg.execute(call("own"));
    expect(own.truncated).toBe(true);
    expect((own.data as string).length).toBeGreaterThan(10); // the marker alone is longer than 10
    expect(own.data).toBe("…[truncated 100 chars]");
  });

  it("never splits a surrogate pair", async () => {
    const reg = registry([runner("emoji", async () => "😀".repeat(100))], { maxOutputChars: 50 });
    const data = (await reg.execute(call("emoji"))).data as string;
    expect(data.length).toBeLessThanOrEqual(50);
    expect(data).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no lone high surrogate
  });
});

describe("execute: timeouts and cancellation", () => {
  it("returns TOOL_TIMEOUT and aborts the tool's signal", async () => {
    let seen: AbortSignal | undefined;
    const slow = runner(
      "slow",
      (_args, ctx) =>
        new Promise((_, reject) => {
          seen = ctx.signal;
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        }),
      { timeoutMs: 30 },
    );
    const result = await registry([slow]).execute(call("slow"));
    expect(failure(result)).toEqual({ code: "TOOL_TIMEOUT", message: "tool slow timed out after 30 ms" });
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error).name).toBe("TimeoutError");
  });

  it("does not wait for a tool that ignores its signal", async () => {
    let seen: AbortSignal | undefined;
    const stubborn = runner("stubborn", (_args, ctx) => {
      seen = ctx.signal;
      return new Promise(() => undefined);
    });
    const started = Date.now();
    const result = await registry([stubborn], { defaultTimeoutMs: 40 }).execute(call("stubborn"));
    expect(failure(result).code).toBe("TOOL_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(seen?.aborted).toBe(true);
  });

  it("throws RunCancelledError when the run's signal fires, and aborts the tool's signal", async () => {
    let seen: AbortSignal | undefined;
    const run = new AbortController();
    const waiting = runner("waiting", (_args, ctx) => {
      seen = ctx.signal;
      setTimeout(() => run.abort(new Error("user cancelled")), 10);
      return new Promise(() => undefined);
    });
    await expect(registry([waiting]).execute(call("waiting"), { signal: run.signal })).rejects.toBeInstanceOf(RunCancelledError);
    expect(seen?.aborted).toBe(true);
    const error = await registry([runner("x", async () => 1)])
      .execute(call("x"), { signal: run.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunCancelledError);
    expect((error as RunCancelledError).code).toBe("RUN_CANCELLED");
    expect((error as RunCancelledError).kind).toBe("user");
  });

  it("does not start a tool when the run is already cancelled", async () => {
    let ran = false;
    const run = new AbortController();
    run.abort();
    const reg = registry([
      runner("x", async () => {
        ran = true;
      }),
    ]);
    await expect(reg.execute(call("x"), { signal: run.signal })).rejects.toBeInstanceOf(RunCancelledError);
    expect(ran).toBe(false);
  });

  it("hands the tool its context", async () => {
    let context: ToolContext | undefined;
    const reg = registry([
      runner("ctx", async (_args, ctx) => {
        context = ctx;
        return null;
      }),
    ]);
    await reg.execute(call("ctx", {}, "call_42"), { runId: "run_1", threadId: "thread_1" });
    expect(context).toMatchObject({ runId: "run_1", threadId: "thread_1", toolCallId: "call_42", workspace: "/workspace", maxOutputChars: 1_000 });
    expect(context?.signal.aborted).toBe(false);
  });
});

describe("execute: control flow escapes", () => {
  it("rethrows a GraphInterrupt unchanged", async () => {
    const interrupt = new GraphInterrupt([{ value: { question: "ok?" }, id: "i1" }]);
    const reg = registry([
      runner("asks", async () => {
        throw interrupt;
      }),
    ]);
    await expect(reg.execute(call("asks"))).rejects.toBe(interrupt);
  });

  it("rethrows other bubble-ups (ParentCommand) and errors matched by isControlFlow", async () => {
    const command = new ParentCommand(new Command({ goto: "elsewhere" }));
    class LeaseLost extends Error {}
    const lost = new LeaseLost("lease lost");
    const reg = registry(
      [
        runner("parent", async () => {
          throw command;
        }),
        runner("lease", async () => {
          throw lost;
        }),
      ],
      { isControlFlow: (error) => error instanceof LeaseLost },
    );
    await expect(reg.execute(call("parent"))).rejects.toBe(command);
    await expect(reg.execute(call("lease"))).rejects.toBe(lost);
  });
});

describe("execute: hostile input never throws", () => {
  const reg = registry([tool(), tool({ name: "texty", schema: z.object({ text: z.string().max(10) }) as never })]);

  it.each([
    ["a huge string where a number belongs", { a: "9".repeat(1_000_000), b: 1 }],
    ["a huge string over a max", { text: "z".repeat(1_000_000) }],
    ["wrong types", { a: [1], b: { nested: true } }],
    ["a __proto__ key", JSON.parse('{"a":1,"b":2,"__proto__":{"polluted":true}}')],
    ["a nested __proto__ key", { a: 1, b: 2, deep: JSON.parse('{"x":[{"__proto__":{}}]}') }],
    ["null arguments", null],
    ["array arguments", [1, 2]],
    ["string arguments", "{\"a\":1}"],
  ])("%s -> INVALID_ARGUMENTS", async (_label, args) => {
    const name = typeof args === "object" && args !== null && "text" in args ? "texty" : "add";
    const result = await reg.execute(call(name, args));
    const error = failure(result);
    expect(error.code).toBe("INVALID_ARGUMENTS");
    expect(error.message.length).toBeLessThan(3_000);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("names the __proto__ key's location", async () => {
    const error = failure(await reg.execute(call("add", { a: 1, b: 2, deep: JSON.parse('{"x":[{"__proto__":{}}]}') })));
    expect(error.message).toBe('invalid arguments for add: deep.x[0].__proto__: the key "__proto__" is not allowed');
  });

  it("treats odd names as unknown tools with a bounded message", async () => {
    for (const name of ["__proto__", "constructor", "x".repeat(100_000), 42 as unknown as string, null as unknown as string]) {
      const error = failure(await reg.execute(call(name, { a: 1, b: 2 })));
      expect(error.code).toBe("TOOL_NOT_FOUND");
      expect(error.message.length).toBeLessThan(400);
    }
  });
});

describe("helpers", () => {
  it("failureResult has exactly the contract's failure shape", () => {
    expect(failureResult("t", "APPROVAL_REJECTED", "no thanks")).toEqual({ ok: false, tool: "t", data: null, error: { code: "APPROVAL_REJECTED", message: "no thanks" } });
    expect(toolMessageContent(failureResult("t", "TOOL_OUTCOME_UNKNOWN", "?"))).toBe(
      '{"ok":false,"tool":"t","data":null,"error":{"code":"TOOL_OUTCOME_UNKNOWN","message":"?"}}',
    );
  });

  it("toolMessageContent never throws on unserializable data", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const text = toolMessageContent({ ok: true, tool: "t", data: circular, error: null, truncated: false });
    expect(JSON.parse(text)).toMatchObject({ ok: false, error: { code: "TOOL_FAILED" } });
  });

  it("canonicalToolCallKey sorts keys at every depth and keeps array order", () => {
    const one = canonicalToolCallKey("write_file", { path: "a", meta: { z: 1, a: [{ y: 2, b: 1 }] } });
    const two = canonicalToolCallKey("write_file", { meta: { a: [{ b: 1, y: 2 }], z: 1 }, path: "a" });
    expect(one).toBe(two);
    expect(one).toBe('write_file:{"meta":{"a":[{"b":1,"y":2}],"z":1},"path":"a"}');
    expect(canonicalToolCallKey("t", { list: [2, 1] })).not.toBe(canonicalToolCallKey("t", { list: [1, 2] }));
    expect(canonicalToolCallKey("t", { a: undefined, b: 1 })).toBe('t:{"b":1}');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    // never throws: arguments with no JSON form get one marker
    expect(canonicalToolCallKey("t", circular)).toBe("t:[unserializable]");
    expect(canonicalToolCallKey("t", { n: 10n })).toBe("t:[unserializable]");
  });

  it("canonicalToolCallKey is the name and the canonical JSON approval digests are taken of", () => {
    const args = { path: "notes/a.txt", content: 'héllo "world"\n', options: { mode: "append", flags: { sync: true, mkdir: false } }, lines: [3, 1.5, -0, null, "x"] };
    expect(canonicalToolCallKey("write_file", args)).toBe(`write_file:${canonicalJson(args)}`);
  });
});

function captureSync(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
