import { z } from "zod";
import { TOOL_LIMITS, TOOL_NAME_PATTERN } from "../constants.js";
import { ToolDefinitionError } from "../errors.js";
import type { SideEffect, ToolContext, ToolSpec } from "./types.js";

/** A JSON Schema document (the `parameters` of an OpenAI function tool). */
export type JsonSchema = Record<string, unknown>;

/**
 * A function type whose parameter is checked bivariantly, so a `Tool<ZodObject<{a: ZodNumber}>>`
 * is still a `Tool` (the registry holds tools of many schemas in one list).
 */
type Bivariant<Args, Result> = { bivarianceHack(args: Args): Result }["bivarianceHack"];

/**
 * A validated, frozen tool, as `defineTool` returns it and `ToolRegistry` accepts it.
 *
 * It carries the spec's fields unchanged plus `parameters`, the JSON Schema (input side) that the
 * model sees; the registry is what runs it (validation, timeout, envelope), so call
 * `registry.execute(...)` rather than `tool.execute(...)` outside tests.
 */
export interface Tool<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  readonly sideEffect: SideEffect;
  readonly approval: boolean | Bivariant<z.infer<Schema>, boolean>;
  readonly idempotent: boolean;
  readonly timeoutMs?: number;
  readonly maxOutputChars?: number;
  readonly deny?: Bivariant<z.infer<Schema>, string | null>;
  /** JSON Schema of the arguments as the model sends them (fields with defaults are optional). */
  readonly parameters: JsonSchema;
  execute(args: z.infer<Schema>, ctx: ToolContext): Promise<unknown>;
}

const SIDE_EFFECTS: ReadonlySet<string> = new Set<SideEffect>(["none", "local", "external"]);

/**
 * Declares a tool: checks the spec once, at startup, and returns it frozen with its JSON Schema.
 *
 * Why: a bad tool (a name the model API rejects, a schema that is not an object or cannot be
 * expressed as JSON Schema, a zero timeout) should fail when the program starts, not in the middle
 * of a run. How: pass a zod object schema; `execute` receives the parsed arguments (defaults
 * applied) and a `ToolContext` whose `signal` it should honour. Throw `ToolFailure` to choose the
 * error code the model sees; any other error becomes `TOOL_FAILED`.
 *
 * @throws ToolDefinitionError (code `TOOL_DEFINITION_INVALID`) naming the tool and the problem.
 *
 * @example
 * const add = defineTool({
 *   name: "add", description: "Add two numbers.", schema: z.object({ a: z.number(), b: z.number() }),
 *   sideEffect: "none", approval: false, idempotent: true,
 *   execute: async ({ a, b }) => ({ sum: a + b }),
 * });
 */
export function defineTool<Schema extends z.ZodType>(spec: ToolSpec<Schema>): Tool<Schema> {
  const parameters = validateToolSpec(spec);
  return Object.freeze({ ...spec, parameters: deepFreeze(parameters) }) as Tool<Schema>;
}

/**
 * Checks every field of a tool spec and returns its JSON Schema (without `$schema`).
 * Shared by `defineTool` and the registry, which re-checks tools it did not see defined.
 */
export function validateToolSpec(spec: ToolSpec<z.ZodType>): JsonSchema {
  const candidate: unknown = spec;
  if (candidate === null || typeof candidate !== "object") invalid("a tool must be an object", "(unnamed)");
  const name: unknown = spec.name;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    invalid(`tool name ${JSON.stringify(String(name)).slice(0, 80)} must match ${TOOL_NAME_PATTERN}`, String(name).slice(0, 80));
  }
  if (typeof spec.description !== "string" || spec.description.trim() === "") invalid("description must be a non-empty string", name);
  if (!isZodObject(spec.schema)) invalid("schema must be a zod object (z.object({...}))", name);
  if (!SIDE_EFFECTS.has(spec.sideEffect)) invalid(`sideEffect must be one of none, local, external`, name);
  if (typeof spec.approval !== "boolean" && typeof spec.approval !== "function") {
    invalid("approval must be a boolean or a function of the arguments", name);
  }
  if (typeof spec.idempotent !== "boolean") invalid("idempotent must be a boolean", name);
  if (typeof spec.execute !== "function") invalid("execute must be a function", name);
  if (spec.deny !== undefined && typeof spec.deny !== "function") invalid("deny must be a function when given", name);
  if (spec.timeoutMs !== undefined && !isPositiveInteger(spec.timeoutMs, TOOL_LIMITS.maxTimeoutMs)) {
    invalid(`timeoutMs must be a positive integer of at most ${TOOL_LIMITS.maxTimeoutMs}`, name);
  }
  if (spec.maxOutputChars !== undefined && !isPositiveInteger(spec.maxOutputChars, Number.MAX_SAFE_INTEGER)) {
    invalid("maxOutputChars must be a positive integer", name);
  }
  return toParameters(spec.schema, name);
}

/** True for a finite integer in [1, max]. */
export function isPositiveInteger(value: unknown, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= max;
}

function toParameters(schema: z.ZodType, name: string): JsonSchema {
  let json: JsonSchema;
  try {
    // io "input": what the model sends, so fields with defaults are not `required`.
    json = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;
  } catch (error) {
    invalid(`schema has no JSON Schema form: ${error instanceof Error ? error.message : String(error)}`, name);
  }
  const { $schema: _ignored, ...parameters } = json;
  return parameters;
}

function isZodObject(value: unknown): value is z.ZodObject {
  if (value === null || typeof value !== "object") return false;
  const internals = (value as { _zod?: { def?: { type?: unknown } } })._zod;
  return internals?.def?.type === "object" && typeof (value as { safeParse?: unknown }).safeParse === "function";
}

function invalid(problem: string, name: string): never {
  throw new ToolDefinitionError("TOOL_DEFINITION_INVALID", `tool ${name}: ${problem}`, { details: { tool: name } });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
