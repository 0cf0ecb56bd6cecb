import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import type { Worker } from "../../src/runtime/queue/worker.js";
import { countingDatabase } from "../helpers/counting-database.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const State = Annotation.Root({ path: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** `slow` waits for its signal (a cancel), at most 20 s. */
const slowGraph = new StateGraph(State)
  .addNode("slow", async (_state, config) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20_000);
      config.signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    return { path: ["slow"] };
  })
  .addEdge(START, "slow")
  .addEdge("slow", END)
  .compile();

describe.each(BACKENDS)("a cancel request reaches its running run by NOTIFY on %s", (backend) => {
  let owner: Database;
  let drop: (() => Promise<void>) | undefined;
  let runtime: Runtime | undefined;
  let worker: Worker | undefined;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  afterEach(async () => {
    await worker?.stop();
    await runtime?.close();
    await drop?.();
    [worker, runtime, drop] = [undefined, undefined, undefined];
  });

  it("the run stops without ever polling for the request", async () => {
    const fresh = await freshMigratedSchema(owner);
    drop = fresh.drop;
    const { db, log } = countingDatabase(fresh.db);
    runtime = createRuntime({ db, config: loadConfig({ DEVMIND_LEASE_MS: "60000" }), graphs: { agent: false, slow: slowGraph } });
    worker = runtime.worker({ concurrency: 1 });
    await worker.start();
    const created = await runtime.runs.create({ assistantId: "slow", input: { path: [] } });
    // bounded: running within 15 s
    for (let i = 0; i < 300 && (await runtime.runs.get(created.run_id)).status !== "running"; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await runtime.runs.get(created.run_id)).status).toBe("running");
    // let the run sit past several of the old poll periods (250 ms) before cancelling
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await runtime.runs.cancel(created.run_id);
    const ended = await runtime.runs.wait(created.run_id, { timeoutMs: 15_000 });
    expect(ended).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    expect(log.statements.filter((statement) => statement.name.startsWith("dm_runs_cancel_requested")).length).toBe(0);
  });
});
