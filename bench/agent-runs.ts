import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { z } from "zod";
import { PostgresCheckpointSaver } from "../src/checkpoint/postgres-saver.js";
import { migrate } from "../src/db/migrate.js";
import { openDatabase } from "../src/db/open-database.js";
import type { Database } from "../src/db/types.js";
import { buildAgentGraph } from "../src/graph/build-agent-graph.js";
import { ScriptedChatModel } from "../src/model/scripted-model.js";
import type { ScriptedTurn } from "../src/model/scripted-turns.js";
import { builtinTools } from "../src/tools/builtin/index.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { AGENT_TASK, finalAnswer } from "./agent-script.js";
import { channelBreakdown, tableSplits, type ChannelFootprint, type TableSplit } from "./channel-footprint.js";
import { dropSchema, measureSchema, type RunQuery, type SchemaFootprint } from "./footprint.js";
import { probeSaver, type SaverCalls } from "./saver-probe.js";

/** Limits given to our graph: high enough that only the script ends the run. */
export const OUR_LIMITS = { maxModelRounds: 200, maxToolCalls: 400, maxTokens: 10_000_000, contextTokens: 10_000_000 } as const;
/** LangGraph's recursion limit on both sides (supersteps), far above what 100 rounds need. */
export const RECURSION_LIMIT = 10_000;
/** The one thread each run writes. */
export const THREAD_ID = "bench-agent-thread";

/** One side's run of the conversation: the timed invoke and what it left behind. */
export interface AgentRun {
  /** Fresh schema the run wrote (dropped afterwards); null on MemorySaver. */
  schema: string | null;
  /** Wall time of `graph.invoke` alone, milliseconds. */
  invokeMs: number;
  /** Checkpoints written by the invoke: rows of the `checkpoints` table, or MemorySaver's stored checkpoints of the thread. */
  checkpoints: number;
  /** Messages in the final state (human + AI + tool). */
  messages: number;
  /** AI messages in the final state: model rounds. */
  aiMessages: number;
  /** Heap + TOAST + indexes per table; null on MemorySaver. */
  footprint: SchemaFootprint | null;
  /** Bytes of the schema right after migrate/setup, before the invoke (fixed cost of the tables); null on MemorySaver. */
  emptyBytes: number | null;
  /** Heap / TOAST / index bytes per table; null on MemorySaver. */
  tables: TableSplit[] | null;
  /** Stored value bytes per (table, channel); null on MemorySaver. */
  channels: ChannelFootprint[] | null;
  /** The saver calls LangGraph made during the invoke, with their summed durations. */
  saverCalls: SaverCalls;
}

/** A schema name nobody else uses: `<prefix>_<time>_<random>`. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

const config = { configurable: { thread_id: THREAD_ID }, recursionLimit: RECURSION_LIMIT };

function countAi(messages: readonly BaseMessage[]): number {
  return messages.filter((message) => AIMessage.isInstance(message)).length;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`agent bench: ${what}`);
}

async function withWorkspace<T>(fn: (workspace: string) => Promise<T>): Promise<T> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "devmind-bench-ws-")));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Footprint, table split, channel breakdown and checkpoint count of a run's schema. */
async function measured(admin: RunQuery, schema: string, emptyBytes: number): Promise<Pick<AgentRun, "schema" | "checkpoints" | "footprint" | "emptyBytes" | "tables" | "channels">> {
  const footprint = await measureSchema(admin, schema);
  const checkpoints = footprint.tables.find((t) => t.table === "checkpoints")?.rows ?? 0;
  return { schema, checkpoints, footprint, emptyBytes, tables: await tableSplits(admin, schema), channels: await channelBreakdown(admin, schema) };
}

/** What a MemorySaver run reports in place of a schema. */
function inMemory(checkpoints: number): Pick<AgentRun, "schema" | "checkpoints" | "footprint" | "emptyBytes" | "tables" | "channels"> {
  return { schema: null, checkpoints, footprint: null, emptyBytes: null, tables: null, channels: null };
}

/**
 * Checkpoints a MemorySaver holds for the bench thread, counted in its storage. (The same figure
 * as `getStateHistory`'s length, without reviving every checkpoint's messages, which takes seconds.)
 */
function countStored(saver: MemorySaver): number {
  return Object.keys(saver.storage[THREAD_ID]?.[""] ?? {}).length;
}

/** Times one invoke of our graph on `saver` and checks it completed with `rounds` model rounds. */
async function invokeOurs(turns: readonly ScriptedTurn[], rounds: number, saver: BaseCheckpointSaver) {
  return withWorkspace(async (workspace) => {
    const tools = new ToolRegistry(builtinTools({ workspace }), { workspace, defaultTimeoutMs: 10_000, maxOutputChars: 12_000 });
    const { saver: checkpointer, calls } = probeSaver(saver);
    const graph = buildAgentGraph({ model: new ScriptedChatModel(turns), tools, checkpointer, limits: OUR_LIMITS });
    const started = performance.now();
    const out = await graph.invoke({ messages: [new HumanMessage(AGENT_TASK)] }, config);
    const invokeMs = performance.now() - started;
    const saverCalls = structuredClone(calls); // before the checks below call the saver too
    // checks, outside the timing
    check(out.stop_reason === "completed", `our graph stopped with ${JSON.stringify(out.stop_reason)} (error ${JSON.stringify(out.error)}), expected "completed"`);
    check(out.model_rounds === rounds, `our graph made ${out.model_rounds} model rounds, expected ${rounds}`);
    check(out.answer === finalAnswer(rounds), `our graph's answer is ${JSON.stringify(out.answer)}`);
    const aiMessages = countAi(out.messages);
    check(aiMessages === rounds, `our final state has ${aiMessages} AI messages, expected ${rounds}`);
    const saved = await graph.getState(config);
    const savedMessages = (saved.values as { messages?: BaseMessage[] }).messages ?? [];
    check(savedMessages.length === out.messages.length, `the saved state has ${savedMessages.length} messages, the output ${out.messages.length}`);
    return { invokeMs, messages: out.messages.length, aiMessages, saverCalls };
  });
}

/**
 * (a) devmind's agent graph on devmind's PostgresCheckpointSaver, in a fresh schema (migrated,
 * measured, dropped), with a temporary workspace for the built-in tools.
 */
export async function runOursOnPostgres(url: string, admin: RunQuery, turns: readonly ScriptedTurn[], rounds: number): Promise<AgentRun> {
  const schema = freshSchema("bench_agent_ours");
  let db: Database | undefined;
  try {
    db = await openDatabase({ url, schema });
    await migrate(db);
    const empty = await measureSchema(admin, schema);
    const run = await invokeOurs(turns, rounds, new PostgresCheckpointSaver(db));
    return { ...(await measured(admin, schema, empty.totalBytes)), invokeMs: run.invokeMs, messages: run.messages, aiMessages: run.aiMessages, saverCalls: run.saverCalls };
  } finally {
    await db?.close();
    await dropSchema(admin, schema);
  }
}

/** (a) on LangGraph's in-process MemorySaver: the baseline for our per-step overhead. */
export async function runOursOnMemory(turns: readonly ScriptedTurn[], rounds: number): Promise<AgentRun> {
  const saver = new MemorySaver();
  const run = await invokeOurs(turns, rounds, saver);
  return { ...inMemory(countStored(saver)), invokeMs: run.invokeMs, messages: run.messages, aiMessages: run.aiMessages, saverCalls: run.saverCalls };
}

/**
 * The `add` tool for the plain agent: a LangChain `tool()` with a zod schema. It returns the same
 * envelope text devmind's registry produces (CONTRACT section 4), so both threads hold tool
 * messages of the same size and the comparison is about how they are stored.
 */
export const langchainAddTool = tool(
  async ({ a, b }: { a: number; b: number }) => JSON.stringify({ ok: true, tool: "add", data: { sum: a + b }, error: null, truncated: false }),
  {
    name: "add",
    description: "Add two numbers and return their sum.",
    schema: z.object({ a: z.number().describe("first addend"), b: z.number().describe("second addend") }),
  },
);

/** The plain LangGraph agent: MessagesAnnotation, an "agent" node, ToolNode and toolsCondition. */
export function buildPlainAgent(turns: readonly ScriptedTurn[], checkpointer: BaseCheckpointSaver) {
  const model = new ScriptedChatModel(turns).bindTools([langchainAddTool]);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode([langchainAddTool]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

/** Times one invoke of the plain agent on `saver` and checks it ended with the final answer after `rounds` AI messages. */
async function invokePeer(turns: readonly ScriptedTurn[], rounds: number, saver: BaseCheckpointSaver) {
  const { saver: checkpointer, calls } = probeSaver(saver);
  const graph = buildPlainAgent(turns, checkpointer);
  const started = performance.now();
  const out = await graph.invoke({ messages: [new HumanMessage(AGENT_TASK)] }, config);
  const invokeMs = performance.now() - started;
  const saverCalls = structuredClone(calls); // before the checks below call the saver too
  // checks, outside the timing
  const last = out.messages[out.messages.length - 1];
  check(
    last !== undefined && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) === 0 && last.content === finalAnswer(rounds),
    "the plain agent did not end with the final AI answer",
  );
  const aiMessages = countAi(out.messages);
  check(aiMessages === rounds, `the plain agent's final state has ${aiMessages} AI messages, expected ${rounds}`);
  return { invokeMs, messages: out.messages.length, aiMessages, saverCalls };
}

/**
 * (b) the plain LangGraph agent on the official PostgresSaver (its own pg.Pool), in a fresh
 * schema created by `setup()`, measured and dropped.
 */
export async function runPeer(url: string, admin: RunQuery, turns: readonly ScriptedTurn[], rounds: number): Promise<AgentRun> {
  const schema = freshSchema("bench_agent_peer");
  const saver = new PostgresSaver(new pg.Pool({ connectionString: url }), undefined, { schema });
  try {
    await saver.setup();
    const empty = await measureSchema(admin, schema);
    const run = await invokePeer(turns, rounds, saver);
    return { ...(await measured(admin, schema, empty.totalBytes)), invokeMs: run.invokeMs, messages: run.messages, aiMessages: run.aiMessages, saverCalls: run.saverCalls };
  } finally {
    await saver.end();
    await dropSchema(admin, schema);
  }
}

/** (b) on MemorySaver: tells the plain agent's own cost apart from its saver's (information only). */
export async function runPeerOnMemory(turns: readonly ScriptedTurn[], rounds: number): Promise<AgentRun> {
  const saver = new MemorySaver();
  const run = await invokePeer(turns, rounds, saver);
  return { ...inMemory(countStored(saver)), invokeMs: run.invokeMs, messages: run.messages, aiMessages: run.aiMessages, saverCalls: run.saverCalls };
}
