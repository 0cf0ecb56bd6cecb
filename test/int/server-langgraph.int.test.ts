import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { MessageTupleManager, StreamOrchestrator } from "@langchain/langgraph-sdk/ui";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { startServer, type RunningServer } from "../../src/server/start-server.js";
import { AGENT_ASSISTANT_ID } from "../../src/server/wire.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };
type Msg = { type: string; content: unknown; id?: string; tool_calls?: { id: string; name: string }[] };

const WRITE_SCRIPT: ScriptedTurn[] = [
  { tool_calls: [{ id: "call_write", name: "write_file", args: { path: "hello.txt", content: "hi there" } }] },
  { content: "wrote hello.txt" },
  { content: "second answer" },
];

function messagesOf(values: unknown): Msg[] {
  return ((values as { messages?: Msg[] } | null)?.messages ?? []) as Msg[];
}

/** Polls `check` until it returns a value, for at most `timeoutMs` (time, not tries: polls slow down under load). */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("condition not reached");
}

describe.each(BACKENDS)("LangGraph SDK Client against devmind serve on %s", (backend) => {
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });
  const start = async (turns: ScriptedTurn[], options: { workers?: number } = {}): Promise<{ server: TestServer; client: Client }> => {
    const server = await startTestServer(owner, turns, options);
    servers.push(server);
    return { server, client: new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice }) };
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  itOnPrimary(backend)("assistants: one, graph id agent, found by graph id and by its uuid", async () => {
    const { client } = await start(WRITE_SCRIPT, { workers: 0 });
    const found = await client.assistants.search({ graphId: "agent" });
    expect(found.map((a) => [a.assistant_id, a.graph_id])).toEqual([[AGENT_ASSISTANT_ID, "agent"]]);
    expect((await client.assistants.get("agent")).assistant_id).toBe(AGENT_ASSISTANT_ID);
    expect((await client.assistants.get(AGENT_ASSISTANT_ID)).graph_id).toBe("agent");
    await expect(client.assistants.get("other")).rejects.toMatchObject({ status: 404 });
  });

  it("approval flow: stream shows values and the HITL interrupt, resume with a command is a new run that continues the thread", async () => {
    const { server, client } = await start(WRITE_SCRIPT);
    const thread = await client.threads.create({ graphId: "agent" });
    expect(thread.status).toBe("idle");
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts = (await collect(
      client.runs.stream(thread.thread_id, "agent", {
        input: { messages: [{ type: "human", content: "write hello.txt" }] },
        streamMode: ["values", "updates", "messages-tuple"],
        onRunCreated: (meta) => (created = meta),
      }),
    )) as Part[];
    expect(created?.thread_id).toBe(thread.thread_id);
    const runId = created?.run_id as string;
    expect(parts[0]).toMatchObject({ event: "metadata", data: { run_id: runId } });

    // values after each step: the human message first, then the model's tool call
    const values = parts.filter((p) => p.event === "values" && !("__interrupt__" in (p.data as object)));
    expect(messagesOf(values[0]?.data).map((m) => m.type)).toEqual(["human"]);
    const lastValues = messagesOf(values[values.length - 1]?.data);
    expect(lastValues.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(lastValues[1]?.tool_calls?.map((c) => [c.id, c.name])).toEqual([["call_write", "write_file"]]);
    // updates per node, the AI message once in messages-tuple with its metadata
    expect(parts.some((p) => p.event === "updates" && "model" in (p.data as object))).toBe(true);
    const tuples = parts.filter((p) => p.event === "messages").map((p) => p.data as [Msg, { langgraph_node: string }]);
    expect(tuples.filter(([m]) => m.type === "ai").map(([m, meta]) => [m.id, meta.langgraph_node])).toEqual([[lastValues[1]?.id, "model"]]);

    // the interrupt, in updates and in values, with CONTRACT section 5's shape
    const interruptUpdate = parts.find((p) => p.event === "updates" && "__interrupt__" in (p.data as object));
    const interruptValues = parts.find((p) => p.event === "values" && "__interrupt__" in (p.data as object));
    const [interrupt] = (interruptValues?.data as { __interrupt__: { id: string; value: Record<string, unknown> }[] }).__interrupt__;
    expect(interruptUpdate?.data).toEqual(interruptValues?.data);
    const config = { actionName: "write_file", allowedDecisions: ["approve", "edit", "reject"], action_name: "write_file", allowed_decisions: ["approve", "edit", "reject"] };
    const request = { name: "write_file", args: { path: "hello.txt", content: "hi there" }, description: expect.any(String), tool_call_id: "call_write", risk: expect.any(String) };
    expect(interrupt?.value).toEqual({
      actionRequests: [request],
      reviewConfigs: [config],
      // the snake_case copies Agent Chat UI reads
      action_requests: [request],
      review_configs: [config],
    });
    // the interrupt is the stream's last part: the run waits
    expect(parts[parts.length - 1]).toBe(interruptValues);

    // the Platform's model: the run ended at the interrupt, its thread waits on it
    expect(await client.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const waiting = await client.threads.getState(thread.thread_id);
    expect(waiting.next).toEqual(["approval"]);
    expect(waiting.tasks.flatMap((t) => t.interrupts.map((i) => i.id))).toEqual([interrupt?.id]);
    expect(existsSync(join(server.workspace, "hello.txt"))).toBe(false);

    // resume with a command: a new run continues the thread on a worker, the decision is alice's
    let resumedMeta: { run_id: string } | undefined;
    const resumed = (await collect(
      client.runs.stream(thread.thread_id, "agent", {
        command: { resume: { decisions: [{ type: "approve" }] } },
        streamMode: ["values", "custom"],
        onRunCreated: (meta) => (resumedMeta = meta),
      }),
    )) as Part[];
    const resumedId = resumedMeta?.run_id as string;
    expect(resumedId).not.toBe(runId);
    // custom parts are what the graph's nodes wrote: the agent's tool and model steps of this resume
    const custom = resumed.filter((p) => p.event === "custom").map((p) => p.data as { type: string; by?: string });
    expect(custom.map((e) => e.type)).toEqual(["tool.call.started", "tool.call.finished", "model.started", "model.finished"]);
    // the decision is alice's, in the audit of the run it answered
    const decided = (await server.runtime.runs.decisions(runId)).map((d) => [d.tool_call_id, d.decision, d.principal]);
    expect(decided).toEqual([["call_write", "approve", "alice"]]);
    const final = resumed.filter((p) => p.event === "values").pop();
    expect(messagesOf(final?.data).map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messagesOf(final?.data)[3]?.content).toBe("wrote hello.txt");
    expect((final?.data as { stop_reason: string }).stop_reason).toBe("completed");
    expect(readFileSync(join(server.workspace, "hello.txt"), "utf8")).toBe("hi there");

    // state, history, runs
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history[0]?.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(history.map((h) => (h.metadata as { step: number }).step)).toEqual([...history.map((h) => (h.metadata as { step: number }).step)].sort((a, b) => b - a));
    expect(history[history.length - 1]?.metadata).toMatchObject({ source: "input", step: -1 });
    const page = await client.threads.getHistory(thread.thread_id, { limit: 2, before: { configurable: { checkpoint_id: history[1]?.checkpoint.checkpoint_id as string } } });
    expect(page.map((h) => h.checkpoint.checkpoint_id)).toEqual(history.slice(2, 4).map((h) => h.checkpoint.checkpoint_id));
    expect(await client.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: false });
    const run = await client.runs.get(thread.thread_id, resumedId);
    expect(run).toMatchObject({ run_id: resumedId, thread_id: thread.thread_id, assistant_id: AGENT_ASSISTANT_ID, status: "success", stop_reason: "completed", answer: "wrote hello.txt", resumes_run: runId, waiting: false });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");

    // wait: a second run on the thread returns its final values
    const waited = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "and now?" }] } })) as Record<string, unknown>;
    expect(messagesOf(waited).map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    expect(waited["answer"]).toBe("second answer");
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => r.status)).toEqual(["success", "success", "success"]);
    expect(runs.slice(1).map((r) => r.run_id)).toEqual([resumedId, runId]);

    // the thread is listed the way Agent Chat UI asks for its history
    const listed = await client.threads.search({ metadata: { graph_id: "agent" }, limit: 10 });
    expect(listed.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(messagesOf(listed[0]?.values)[0]?.content).toBe("write hello.txt");
    expect(listed[0]?.status).toBe("idle");
  });

  itOnPrimary(backend)("the SDK's StreamOrchestrator (the state behind useStream's adapters): submit, interrupt, resume with a command", async () => {
    const { client, server } = await start(WRITE_SCRIPT);
    const errors: unknown[] = [];
    const orchestrator = new StreamOrchestrator({ assistantId: "agent", fetchStateHistory: true, onError: (error: unknown) => errors.push(error) } as never, {
      getClient: () => client,
      getAssistantId: () => "agent",
      getMessagesKey: () => "messages",
    } as never);
    try {
      await orchestrator.submit({ messages: [{ type: "human", content: "write hello.txt" }] } as never);
      await eventually(async () => (orchestrator.isLoading ? undefined : true));
      expect(orchestrator.error).toBeUndefined();
      expect(typeof orchestrator.threadId).toBe("string");
      const waiting = orchestrator.interrupt as { value: { actionRequests: { tool_call_id: string; name: string }[] } } | undefined;
      expect(waiting?.value.actionRequests.map((a) => [a.name, a.tool_call_id])).toEqual([["write_file", "call_write"]]);
      expect((orchestrator.messages as Msg[]).map((m) => m.type)).toEqual(["human", "ai"]);

      await orchestrator.submit(undefined as never, { command: { resume: { decisions: [{ type: "approve" }] } } } as never);
      await eventually(async () => (orchestrator.isLoading ? undefined : true));
      expect(errors).toEqual([]);
      expect(orchestrator.interrupt).toBeUndefined();
      const messages = orchestrator.messages as Msg[];
      expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect(messages[3]?.content).toBe("wrote hello.txt");
      expect(readFileSync(join(server.workspace, "hello.txt"), "utf8")).toBe("hi there");
      // the resume was a new run: the first ended at the interrupt, the second finished
      const runs = await client.runs.list(orchestrator.threadId as string);
      expect(runs.map((r) => [r.status, (r as unknown as { stop_reason: string }).stop_reason])).toEqual([["success", "completed"], ["success", "interrupt"]]);
      expect((runs[0] as unknown as { resumes_run: string }).resumes_run).toBe(runs[1]?.run_id);
    } finally {
      orchestrator.dispose();
    }
  });

  itOnPrimary(backend)("wait with a resume command returns the values after the run continued", async () => {
    const { client } = await start(WRITE_SCRIPT);
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "write it" }] } })) as Record<string, unknown>;
    const interrupts = paused["__interrupt__"] as { value: { actionRequests: { tool_call_id: string }[] } }[];
    expect(interrupts.map((i) => i.value.actionRequests.map((a) => a.tool_call_id))).toEqual([["call_write"]]);
    const rejected = (await client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "reject", message: "not now" }] } } })) as Record<string, unknown>;
    expect("__interrupt__" in rejected).toBe(false);
    const messages = messagesOf(rejected);
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(JSON.parse(String(messages[2]?.content))).toMatchObject({ ok: false, error: { code: "APPROVAL_REJECTED" } });
    await expect(client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } })).rejects.toMatchObject({ status: 409 });
  });

  itOnPrimary(backend)("a resume command may decide a subset of the calls: the run waits until every call has a decision", async () => {
    const { client, server } = await start([
      {
        tool_calls: [
          { id: "w1", name: "write_file", args: { path: "one.txt", content: "1" } },
          { id: "w2", name: "write_file", args: { path: "two.txt", content: "2" } },
        ],
      },
      { content: "one written, two refused" },
    ]);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["write both"] } });
    const partial = (await client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "approve", tool_call_id: "w1" }] } } })) as Record<string, unknown>;
    expect((partial["__interrupt__"] as unknown[]).length).toBe(1);
    // w2 still undecided: no new run, the thread still waits on the first
    const [run, ...others] = await client.runs.list(thread.thread_id);
    expect(others).toEqual([]);
    expect(run).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    const streamed = (await collect(
      client.runs.stream(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "reject", tool_call_id: "w2", message: "not two" }] } }, streamMode: ["values", "custom"] }),
    )) as Part[];
    const types = streamed.filter((p) => p.event === "custom").map((p) => (p.data as { type: string }).type);
    // w2 is answered as its reviewer refused it, then w1 runs now that every call is decided
    expect(types).toEqual(["tool.call.finished", "tool.call.started", "tool.call.finished", "model.started", "model.finished"]);
    expect((await server.runtime.runs.decisions(String(run?.run_id))).map((d) => [d.tool_call_id, d.decision])).toEqual([["w1", "approve"], ["w2", "reject"]]);
    const [resumed] = await client.runs.list(thread.thread_id);
    expect(resumed).toMatchObject({ status: "success", stop_reason: "completed", resumes_run: run?.run_id });
    expect(await client.runs.get(thread.thread_id, String(run?.run_id))).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: false });
    const final = messagesOf(streamed.filter((p) => p.event === "values").pop()?.data);
    expect(final.map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "ai"]);
    expect(readFileSync(join(server.workspace, "one.txt"), "utf8")).toBe("1");
    expect(existsSync(join(server.workspace, "two.txt"))).toBe(false);
  });

  itOnPrimary(backend)("joinStream after a disconnect continues after Last-Event-ID: no duplicates, no gaps", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "a1", name: "add", args: { a: 1, b: 2 } }], delay_ms: 150 },
      { tool_calls: [{ id: "a2", name: "add", args: { a: 3, b: 4 } }], delay_ms: 150 },
      { content: "the sums are 3 and 7", delay_ms: 150 },
    ]);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "add twice" }] } });
    const modes = ["values", "updates", "custom"] as const;
    const abort = new AbortController();
    const first: Part[] = [];
    try {
      for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: [...modes], signal: abort.signal })) {
        first.push(part as Part);
        if (first.filter((p) => p.id !== undefined).length === 5) abort.abort();
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") throw error;
    }
    const lastEventId = first.filter((p) => p.id !== undefined).pop()?.id as string;
    // parts are numbered 0, 1, … in the run's stream (as the official server's): the 5th is "4"
    expect(lastEventId).toBe("4");
    const rest = (await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: [...modes], lastEventId }))) as Part[];
    const full = (await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: [...modes] }))) as Part[];
    // every process derives the same parts in the same order: the rest is exactly what follows
    const durable = (parts: Part[]) => parts.filter((p) => p.id !== undefined).map((p) => ({ id: p.id, event: p.event, data: p.data }));
    expect(durable(rest).length).toBeGreaterThan(0);
    expect([...durable(first), ...durable(rest)]).toEqual(durable(full));
    expect(durable(full).map((p) => p.id)).toEqual(durable(full).map((_, index) => String(index)));
    expect(full.filter((p) => p.event === "custom").map((p) => (p.data as { type: string }).type).pop()).toBe("model.finished");
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  });

  itOnPrimary(backend)("the SDK reconnects by itself when the server goes away mid-stream (Location + Last-Event-ID): nothing lost or repeated", async () => {
    const { server, client } = await start(
      [
        // slow enough that the run is still going when the client asks whether to reconnect
        { tool_calls: [{ id: "b1", name: "add", args: { a: 5, b: 5 } }], delay_ms: 700 },
        { tool_calls: [{ id: "b2", name: "add", args: { a: 6, b: 6 } }], delay_ms: 700 },
        { content: "10 and 12", delay_ms: 700 },
      ],
      { workers: 0 },
    );
    // the run executes on a worker of its own, so it goes on while the server restarts
    const worker = server.runtime.worker({ concurrency: 1 });
    await worker.start();
    let replacement: RunningServer | undefined;
    try {
      const thread = await client.threads.create();
      const modes = ["values", "updates", "custom"] as const;
      const parts: Part[] = [];
      let runId = "";
      for await (const part of client.runs.stream(thread.thread_id, "agent", { input: { messages: ["add twice"] }, streamMode: [...modes], onRunCreated: (meta) => (runId = meta.run_id) })) {
        parts.push(part as Part);
        if (replacement === undefined && parts.filter((p) => p.id !== undefined).length === 3) {
          await server.server.close();
          replacement = await startServer({ runtime: server.runtime, config: server.config, host: "127.0.0.1", port: server.server.port, workers: 0 });
        }
      }
      expect(replacement).toBeDefined();
      // the reconnect continued after the last part's id: no second metadata part, nothing twice or missing
      const durable = (list: Part[]) => list.filter((p) => p.id !== undefined).map((p) => ({ id: p.id, event: p.event, data: p.data }));
      expect(parts.filter((p) => p.event === "metadata").length).toBe(1);
      const full = (await collect(client.runs.joinStream(thread.thread_id, runId, { streamMode: [...modes] }))) as Part[];
      expect(durable(parts)).toEqual(durable(full));
      // the reconnect asked again with the original modes (from Location): updates kept coming
      expect(parts.filter((p) => p.event === "updates").length).toBe(full.filter((p) => p.event === "updates").length);
      expect((parts.filter((p) => p.event === "custom").pop()?.data as { type: string }).type).toBe("model.finished");
    } finally {
      await replacement?.close();
      await worker.stop();
    }
  });

  itOnPrimary(backend)("onDisconnect cancel (useStream's default): a stream that ends at the interrupt leaves the run waiting; leaving mid-run cancels it", async () => {
    const { client } = await start([
      { tool_calls: [{ id: "call_write", name: "write_file", args: { path: "a.txt", content: "a" } }] },
      { content: "slow answer", delay_ms: 20_000 },
    ]);
    const thread = await client.threads.create();
    let runId = "";
    const parts = (await collect(
      client.runs.stream(thread.thread_id, "agent", { input: { messages: ["write a.txt"] }, streamMode: ["values"], onDisconnect: "cancel", onRunCreated: (meta) => (runId = meta.run_id) }),
    )) as Part[];
    expect(parts.some((p) => p.event === "values" && "__interrupt__" in (p.data as object))).toBe(true);
    expect(await client.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    // resume (a new run), then leave while the model is answering: that run is cancelled
    const abort = new AbortController();
    let resumedId = "";
    try {
      for await (const part of client.runs.stream(thread.thread_id, "agent", {
        command: { resume: { decisions: [{ type: "approve" }] } },
        streamMode: ["custom"],
        onDisconnect: "cancel",
        signal: abort.signal,
        onRunCreated: (meta) => (resumedId = meta.run_id),
      })) {
        if ((part.data as { type?: string }).type === "model.started") abort.abort();
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") throw error;
    }
    const final = await eventually(async () => {
      const run = await client.runs.get(thread.thread_id, resumedId);
      return (run.status as string) === "interrupted" ? run : undefined;
    });
    expect(final).toMatchObject({ status: "interrupted", stop_reason: "cancelled", resumes_run: runId });
    expect(await client.runs.get(thread.thread_id, runId)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: false });
  });

  itOnPrimary(backend)("a failed run: the stream ends with an error part, join and wait answer the official __error__ (the SDK's wait throws), the run has the stop reason", async () => {
    const { client } = await start([{ error: "the provider is down" }]);
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "agent", { input: { messages: ["hi"] }, streamMode: ["values"] }))) as Part[];
    const last = parts[parts.length - 1];
    expect(last?.event).toBe("error");
    expect(last?.data).toEqual({ error: "MODEL_FAILED", message: expect.stringContaining("the provider is down") });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run).toMatchObject({ status: "error", stop_reason: "model_failed" });
    const part = JSON.stringify(last?.data);
    expect(await client.runs.join(thread.thread_id, run?.run_id as string)).toEqual({ __error__: { error: "Error", message: part } });
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");
    // the thread's values keep what the agent recorded of the failure
    expect((await client.threads.getState(thread.thread_id)).values).toMatchObject({ stop_reason: "model_failed", error: { code: "MODEL_FAILED" } });
  });

  itOnPrimary(backend)("cancel stops a running run; join returns and the run is cancelled", async () => {
    const { server, client } = await start([{ content: "never said", delay_ms: 20_000 }]);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "take your time" }] } });
    // cancelled during its model round: "running" comes before the round starts, so wait for the call
    await eventually(async () => ((await client.runs.get(thread.thread_id, run.run_id)).status === "running" && server.model.calls.length > 0 ? true : undefined));
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    await client.runs.join(thread.thread_id, run.run_id);
    const cancelled = await client.runs.get(thread.thread_id, run.run_id);
    expect(cancelled).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    // the custom parts are the agent's steps: the model round the cancel stopped, and nothing after it
    const parts = (await collect(client.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["custom"] }))) as Part[];
    expect(parts.filter((p) => p.event === "custom").map((p) => (p.data as { type?: string }).type)).toEqual(["model.started"]);
    // cancelling it again, now that it ended, is answered as the official server answers it (202) and changes nothing
    await client.runs.cancel(thread.thread_id, run.run_id);
    expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
  });

  itOnPrimary(backend)("multitask: reject answers 409 while a run is active, enqueue queues behind it", async () => {
    const { client } = await start([{ content: "first", delay_ms: 600 }, { content: "second" }]);
    const thread = await client.threads.create();
    const first = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "one" }] } });
    const refused = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "two" }] }, multitaskStrategy: "reject" }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 409, message: "HTTP 409: Thread is already running a task. Wait for it to finish or choose a different multitask strategy." });
    const second = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "two" }] }, multitaskStrategy: "enqueue" });
    expect(["pending"]).toContain(second.status);
    const values = (await client.runs.join(thread.thread_id, second.run_id)) as Record<string, unknown>;
    expect(messagesOf(values).map((m) => [m.type, m.content])).toEqual([
      ["human", "one"],
      ["ai", "first"],
      ["human", "two"],
      ["ai", "second"],
    ]);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([
      [second.run_id, "success"],
      [first.run_id, "success"],
    ]);
  });

  itOnPrimary(backend)("messages-tuple: token chunks under the stored message's id, never the message again whole; a stateless run gets a new thread", async () => {
    const { client } = await start([{ content: "hello there, general kenobi", delay_ms: 400 }]);
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts = (await collect(
      client.runs.stream(null, "agent", {
        input: { messages: [{ type: "human", content: "greet me" }] },
        streamMode: ["messages-tuple", "values"],
        onRunCreated: (meta) => (created = meta),
      }),
    )) as Part[];
    const tuples = parts.filter((p) => p.event === "messages").map((p) => p.data as [Msg, Record<string, unknown>]);
    const final = messagesOf(parts.filter((p) => p.event === "values").pop()?.data);
    // live tokens, all under the id the answer is stored under, and no second copy of it
    expect(tuples.length).toBeGreaterThan(1);
    expect(tuples.every(([m]) => m.type === "ai" && m.id === final[1]?.id)).toBe(true);
    expect(tuples.every(([, meta]) => meta["langgraph_node"] === "model")).toBe(true);
    // what a client concatenates by id is the stored message
    const manager = new MessageTupleManager();
    for (const [m, meta] of tuples) manager.add(m as never, meta);
    expect(manager.get(final[1]?.id)?.chunk?.content).toBe("hello there, general kenobi");
    const thread = await client.threads.get(created?.thread_id as string);
    expect(thread.metadata).toMatchObject({ graph_id: "agent" });
    expect(messagesOf(thread.values).map((m) => m.type)).toEqual(["human", "ai"]);
  });

  itOnPrimary(backend)("messages (LangGraph's older mode): metadata at a message's first token, partials with the text so far, each message complete once; replayed without the live tokens", async () => {
    const { client } = await start([
      { content: "let me add", tool_calls: [{ id: "call_add", name: "add", args: { a: 2, b: 3 } }], delay_ms: 300 },
      { content: "the sum is 5, as computed", delay_ms: 300 },
    ]);
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "add 2 and 3" }] }, streamMode: ["messages", "values"] }))) as Part[];
    const stored = messagesOf(parts.filter((p) => p.event === "values").pop()?.data);
    expect(stored.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(parts.some((p) => p.event === "messages")).toBe(false);
    // each stored message complete exactly once, in the order the state got them
    const completed = parts.filter((p) => p.event === "messages/complete").flatMap((p) => p.data as Msg[]);
    expect(completed.map((m) => [m.type, m.id])).toEqual(stored.map((m) => [m.type, m.id]));
    // a streamed answer: its metadata first, then partials growing to its text, all before it is complete
    const answer = stored[3]?.id as string;
    const own = parts.map((p, index) => ({ ...p, index })).filter((p) => (p.event === "messages/metadata" && answer in (p.data as object)) || (p.event === "messages/partial" && (p.data as Msg[])[0]?.id === answer));
    expect(own[0]?.event).toBe("messages/metadata");
    expect((own[0]?.data as Record<string, { metadata: Record<string, unknown> }>)[answer]?.metadata).toMatchObject({ langgraph_node: "model", thread_id: thread.thread_id });
    const texts = own.slice(1).map((p) => (p.data as Msg[])[0]?.content as string);
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.every((text, index) => index === 0 || text.startsWith(texts[index - 1] as string))).toBe(true);
    expect(texts.at(-1)).toBe("the sum is 5, as computed");
    const completeAt = parts.findIndex((p) => p.event === "messages/complete" && (p.data as Msg[]).some((m) => m.id === answer));
    expect(completeAt).toBeGreaterThan(own.at(-1)?.index as number);
    // a replay has no live tokens: the same complete messages, in the same order
    const [run] = await client.runs.list(thread.thread_id);
    const replayed = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: ["messages"] }))) as Part[];
    expect(replayed.filter((p) => p.event.startsWith("messages")).map((p) => p.event)).toEqual(parts.filter((p) => p.event === "messages/complete").map((p) => p.event));
    expect(replayed.filter((p) => p.event === "messages/complete").flatMap((p) => (p.data as Msg[]).map((m) => m.id))).toEqual(stored.map((m) => m.id));
  });

  it("messages-tuple over two model rounds: one id per stored message, tokens after the previous round's tool update", async () => {
    const { client } = await start([
      { content: "let me add", tool_calls: [{ id: "call_add", name: "add", args: { a: 2, b: 3 } }], delay_ms: 300 },
      { content: "the sum is 5, as computed", delay_ms: 300 },
    ]);
    const thread = await client.threads.create();
    const parts = (await collect(
      client.runs.stream(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "add 2 and 3" }] }, streamMode: ["messages-tuple", "updates", "values"] }),
    )) as Part[];
    const stored = messagesOf(parts.filter((p) => p.event === "values").pop()?.data);
    expect(stored.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    const tuples = parts.filter((p) => p.event === "messages").map((p) => p.data as [Msg, Record<string, unknown>]);
    // every id a tuple carries is a stored message's; every stored non-human message is there
    expect([...new Set(tuples.map(([m]) => m.id))]).toEqual(stored.slice(1).map((m) => m.id));
    // the chunks a client concatenates by id make the stored messages, tool calls included: a
    // message streamed as chunks is never sent whole as well (its text would be there twice)
    const manager = new MessageTupleManager();
    for (const [m, meta] of tuples) manager.add(structuredClone(m) as never, meta);
    expect(stored.slice(1).map((m) => manager.get(m.id)?.chunk?.content)).toEqual(stored.slice(1).map((m) => m.content));
    // each labelled with the node that wrote it, as LangGraph labels it
    expect([...new Set(tuples.map(([m, meta]) => `${m.type} ${String(meta["langgraph_node"])}`))]).toEqual(["ai model", "tool tools"]);
    expect(tuples.filter(([m]) => m.type === "tool")).toHaveLength(1);
    const first = manager.get(stored[1]?.id)?.chunk as { content: unknown; tool_calls?: { id: string; name: string; args: unknown }[] };
    expect(first.content).toBe("let me add");
    expect(first.tool_calls?.map((c) => [c.id, c.name, c.args])).toEqual([["call_add", "add", { a: 2, b: 3 }]]);
    expect(manager.get(stored[3]?.id)?.chunk?.content).toBe("the sum is 5, as computed");
    // step order: the second round's first token comes after the first round's tool update
    const toolUpdate = parts.findIndex((p) => p.event === "updates" && "tools" in (p.data as object));
    const secondRound = parts.findIndex((p) => p.event === "messages" && (p.data as [Msg])[0].id === stored[3]?.id);
    expect(toolUpdate).toBeGreaterThan(-1);
    expect(secondRound).toBeGreaterThan(toolUpdate);
    const firstRound = parts.findIndex((p) => p.event === "messages" && (p.data as [Msg])[0].id === stored[1]?.id);
    expect(firstRound).toBeLessThan(toolUpdate);
  });

  it("resume as Agent Chat UI sends it: input {} or null beside the command, snake_case edited_action", async () => {
    const { server, client } = await start([
      { tool_calls: [{ id: "call_a", name: "write_file", args: { path: "a.txt", content: "first" } }] },
      { tool_calls: [{ id: "call_b", name: "write_file", args: { path: "b.txt", content: "second" } }] },
      { content: "done" },
    ]);
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "write two files" }] } })) as Record<string, unknown>;
    const first = (paused["__interrupt__"] as { value: { action_requests: { tool_call_id: string }[] } }[])[0]?.value;
    expect(first?.action_requests.map((r) => r.tool_call_id)).toEqual(["call_a"]);
    const edited = (await client.runs.wait(thread.thread_id, "agent", {
      input: {},
      command: { resume: { decisions: [{ type: "edit", edited_action: { name: "write_file", args: { path: "a.txt", content: "edited" } } }] } },
    })) as Record<string, unknown>;
    expect(readFileSync(join(server.workspace, "a.txt"), "utf8")).toBe("edited");
    const second = (edited["__interrupt__"] as { value: { action_requests: { tool_call_id: string }[] } }[])[0]?.value;
    expect(second?.action_requests.map((r) => r.tool_call_id)).toEqual(["call_b"]);
    const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": TEST_KEYS.alice },
      body: JSON.stringify({ assistant_id: "agent", input: null, command: { resume: { decisions: [{ type: "reject", message: "no" }] } } }),
    });
    expect(response.status).toBe(200);
    const done = (await response.json()) as Record<string, unknown>;
    expect("__interrupt__" in done).toBe(false);
    expect(messagesOf(done).map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "tool", "ai"]);
    expect(existsSync(join(server.workspace, "b.txt"))).toBe(false);
    // an input with messages beside a command is still refused, and no input without a command
    await expect(
      client.runs.wait(thread.thread_id, "agent", { input: { messages: ["hi"] }, command: { resume: { decisions: [{ type: "approve" }] } } }),
    ).rejects.toMatchObject({ status: 422, message: "HTTP 422: send either input or command, not both" });
    // `{}` is no input the agent can take: its own input check refuses it (422, the refused input named)
    await expect(client.runs.wait(thread.thread_id, "agent", { input: {} })).rejects.toMatchObject({ status: 422, message: expect.stringContaining('run input must be { "messages": [...] } with at least one message') });
    // three runs, each resume a new one; the refused requests created none
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.status, (r as unknown as { stop_reason: string }).stop_reason])).toEqual([["success", "completed"], ["success", "interrupt"], ["success", "interrupt"]]);
    expect(runs.map((r) => (r as unknown as { resumes_run: string | null }).resumes_run)).toEqual([runs[1]?.run_id, runs[2]?.run_id, null]);
  });

  itOnPrimary(backend)("threads: get, search by status, patch metadata, delete with its runs and checkpoints", async () => {
    const { client } = await start([{ content: "ok" }]);
    const thread = await client.threads.create({ metadata: { team: "blue" } });
    await expect(client.threads.create({ threadId: thread.thread_id })).rejects.toMatchObject({ status: 409 });
    expect((await client.threads.create({ threadId: thread.thread_id, ifExists: "do_nothing" })).thread_id).toBe(thread.thread_id);
    await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["hi"] } });
    // a run tags its thread with the graph, as LangGraph servers do (Agent Chat UI lists threads by it)
    expect((await client.threads.get(thread.thread_id)).metadata).toEqual({ team: "blue", graph_id: "agent", assistant_id: AGENT_ASSISTANT_ID });
    const other = await client.threads.create({ metadata: { team: "red" } });
    expect((await client.threads.search({ metadata: { team: "blue" } })).map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect((await client.threads.search({ status: "idle", sortBy: "created_at", sortOrder: "asc" })).map((t) => t.thread_id)).toEqual([thread.thread_id, other.thread_id]);
    const patched = await client.threads.update(thread.thread_id, { metadata: { note: "x" } });
    expect(patched.metadata).toEqual({ team: "blue", graph_id: "agent", assistant_id: AGENT_ASSISTANT_ID, note: "x" });
    await client.threads.delete(thread.thread_id);
    await expect(client.threads.get(thread.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(client.threads.getState(thread.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(client.runs.create(thread.thread_id, "agent", { input: { messages: ["again"] } })).rejects.toMatchObject({ status: 404 });
    const recreated = await client.runs.create(thread.thread_id, "agent", { input: { messages: ["again"] }, ifNotExists: "create" });
    const values = (await client.runs.join(thread.thread_id, recreated.run_id)) as Record<string, unknown>;
    // the deleted thread's checkpoints are gone: the new run starts a fresh conversation
    expect(messagesOf(values).map((m) => m.type)).toEqual(["human", "ai"]);
  });
});
