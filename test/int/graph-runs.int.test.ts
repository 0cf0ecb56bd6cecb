import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph as reviewGraph } from "../../examples/approval-graph/graph.js";
import { graph as researchGraph } from "../../examples/parallel-research/graph.js";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import type { GraphEntry } from "../../src/graphs/graph-kinds.js";
import type { EventRecord } from "../helpers/events.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { assistantIdFor } from "../../src/graphs/assistant-id.js";
import { rejection } from "../helpers/assertions.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });

/** A loop that never ends on its own: `bump` forever. */
const endless = new StateGraph(Counter)
  .addNode("bump", (state) => ({ count: state.count + 1 }))
  .addEdge(START, "bump")
  .addConditionalEdges("bump", () => "bump", ["bump"]);

/** A node that waits until its signal aborts (a cancel or the run's deadline). */
const slow = new StateGraph(Counter)
  .addNode("wait", async (_state, config) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 60_000);
      config.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new Error("aborted"));
      });
    });
    return { count: 1 };
  })
  .addEdge(START, "wait")
  .addEdge("wait", END);

/** Three nodes in a row, each taking a moment: a drain lands between steps. */
const steps = new StateGraph(Counter)
  .addNode("first", async (state) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { count: state.count + 1 };
  })
  .addNode("second", async (state) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { count: state.count + 10 };
  })
  .addNode("third", (state) => ({ count: state.count + 100 }))
  .addEdge(START, "first")
  .addEdge("first", "second")
  .addEdge("second", "third")
  .addEdge("third", END);

/** Remembers a fact per user in `config.store` and reports how many it knows: memory across threads. */
const Memory = Annotation.Root({ fact: Annotation<string>(), known: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }) });
const remember = new StateGraph(Memory)
  .addNode("remember", async (state, config) => {
    const store = config.store;
    if (store === undefined) throw new Error("no store given to the graph");
    const user = String(config.configurable?.["user_id"]);
    await store.put(["facts", user], state.fact, { text: state.fact });
    return { known: (await store.search(["facts", user])).length };
  })
  .addEdge(START, "remember")
  .addEdge("remember", END);

/** A node that fails. */
const failing = new StateGraph(Counter)
  .addNode("explode", () => {
    throw new Error("the search index is gone");
  })
  .addEdge(START, "explode")
  .addEdge("explode", END);

/** Reads its configurable and context, writes a custom event. */
const echo = new StateGraph(Counter)
  .addNode("echo", (state, config) => {
    config.writer?.({ step: config.configurable?.["step"], who: (config as { context?: { who?: string } }).context?.who });
    return { count: state.count + Number(config.configurable?.["step"] ?? 1) };
  })
  .addEdge(START, "echo")
  .addEdge("echo", END);

async function allEvents(runtime: Runtime, runId: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for await (const event of runtime.runs.events(runId)) out.push(event);
  return out;
}

describe.each(BACKENDS)("runs of user graphs on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  function runtimeWith(graphs: Record<string, GraphEntry | false>, env: Record<string, string> = {}): Runtime {
    const config = loadConfig({ DEVMIND_LEASE_MS: "3000", ...env });
    const runtime = createRuntime({ db, config, graphs });
    runtimes.push(runtime);
    return runtime;
  }

  it("runs example (a) to its interrupt, stores the interrupt, resumes with an audited value and finishes", async () => {
    const runtime = runtimeWith({ review: reviewGraph });
    expect(runtime.graphs.ids()).toEqual(["agent", "review"]);
    const created = await runtime.runs.create({ assistantId: "review", input: { topic: "durable runs" } });
    expect(created).toMatchObject({ graph_id: "review", assistant_id: assistantIdFor("review"), status: "pending", input: { topic: "durable runs" }, interrupts: null });
    const paused = await runtime.runs.execute(created.run_id);
    expect(paused).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await runtime.threads.get(created.thread_id)).status).toBe("interrupted");
    expect(paused.interrupts).toHaveLength(1);
    const [waiting] = paused.interrupts ?? [];
    expect(waiting?.value).toEqual({ question: "Send this draft?", draft: "A short note about durable runs." });
    expect(waiting?.id).toMatch(/^[0-9a-f]{32}$/);
    expect((await runtime.runs.interrupted()).map((run) => run.run_id)).toContain(created.run_id);
    expect(await runtime.runs.pendingApprovals(created.run_id)).toEqual([]);

    // a resume is a new run (LangGraph Platform's model), created with its audited value
    const queued = await runtime.runs.resume(created.run_id, { value: { approved: true, note: "ok" } }, { principal: "alice", reason: "looks right" });
    expect(queued).toMatchObject({ status: "pending", resumes_run: created.run_id, graph_id: "review", thread_id: created.thread_id });
    const [audit] = await runtime.runs.resumes(created.run_id);
    expect(audit).toMatchObject({ principal: "alice", reason: "looks right", interrupt_ids: [waiting?.id], consumed_at: null });
    expect(audit?.value_digest).toMatch(/^[0-9a-f]{64}$/);
    expect((await runtime.threads.get(created.thread_id)).status).toBe("busy");

    const done = await runtime.runs.execute(queued.run_id);
    expect(done).toMatchObject({ status: "success", stop_reason: "completed", interrupts: null, error: null, waiting: false });
    expect((await runtime.runs.resumes(created.run_id))[0]?.consumed_at).not.toBeNull();
    const state = await runtime.threads.state(created.thread_id);
    expect((state as { values: { outcome?: string } }).values.outcome).toBe("sent: A short note about durable runs. (ok)");
    expect((await runtime.threads.get(created.thread_id)).status).toBe("idle");

    const firstTypes = (await allEvents(runtime, created.run_id)).map((event) => event.type);
    expect(firstTypes.slice(0, 2)).toEqual(["run.created", "run.started"]);
    expect(firstTypes.slice(-2)).toEqual(["run.interrupted", "resume.given"]);
    const events = [...(await allEvents(runtime, created.run_id)), ...(await allEvents(runtime, queued.run_id))];
    const types = (await allEvents(runtime, queued.run_id)).map((event) => event.type);
    expect(types.slice(0, 4)).toEqual(["run.created", "resume.given", "run.started", "run.resumed"]);
    expect(types.at(-1)).toBe("run.succeeded");
    const draftFinished = events.find((event) => event.type === "node.finished" && event["node"] === "write");
    expect(draftFinished).toMatchObject({ ns: [], error: null, interrupted: false });
    expect(typeof draftFinished?.["duration_ms"]).toBe("number");
    expect(events.find((event) => event.type === "custom")).toMatchObject({ data: { progress: "drafting", topic: "durable runs" } });
    const resumed = events.find((event) => event.type === "run.resumed");
    expect(resumed).toMatchObject({ reason: "resume" });
    // the node that interrupted is reported as such
    expect(events.some((event) => event.type === "node.finished" && event["node"] === "review" && event["interrupted"] === true)).toBe(true);
  });

  it("runs example (b): Send branches into a subgraph, two interrupts resumed by id, partial resume waits", async () => {
    const runtime = runtimeWith({ research: researchGraph });
    const created = await runtime.runs.create({ assistantId: "research", input: { questions: ["ab", "abc", "abcde"] } });
    const paused = await runtime.runs.execute(created.run_id);
    expect({ status: paused.status, stop_reason: paused.stop_reason, error: paused.error }).toEqual({ status: "success", stop_reason: "interrupt", error: null });
    const interrupts = paused.interrupts ?? [];
    expect(interrupts.map((item) => item.value).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ confirm: "abc -> unsure" }, { confirm: "abcde -> unsure" }]);
    // one value for two interrupts is ambiguous: refused, nothing stored
    const ambiguous = await rejection(runtime.runs.resume(created.run_id, { value: { keep: true } }, { principal: "bob" }));
    expect(ambiguous).toMatchObject({ code: "RUN_INPUT_INVALID" });
    expect(await runtime.runs.resumes(created.run_id)).toEqual([]);
    // an unknown interrupt id is a conflict
    expect(await rejection(runtime.runs.resume(created.run_id, { values: { "0123456789abcdef0123456789abcdef": 1 } }, { principal: "bob" }))).toMatchObject({ code: "RUN_CONFLICT" });
    const [first, second] = interrupts;
    const partial = await runtime.runs.resume(created.run_id, { values: { [first?.id as string]: { keep: true } } }, { principal: "bob" });
    // one interrupt still unanswered: no new run, the thread still waits on this one
    expect(partial).toMatchObject({ run_id: created.run_id, waiting: true });
    const full = await runtime.runs.resume(created.run_id, { command: { resume: { [second?.id as string]: { keep: false } } } }, { principal: "carol" });
    expect(full).toMatchObject({ status: "pending", resumes_run: created.run_id });
    const done = await runtime.runs.execute(full.run_id);
    expect(done.status).toBe("success");
    const state = (await runtime.threads.state(created.thread_id)) as { values: { report: string } };
    const kept = first?.value as { confirm: string };
    expect(state.values.report).toBe(["ab -> sure", `${kept.confirm} (confirmed)`].sort().join("; "));
    const events = await allEvents(runtime, created.run_id);
    // the subgraph's own nodes are reported with their namespace
    expect(events.some((event) => event.type === "node.started" && event["node"] === "lookup" && (event["ns"] as string[]).length === 1)).toBe(true);
    expect(events.filter((event) => event.type === "custom").map((event) => (event["data"] as { looking_up: string }).looking_up).sort()).toEqual(["ab", "abc", "abcde"]);
    expect(events.filter((event) => event.type === "resume.given").map((event) => event["by"])).toEqual(["bob", "carol"]);
  });

  it("passes the run's configurable and context to the graph and stores its custom writes", async () => {
    const runtime = runtimeWith({ echo });
    const created = await runtime.runs.create({ assistantId: "echo", input: { count: 1 }, config: { configurable: { step: 5 }, tags: ["t1"] }, context: { who: "dana" } });
    expect(created).toMatchObject({ config: { configurable: { step: 5 }, tags: ["t1"] }, context: { who: "dana" } });
    const done = await runtime.runs.execute(created.run_id);
    expect(done.status).toBe("success");
    expect(((await runtime.threads.state(created.thread_id)) as { values: { count: number } }).values.count).toBe(6);
    const custom = (await allEvents(runtime, created.run_id)).filter((event) => event.type === "custom");
    expect(custom.map((event) => event["data"])).toEqual([{ step: 5, who: "dana" }]);
  });

  it("stops at LangGraph's recursion limit, a failing node, a cancel and the run's deadline with their stop reasons", async () => {
    const runtime = runtimeWith({ endless, failing, slow });
    const looped = await runtime.runs.create({ assistantId: "endless", input: {}, config: { recursion_limit: 5 } });
    expect(await runtime.runs.execute(looped.run_id)).toMatchObject({ status: "error", stop_reason: "recursion_limit", error: { code: "GRAPH_RECURSION_LIMIT" } });

    const failed = await runtime.runs.create({ assistantId: "failing", input: {} });
    const failure = await runtime.runs.execute(failed.run_id);
    expect(failure).toMatchObject({ status: "error", stop_reason: "internal_error", error: { code: "GRAPH_FAILED" } });
    expect(failure.error?.message).toContain("the search index is gone");
    const failedEvents = await allEvents(runtime, failed.run_id);
    expect(failedEvents.at(-1)).toMatchObject({ type: "run.failed", stop_reason: "internal_error", code: "GRAPH_FAILED" });

    const waiting = await runtime.runs.create({ assistantId: "slow", input: {} });
    const executing = runtime.runs.execute(waiting.run_id);
    await waitUntil("the slow node to start", async () => (await allEvents(runtime, waiting.run_id)).some((event) => event.type === "node.started"), 20_000);
    await runtime.runs.cancel(waiting.run_id);
    expect(await executing).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });

    const timed = await runtime.runs.create({ assistantId: "slow", input: {}, limits: { runTimeoutMs: 1_500 } });
    expect(await runtime.runs.execute(timed.run_id)).toMatchObject({ status: "timeout", stop_reason: "deadline", error: { code: "RUN_DEADLINE" } });
  });

  it("resumes with a Command's update and goto: the state changes and the graph goes where told", async () => {
    const runtime = runtimeWith({ review: reviewGraph });
    const created = await runtime.runs.create({ assistantId: "review", input: { topic: "first topic" } });
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt" });
    const queued = await runtime.runs.resume(created.run_id, { command: { update: { topic: "second topic" }, goto: "write" } }, { principal: "gail" });
    expect(queued).toMatchObject({ status: "pending", resumes_run: created.run_id });
    let record = await runtime.runs.execute(queued.run_id);
    const runIds = [created.run_id, queued.run_id];
    // the update is in the state and `write` ran again on it (LangGraph also re-runs the task that
    // was interrupted, in the same step, so `review` asks again)
    const updated = (await runtime.threads.state(created.thread_id)) as { values: { topic: string; draft: string } };
    expect(updated.values).toMatchObject({ topic: "second topic", draft: "A short note about second topic." });
    const writes = [...(await allEvents(runtime, created.run_id)), ...(await allEvents(runtime, queued.run_id))].filter((event) => event.type === "node.finished" && event["node"] === "write");
    expect(writes).toHaveLength(2);
    for (let round = 0; round < 3 && record.stop_reason === "interrupt"; round++) {
      expect(record.interrupts).toHaveLength(1);
      const next = await runtime.runs.resume(record.run_id, { command: { resume: { approved: false } } }, { principal: "gail" });
      expect(next).toMatchObject({ status: "pending", resumes_run: record.run_id });
      runIds.push(next.run_id);
      record = await runtime.runs.execute(next.run_id);
    }
    expect(record).toMatchObject({ status: "success", stop_reason: "completed" });
    const state = (await runtime.threads.state(created.thread_id)) as { values: { topic: string; outcome: string } };
    expect(state.values).toMatchObject({ topic: "second topic", outcome: "dropped" });
    // each resume is audited on the run it answered
    const audit = (await Promise.all(runIds.map((id) => runtime.runs.resumes(id)))).flat();
    expect(audit[0]?.command).toEqual({ values: {}, update: { topic: "second topic" }, goto: "write" });
    expect(audit.slice(1).every((resume) => Object.values(resume.command.values).every((value) => JSON.stringify(value) === '{"approved":false}'))).toBe(true);
  });

  it("a drained worker gives the run back between steps; another finishes it without re-running a finished node", async () => {
    const runtime = runtimeWith({ steps });
    const created = await runtime.runs.create({ assistantId: "steps", input: { count: 0 } });
    const first = runtime.worker({ concurrency: 1 });
    await first.start();
    await waitUntil("the first node to finish", async () => (await allEvents(runtime, created.run_id)).some((event) => event.type === "node.finished" && event["node"] === "first"), 20_000);
    await first.stop();
    const released = await runtime.runs.get(created.run_id);
    expect(released.status).toBe("pending");
    expect(released.stop_reason).toBeNull();
    const second = runtime.worker({ concurrency: 1 });
    await second.start();
    expect(await runtime.runs.wait(created.run_id, { timeoutMs: 30_000 })).toMatchObject({ status: "success" });
    expect(((await runtime.threads.state(created.thread_id)) as { values: { count: number } }).values.count).toBe(111);
    const events = await allEvents(runtime, created.run_id);
    expect(events.filter((event) => event.type === "node.finished" && event["node"] === "first")).toHaveLength(1);
    expect(events.map((event) => event.type)).toContain("run.resumed");
    await second.stop();
  });

  it("every graph gets the runtime's store: what one thread's run puts, another thread's run finds", async () => {
    const runtime = runtimeWith({ remember });
    const first = await runtime.runs.create({ assistantId: "remember", input: { fact: "likes tea" }, config: { configurable: { user_id: "u1" } } });
    expect((await runtime.runs.execute(first.run_id)).status).toBe("success");
    const second = await runtime.runs.create({ assistantId: "remember", input: { fact: "lives in Lyon" }, config: { configurable: { user_id: "u1" } } });
    expect(second.thread_id).not.toBe(first.thread_id);
    expect((await runtime.runs.execute(second.run_id)).status).toBe("success");
    expect(((await runtime.threads.state(second.thread_id)) as { values: { known: number } }).values.known).toBe(2);
    expect((await runtime.store.search(["facts", "u1"])).map((item) => item.key).sort()).toEqual(["likes tea", "lives in Lyon"]);
  });

  it("refuses unknown graphs, the agent's unsupported options and bad configs, storing nothing", async () => {
    const runtime = runtimeWith({ echo });
    const before = (await runtime.runs.list({ limit: 500 })).length;
    expect(await rejection(runtime.runs.create({ assistantId: "nope", input: {} }))).toMatchObject({ code: "GRAPH_NOT_FOUND", details: { known: ["agent", "echo"] } });
    expect(await rejection(runtime.runs.create({ input: { messages: ["hi"] }, context: { a: 1 } }))).toMatchObject({ code: "RUN_INPUT_INVALID", details: { field: "context" } });
    expect(await rejection(runtime.runs.create({ input: { messages: ["hi"] }, config: { recursion_limit: 3 } }))).toMatchObject({ code: "RUN_INPUT_INVALID" });
    for (const config of [{ unknown: 1 }, { configurable: { thread_id: "x" } }, { configurable: { __pregel_x: 1 } }, { recursion_limit: 0 }, { tags: [1] }]) {
      expect(await rejection(runtime.runs.create({ assistantId: "echo", input: {}, config: config as never }))).toMatchObject({ code: "RUN_INPUT_INVALID" });
    }
    expect((await runtime.runs.list({ limit: 500 })).length).toBe(before);
  });

  it("two workers with different graph sets on one database never take each other's runs", async () => {
    const alpha = runtimeWith({ agent: false, alpha: echo });
    const beta = runtimeWith({ agent: false, beta: echo });
    expect(alpha.graphs.ids()).toEqual(["alpha"]);
    const alphaRuns = await Promise.all([1, 2, 3].map((n) => alpha.runs.create({ assistantId: "alpha", input: { count: n } })));
    const betaRuns = await Promise.all([1, 2, 3].map((n) => beta.runs.create({ assistantId: "beta", input: { count: n } })));
    // a runtime without a graph refuses to execute its runs
    expect(await rejection(alpha.runs.execute(betaRuns[0]?.run_id as string))).toMatchObject({ code: "GRAPH_NOT_FOUND" });
    const workers = [alpha.worker({ concurrency: 2 }), beta.worker({ concurrency: 2 })];
    await Promise.all(workers.map((worker) => worker.start()));
    for (const run of [...alphaRuns, ...betaRuns]) expect((await alpha.runs.wait(run.run_id, { timeoutMs: 60_000 })).status).toBe("success");
    // the worker field names the process's runtime, then the worker slot
    const startedBy = async (runtime: Runtime, runId: string) => String((await allEvents(runtime, runId)).find((event) => event.type === "run.started")?.["worker"]).replace(/:worker.*$/, "");
    const alphaWorkers = new Set(await Promise.all(alphaRuns.map((run) => startedBy(alpha, run.run_id))));
    const betaWorkers = new Set(await Promise.all(betaRuns.map((run) => startedBy(beta, run.run_id))));
    expect(alphaWorkers.size).toBe(1);
    expect(betaWorkers.size).toBe(1);
    expect([...alphaWorkers][0]).not.toBe([...betaWorkers][0]);
  });
});
