/**
 * A run whose own last checkpoint waits at a node its graph no longer has — written by an earlier
 * version of the graph while the run was in flight — is continued by the graph's `continueFrom`
 * hook or ends with GRAPH_NODE_GONE, never "completed" with the values it stopped at. The built-in
 * agent continues checkpoints of its earlier shape (`begin`, `finish`) through its guard.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { END, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { fenceConfigurable } from "../../src/checkpoint/fence-config.js";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { AgentState } from "../../src/graph/state.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(BACKENDS)("a run whose checkpoint waits at a node its graph no longer has, on %s", (backend) => {
  /**
   * A runtime, and a run of the built-in agent whose attempt died (lease expired) after an
   * earlier shape of the agent stored `values` waiting at `node` under the run's lease.
   */
  async function strandedRun(node: string, values: Record<string, unknown>, turns: ScriptedTurn[]) {
    const owner = await openBackend(backend);
    cleanups.push(() => owner.close());
    const { db, drop } = await freshMigratedSchema(owner);
    cleanups.push(drop);
    const workspace = tempWorkspace();
    cleanups.push(workspace.cleanup);
    const runtime = createRuntime({ db, model: new ScriptedChatModel(turns), config: loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "60000" }) });
    cleanups.push(() => runtime.close());
    const created = await runtime.runs.create({ input: { messages: ["hello"] } });
    await expireLease(db, created.run_id);
    // the earlier shape: its graph stopped before `node` (as a process killed there leaves it)
    const saver = new PostgresCheckpointSaver(db);
    const earlier = new StateGraph(AgentState)
      .addNode(node, () => ({}))
      .addEdge(START, node)
      .addEdge(node, END)
      .compile({ checkpointer: saver, interruptBefore: [node as never] });
    await earlier.invoke(values as never, { configurable: { thread_id: created.thread_id, ...fenceConfigurable({ runId: created.run_id, epoch: 1 }) } });
    // the reaper puts the run back in the queue; the next attempt (epoch 2) continues it
    expect(await new RunStore(db).requeueExpired({ maxAttempts: 3 })).toEqual({ requeued: [created.run_id], failed: [], cancelled: [] });
    return { runtime, created };
  }

  async function expireLease(db: Database, runId: string): Promise<void> {
    await db.query(
      `UPDATE "${db.schema}".runs SET status = 'running', lease_owner = 'gone-worker', lease_epoch = 1, attempt = 1, lease_expires_at = now() - interval '1 second' WHERE run_id = $1`,
      [runId],
    );
  }

  it("an agent run stranded at the old `begin` (its input stored): the guard enters with the run's fields, the model answers", async () => {
    const { runtime, created } = await strandedRun("begin", { messages: [new HumanMessage({ id: "h1", content: "hello" })], stop_reason: "completed", answer: "an earlier run's answer" }, [{ content: "hi there" }]);
    const run = await runtime.runs.execute(created.run_id);
    expect(run.status).toBe("success");
    expect(run.stop_reason).toBe("completed");
    expect(run.answer).toBe("hi there");
    expect(run.model_rounds).toBe(1);
    const state = await runtime.threads.state(created.thread_id);
    const messages = (state.values as { messages: BaseMessage[] }).messages;
    expect(messages.map((message) => [message.getType(), message.content])).toEqual([
      ["human", "hello"],
      ["ai", "hi there"],
    ]);
    const types: string[] = [];
    for await (const event of runtime.runs.events(created.run_id)) types.push(event.type);
    expect(types).toContain("run.resumed");
    expect(types.at(-1)).toBe("run.succeeded");
  });

  it("an agent run stranded at the old `finish` (the model answered): the guard ends it with that answer, no model call", async () => {
    const { runtime, created } = await strandedRun(
      "finish",
      { messages: [new HumanMessage({ id: "h1", content: "hello" }), new AIMessage({ id: "a1", content: "the answer" })], decision: null, stop_reason: null },
      [],
    );
    // the run id the earlier `begin` set: the run's own state
    const run = await runtime.runs.execute(created.run_id);
    expect(run.status).toBe("success");
    expect(run.answer).toBe("the answer");
    const state = await runtime.threads.state(created.thread_id);
    expect((state.values as { messages: BaseMessage[] }).messages).toHaveLength(2);
  });

  it("a node the graph has no way to continue from: the run ends GRAPH_NODE_GONE naming it, not completed", async () => {
    const { runtime, created } = await strandedRun("summarize", { messages: [new HumanMessage({ id: "h1", content: "hello" })] }, []);
    const run = await runtime.runs.execute(created.run_id);
    expect(run.status).toBe("error");
    expect(run.error?.code).toBe("GRAPH_NODE_GONE");
    expect(run.error?.message).toContain('"summarize"');
  });
});
