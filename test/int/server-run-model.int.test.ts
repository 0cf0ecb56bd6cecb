/**
 * LangGraph Platform's run model through the official SDK `Client` (CONTRACT section 3): a run
 * ends when its graph interrupts (the run `success`, its thread `interrupted`); a resume is a new
 * run on the thread, created with its audited value; a cancelled run is `interrupted`; a static
 * breakpoint leaves the thread `interrupted` and `input: null` continues it in a new run; a
 * Command's `update` on a thread that waits on nothing starts a run with it; a run that resumes a
 * subgraph streams the subgraph's resumed task as the official server does.
 */
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { openBackend, PRIMARY_ENGINE } from "../helpers/databases.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";

const AskState = Annotation.Root({ topic: Annotation<string>(), answer: Annotation<string>(), notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** Writes a note, asks a question with `interrupt()`, then records the answer. */
const asking = new StateGraph(AskState)
  .addNode("write", (state: typeof AskState.State) => ({ notes: [`draft about ${state.topic}`] }))
  .addNode("ask", () => ({ answer: String(interrupt({ question: "send it?" })) }))
  .addEdge(START, "write")
  .addEdge("write", "ask")
  .addEdge("ask", END)
  .compile();

/** Two plain steps; runs stop before `second` when asked (`interrupt_before`). */
const twoSteps = new StateGraph(AskState)
  .addNode("first", () => ({ notes: ["first"] }))
  .addNode("second", () => ({ notes: ["second"] }))
  .addEdge(START, "first")
  .addEdge("first", "second")
  .addEdge("second", END)
  .compile();

/** A node slow enough to cancel while it runs. */
const slow = new StateGraph(AskState)
  .addNode("wait", async (_state: typeof AskState.State, config) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      config.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { notes: ["waited"] };
  })
  .addEdge(START, "wait")
  .addEdge("wait", END)
  .compile();

const CityState = Annotation.Root({ steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }), city: Annotation<string>() });
const weather = new StateGraph(CityState)
  .addNode("pick", () => ({ city: "Paris", steps: ["pick"] }))
  .addNode("report", (state: typeof CityState.State) => ({ steps: [`sunny in ${state.city}`] }))
  .addEdge(START, "pick")
  .addEdge("pick", "report")
  .addEdge("report", END)
  .compile({ interruptBefore: ["report"] });
const withSubgraph = new StateGraph(CityState).addNode("weather_graph", weather).addEdge(START, "weather_graph").addEdge("weather_graph", END).compile();

type Part = { event: string; data: unknown };

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push({ event: part.event, data: part.data });
  return parts;
}

describe("the Platform's run model through the SDK", () => {
  let owner: Database;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    server = await startTestServer(owner, [], { workers: 2, apiKeys: "", graphs: { asking, two_steps: twoSteps, slow, nested: withSubgraph } });
    client = new Client({ apiUrl: server.url });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("a run ends at its interrupt; command.resume is a new run; the first run stays as it ended", async () => {
    const thread = await client.threads.create();
    const waited = (await client.runs.wait(thread.thread_id, "asking", { input: { topic: "runs" } })) as Record<string, unknown>;
    expect(waited["__interrupt__"]).toMatchObject([{ value: { question: "send it?" } }]);
    const [first] = await client.runs.list(thread.thread_id);
    expect(first?.status).toBe("success");
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    const resumed = await client.runs.create(thread.thread_id, "asking", { command: { resume: "yes" } });
    expect(resumed.run_id).not.toBe(first?.run_id);
    const done = await client.runs.join(thread.thread_id, resumed.run_id);
    expect(done).toMatchObject({ answer: "yes", notes: ["draft about runs"] });
    expect((await client.runs.get(thread.thread_id, resumed.run_id)).status).toBe("success");
    expect((await client.runs.get(thread.thread_id, first?.run_id as string)).status).toBe("success");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    // devmind's richer records: the link between the two runs, and the audit on the run answered
    const records = await Promise.all([first?.run_id as string, resumed.run_id].map((id) => server.runtime.runs.get(id)));
    expect(records.map((run) => [run.stop_reason, run.waiting, run.resumes_run])).toEqual([
      ["interrupt", false, null],
      ["completed", false, first?.run_id],
    ]);
    expect((await server.runtime.runs.resumes(first?.run_id as string)).map((resume) => resume.principal)).toHaveLength(1);
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id).sort()).toEqual([first?.run_id, resumed.run_id].sort());

    // nothing waits now: another resume is refused (409) and creates nothing
    await expect(client.runs.create(thread.thread_id, "asking", { command: { resume: "again" } })).rejects.toThrow(/HTTP 409/);
    expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
  });

  it("a stream with command.resume streams the new run from its start", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "asking", { input: { topic: "streams" } });
    const parts = await collect(client.runs.stream(thread.thread_id, "asking", { command: { resume: "streamed" }, streamMode: ["values", "updates"] }));
    const metadata = parts[0]?.data as { run_id: string; attempt: number };
    expect(parts[0]?.event).toBe("metadata");
    expect(metadata.attempt).toBe(1);
    const [waiting] = await server.runtime.runs.list({ threadId: thread.thread_id, limit: 10 }).then((runs) => runs.filter((run) => run.stop_reason === "interrupt"));
    expect(metadata.run_id).not.toBe(waiting?.run_id);
    expect(parts.filter((part) => part.event === "updates").map((part) => Object.keys(part.data as object))).toEqual([["ask"]]);
    expect(parts.at(-1)).toMatchObject({ event: "values", data: { answer: "streamed" } });
  });

  it("interrupt_before leaves the thread interrupted; input null continues it in a new run", async () => {
    const thread = await client.threads.create();
    const stopped = await client.runs.wait(thread.thread_id, "two_steps", { input: { notes: [] }, interruptBefore: ["second"] });
    expect(stopped).toMatchObject({ notes: ["first"] });
    const [first] = await client.runs.list(thread.thread_id);
    expect(first?.status).toBe("success");
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["second"]);
    const continued = await client.runs.wait(thread.thread_id, "two_steps", { input: null });
    expect(continued).toMatchObject({ notes: ["first", "second"] });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
  });

  it("a cancelled run is interrupted; a cancel of a run that ended at an interrupt changes nothing", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "slow", { input: {} });
    await waitUntil("the slow run to run", async () => (await client.runs.get(thread.thread_id, run.run_id)).status === "running", 20_000);
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
    expect((await server.runtime.runs.get(run.run_id)).stop_reason).toBe("cancelled");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");

    const asked = await client.threads.create();
    await client.runs.wait(asked.thread_id, "asking", { input: { topic: "x" } });
    const [ended] = await client.runs.list(asked.thread_id);
    // the official server's answer to a cancel of a run that ended (202), and nothing changes: the thread still waits
    await client.runs.cancel(asked.thread_id, ended?.run_id as string);
    expect((await client.runs.get(asked.thread_id, ended?.run_id as string)).status).toBe(ended?.status);
    expect((await client.threads.get(asked.thread_id)).status).toBe("interrupted");
  });

  it("a Command's update on a thread that waits on nothing starts a run with it", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "two_steps", { input: { notes: [] } });
    const updated = await client.runs.wait(thread.thread_id, "two_steps", { command: { update: { topic: "set by a command" } } });
    expect(updated).toMatchObject({ topic: "set by a command", notes: ["first", "second"] });
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((run) => run.status)).toEqual(["success", "success"]);
    const audit = await server.runtime.runs.resumes(runs[0]?.run_id as string);
    expect(audit.map((resume) => resume.command)).toEqual([{ values: {}, update: { topic: "set by a command" } }]);
  });

  it("a new run with input on an interrupted thread starts anew: the thread no longer waits on the old run", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "asking", { input: { topic: "first" } });
    const [old] = await client.runs.list(thread.thread_id);
    expect((await server.runtime.runs.get(old?.run_id as string)).waiting).toBe(true);
    await client.runs.wait(thread.thread_id, "two_steps", { input: { notes: [] } });
    expect((await server.runtime.runs.get(old?.run_id as string)).waiting).toBe(false);
    await expect(client.runs.create(thread.thread_id, "asking", { command: { resume: "late" } })).rejects.toThrow(/HTTP 409/);
  });

  it("a run that resumes a subgraph stopped at its breakpoint streams the subgraph's resumed task, then the parent's update", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "nested", { input: { steps: ["start"] } });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const parts = await collect(client.runs.stream(thread.thread_id, "nested", { input: null, streamMode: ["values", "updates"], streamSubgraphs: true }));
    const outline = parts.map((part) => (part.event.includes("|") ? `${part.event.split("|")[0]}|sub` : part.event));
    expect(outline).toEqual(["metadata", "values", "values|sub", "updates|sub", "values|sub", "updates", "values"]);
    expect(parts[2]?.data).toEqual({ city: "Paris", steps: ["start", "pick"] });
    expect(parts[3]?.data).toEqual({ report: { steps: ["sunny in Paris"] } });
    expect(parts[5]?.data).toMatchObject({ weather_graph: { city: "Paris" } });
    // the subgraph hands its whole state back: the parent's reducer appends it to its own "start"
    expect(parts.at(-1)?.data).toMatchObject({ city: "Paris", steps: ["start", "start", "pick", "sunny in Paris"] });
  });
});
