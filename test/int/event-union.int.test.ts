import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { graph as reviewGraph } from "../../examples/approval-graph/graph.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { isStoredRunEventType, type RunEventFields, type RunEventType } from "../../src/runtime/events/run-events.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { createRuntime, isRunEvent, type LiveEvent, type Runtime, type StoredRunEvent } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

// What runs actually store and deliver, checked against the event union of src/runtime/events/run-events.ts:
// a type outside it, or a field it does not declare (or a declared one missing), fails here.

type Presence = "required" | "optional";

/**
 * Every field of every event type, as the union declares them. Typed over the union, so this map
 * cannot name a field the union lacks, nor leave one out (the object literal must match exactly).
 */
const FIELDS: { [T in RunEventType]: Record<keyof RunEventFields<T>, Presence> } = {
  "run.created": { cron_id: "optional" },
  "run.started": { attempt: "required", worker: "required" },
  "run.resumed": { reason: "required", attempt: "required", worker: "required" },
  "run.interrupted": { interrupts: "optional" },
  "run.cancel_requested": {},
  "run.succeeded": { answer: "required" },
  "run.failed": { stop_reason: "required", code: "required", message: "required" },
  "run.timeout": {},
  "run.cancelled": {},
  "approval.requested": { requests: "required" },
  "approval.decided": { tool_call_id: "required", decision: "required", by: "required", reason: "required" },
  "resume.given": { interrupt_ids: "required", by: "required", reason: "required", value_digest: "required" },
  "model.started": { round: "required" },
  "model.delta": { round: "required", text: "required", message_id: "required", offset: "required" },
  "model.finished": { round: "required", duration_ms: "required", tool_calls: "required", usage: "required", finish_reason: "required" },
  "model.failed": { round: "required", code: "required", message: "required", attempt: "required", will_retry: "required" },
  "tool.call.started": { tool_call_id: "required", tool: "required", args: "required" },
  "tool.call.finished": { tool_call_id: "required", tool: "required", ok: "required", error_code: "required", duration_ms: "required", truncated: "required" },
  "node.started": { node: "required", task_id: "required", ns: "required" },
  "node.finished": { node: "required", task_id: "required", ns: "required", duration_ms: "required", error: "required", interrupted: "required" },
  "message.started": { ns: "required", checkpoint_ns: "required", message_id: "required" },
  custom: { ns: "required", data: "required" },
  tools: { ns: "required", data: "required", duration_ms: "optional", checkpoint_ns: "optional" },
  events: { data: "required" },
  "events.truncated": { limit: "required" },
  "graph.stopped": { stop_reason: "required" },
};

const ENVELOPE = ["run_id", "thread_id", "seq", "at"];

/** What is wrong with `event` against the union: its type, a field too many, a field missing. */
function problems(event: { type: string }, where: "stored" | "live"): string[] {
  const spec = (FIELDS as Record<string, Record<string, Presence> | undefined>)[event.type];
  if (spec === undefined) return [`${where} ${event.type}: not a type of the union`];
  if (where === "stored" && !isStoredRunEventType(event.type)) return [`stored ${event.type}: a live-only type was stored`];
  const own = Object.keys(event).filter((key) => key !== "type" && !(where === "stored" && ENVELOPE.includes(key)));
  return [
    ...own.filter((key) => spec[key] === undefined).map((key) => `${where} ${event.type}: undeclared field ${key}`),
    ...Object.entries(spec)
      .filter(([key, presence]) => presence === "required" && !own.includes(key))
      .map(([key]) => `${where} ${event.type}: missing field ${key}`),
  ];
}

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });

const failing = new StateGraph(Counter)
  .addNode("explode", () => {
    throw new Error("the search index is gone");
  })
  .addEdge(START, "explode")
  .addEdge("explode", END);

/** A graph whose LangChain tool reports its start and end (`tools` events). */
const tooled = new StateGraph(MessagesAnnotation)
  .addNode("call", () => ({ messages: [new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "echo", args: {} }] })] }))
  .addNode("tools", new ToolNode([tool(async () => "echoed", { name: "echo", description: "Echoes." })]))
  .addEdge(START, "call")
  .addEdge("call", "tools")
  .addEdge("tools", END);

describe.each(BACKENDS)("stored and live events are members of the union on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let workspace: { dir: string; cleanup: () => void };
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  beforeEach(() => {
    workspace = tempWorkspace();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    workspace.cleanup();
  });

  function runtimeWith(turns: ScriptedTurn[]): { runtime: Runtime; live: LiveEvent[] } {
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "3000", DEVMIND_MODEL_MAX_RETRIES: "1" });
    const runtime = createRuntime({ db, config, model: new ScriptedChatModel(turns), graphs: { review: reviewGraph, failing, tooled } });
    runtimes.push(runtime);
    const live: LiveEvent[] = [];
    runtime.runs.subscribeAll((_runId, event) => live.push(event));
    return { runtime, live };
  }

  async function stored(runtime: Runtime, runIds: string[]): Promise<StoredRunEvent[]> {
    const out: StoredRunEvent[] = [];
    for (const runId of runIds) for await (const event of runtime.runs.events(runId)) out.push(event);
    return out;
  }

  it("runs of the agent, of user graphs and the reaper store only known types with their declared fields", async () => {
    const { runtime, live } = runtimeWith([
      // round 1: a transient failure (retried), then a call that needs approval
      { error: "rate limited", status: 429 },
      { tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "one" } }] },
      { content: "wrote it" },
    ]);
    const runIds: string[] = [];

    // the agent: model retries, approval asked and decided, tools, the answer
    const agent = await runtime.runs.create({ input: { messages: ["write a file"] } });
    runIds.push(agent.run_id);
    expect(await runtime.runs.execute(agent.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt" });
    // the decision creates the run that resumes the thread (the Platform's model)
    // (the resume streams its answer's tokens: LangGraph's messages mode, each message's start stored)
    const agentResumed = await runtime.runs.decide(agent.run_id, { decisions: [{ type: "approve", tool_call_id: "w1" }] }, { principal: "alice" }, { streamMode: ["messages-tuple"] });
    runIds.push(agentResumed.run_id);
    expect(await runtime.runs.execute(agentResumed.run_id)).toMatchObject({ status: "success", stop_reason: "completed" });

    // a user graph: nodes, a custom write, an interrupt with its values, an audited resume
    const review = await runtime.runs.create({ assistantId: "review", input: { topic: "durable runs" } });
    runIds.push(review.run_id);
    expect(await runtime.runs.execute(review.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt" });
    const reviewResumed = await runtime.runs.resume(review.run_id, { value: { approved: true } }, { principal: "bob", reason: "fine" });
    runIds.push(reviewResumed.run_id);
    expect(await runtime.runs.execute(reviewResumed.run_id)).toMatchObject({ status: "success", stop_reason: "completed" });

    // a graph running a LangChain tool, recording LangChain's stream events (capped: the marker too)
    const tooledRun = await runtime.runs.create({ assistantId: "tooled", input: { messages: [] }, limits: { maxStreamEvents: 2 } });
    runIds.push(tooledRun.run_id);
    expect((await runtime.runs.execute(tooledRun.run_id)).status).toBe("success");

    // a failing graph, and a run cancelled before it ran
    const failed = await runtime.runs.create({ assistantId: "failing", input: {} });
    runIds.push(failed.run_id);
    expect((await runtime.runs.execute(failed.run_id)).status).toBe("error");
    const cancelled = await runtime.runs.create({ assistantId: "review", input: { topic: "never" } });
    runIds.push(cancelled.run_id);
    expect((await runtime.runs.cancel(cancelled.run_id)).status).toBe("interrupted");

    // the reaper's SQL: a run whose lease lapsed on its last attempt, and one whose cancel was requested
    const store = new RunStore(db);
    const exhausted = await runtime.runs.create({ assistantId: "review", input: { topic: "exhausted" } });
    const abandoned = await runtime.runs.create({ assistantId: "review", input: { topic: "abandoned" } });
    runIds.push(exhausted.run_id, abandoned.run_id);
    for (const run of [exhausted, abandoned]) await store.claim(run.run_id, { owner: "gone", leaseMs: 60_000 });
    expect((await runtime.runs.cancel(abandoned.run_id)).status).toBe("running");
    await db.query(`UPDATE "${db.schema}".runs SET lease_expires_at = now() - interval '1 second' WHERE run_id = ANY($1::uuid[])`, [[exhausted.run_id, abandoned.run_id]]);
    expect(await store.requeueExpired({ maxAttempts: 1 })).toMatchObject({ failed: [exhausted.run_id], cancelled: [abandoned.run_id] });

    const events = await stored(runtime, runIds);
    expect(events.every(isRunEvent)).toBe(true);
    expect(events.flatMap((event) => problems(event, "stored"))).toEqual([]);
    expect(live.flatMap((event) => problems(event, "live"))).toEqual([]);

    // the runs above went through every kind of event a run stores, and the live-only ones
    const storedTypes = new Set(events.map((event) => event.type));
    const missing = Object.keys(FIELDS).filter((type) => isStoredRunEventType(type) && !storedTypes.has(type as RunEventType));
    expect(missing.sort()).toEqual(["run.timeout"]);
    const liveTypes = new Set(live.map((event) => event.type));
    expect(liveTypes.has("model.delta") && liveTypes.has("graph.stopped")).toBe(true);
    // the reaper's events are what the executor writes for the same outcomes
    expect(events.find((event) => event.run_id === exhausted.run_id && event.type === "run.failed")).toMatchObject({ stop_reason: "max_attempts", code: "MAX_ATTEMPTS", message: expect.stringContaining("attempt 1 of 1") });
    expect(events.filter((event) => event.run_id === abandoned.run_id).map((event) => event.type)).toEqual(["run.created", "run.cancel_requested", "run.cancelled"]);
  });
});
