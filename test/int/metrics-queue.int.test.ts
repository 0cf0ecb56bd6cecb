import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { QueueGauges } from "../../src/operations/metrics/queue-gauges.js";
import { createRunMetrics } from "../../src/operations/metrics/run-metrics.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { tempWorkspace } from "../helpers/agent.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

describe.each(BACKENDS)("queue gauges on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  const workspace = tempWorkspace();
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
    workspace.cleanup();
  });

  it("read pending runs, the oldest one's age and threads waiting at an approval, by graph, in one statement", async () => {
    const runtime = createRuntime({ db, config: loadConfig({ DEVMIND_WORKSPACE: workspace.dir }), model: new ScriptedChatModel([{ tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "x" } }] }]) });
    try {
      const metrics = createRunMetrics(new Registry());
      const gauges = new QueueGauges(db, metrics, () => ["agent", "idle_graph"]);
      const waiting = await runtime.runs.create({ input: { messages: ["write a.txt"] } });
      expect((await runtime.runs.execute(waiting.run_id)).stop_reason).toBe("interrupt");
      await runtime.runs.create({ input: { messages: ["queued 1"] } });
      await runtime.runs.create({ input: { messages: ["queued 2"] } });
      await gauges.refresh();
      const read = async (name: string): Promise<Record<string, number>> => {
        const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
        return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels["graph"]), v.value]));
      };
      expect(await read("devmind_queue_pending_runs")).toEqual({ agent: 2, idle_graph: 0 });
      expect(await read("devmind_runs_waiting_interrupt")).toEqual({ agent: 1, idle_graph: 0 });
      expect(await read("devmind_runs_running")).toEqual({ agent: 0, idle_graph: 0 });
      expect((await read("devmind_queue_oldest_pending_age_seconds"))["agent"]).toBeGreaterThan(0);
      expect((await read("devmind_oldest_waiting_interrupt_age_seconds"))["agent"]).toBeGreaterThan(0);
      expect((await read("devmind_queue_oldest_pending_age_seconds"))["idle_graph"]).toBe(0);
    } finally {
      await runtime.close();
    }
  }, 60_000);
});
