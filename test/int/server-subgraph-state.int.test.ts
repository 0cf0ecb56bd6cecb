/**
 * The thread state APIs for a user graph `outer` whose node `research` is a compiled subgraph, in
 * LangGraph's three subgraph checkpointer modes: inherited (the default: one namespace
 * `research:<task_id>` per invocation), `checkpointer: false` (the subgraph stores nothing) and
 * `checkpointer: true` (one history per thread under `research`). Each answer is compared with
 * what LangGraph itself gives in-process for the same runs (the graph compiled with a MemorySaver):
 * `getState(config, {subgraphs: true})`, `getStateHistory`, at the graph's own namespace and the
 * subgraph's. Where LangGraph throws (a `checkpointer: false` subgraph's namespace: "No
 * checkpointer set") devmind answers as for a namespace holding nothing, and refuses an update
 * there naming the namespace, instead of a 500.
 */
import { randomUUID } from "node:crypto";
import { AIMessage } from "@langchain/core/messages";
import { Command, END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph, type StateSnapshot } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, openBackend } from "../helpers/databases.js";
import { sendCommand } from "../helpers/protocol-sse.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Mode = "inherit" | "false" | "true";
const MODES: Mode[] = ["inherit", "false", "true"];
const HEADERS = { "x-api-key": TEST_KEYS.alice, "content-type": "application/json" };

/** `outer`: START -> research (a subgraph whose one node answers with an AI message, asking first when `ask`) -> END. */
function outerGraph(mode: Mode, ask: boolean) {
  const research = new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => {
      const said = ask ? interrupt({ question: "go on?" }) : "-";
      return { messages: [new AIMessage(`answer ${state.messages.length} ${String(said)}`)] };
    })
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile(mode === "inherit" ? {} : { checkpointer: mode === "true" });
  return new StateGraph(MessagesAnnotation).addNode("research", research).addEdge(START, "research").addEdge("research", END);
}

const graphName = (mode: Mode, ask: boolean): string => `outer_${mode}${ask ? "_ask" : ""}`;

/** A state reduced to what both sides must agree on: message texts, next, tasks (their interrupts' values, a subgraph's own state), the namespace without task ids' values. */
interface Shape {
  messages: unknown[];
  next: string[];
  ns: string;
  tasks: { name: string; interrupts: unknown[]; state: Shape | null }[];
}

const withoutTaskIds = (ns: string): string => ns.replace(/:[0-9a-f-]{36}/g, ":<task>");

/** The shape of a ThreadState devmind answers. */
function wireShape(state: Record<string, any>): Shape {
  return {
    messages: ((state["values"]?.messages ?? []) as { content: unknown }[]).map((message) => message.content),
    next: state["next"],
    ns: withoutTaskIds(String(state["checkpoint"]?.checkpoint_ns ?? "")),
    tasks: (state["tasks"] as Record<string, any>[]).map((task) => ({ name: task["name"], interrupts: (task["interrupts"] as { value: unknown }[]).map((item) => item.value), state: task["state"] === null ? null : wireShape(task["state"]) })),
  };
}

/** The shape of a snapshot LangGraph gives in-process. */
function snapshotShape(snapshot: StateSnapshot): Shape {
  return {
    messages: (((snapshot.values as { messages?: { content: unknown }[] }).messages ?? []) as { content: unknown }[]).map((message) => message.content),
    next: [...snapshot.next],
    // a state without a checkpoint (nothing stored there) names no namespace on the wire, as the official server's
    ns: snapshot.config.configurable?.["checkpoint_id"] === undefined ? "" : withoutTaskIds(String(snapshot.config.configurable?.["checkpoint_ns"] ?? "")),
    tasks: snapshot.tasks.map((task) => ({ name: task.name, interrupts: task.interrupts.map((item) => item.value), state: task.state !== undefined && "values" in task.state ? snapshotShape(task.state as StateSnapshot) : null })),
  };
}

/** `outer` in-process with a MemorySaver: the reference answers. */
class InProcess {
  readonly graph;
  readonly config = { configurable: { thread_id: "reference" } };
  constructor(mode: Mode, ask: boolean) {
    this.graph = outerGraph(mode, ask).compile({ checkpointer: new MemorySaver() });
  }
  async ask(text: string): Promise<void> {
    await this.graph.invoke({ messages: [{ role: "user", content: text }] }, this.config);
  }
  async resume(value: string): Promise<void> {
    await this.graph.invoke(new Command({ resume: value }), this.config);
  }
  async state(checkpointNs?: string): Promise<Shape> {
    return snapshotShape(await this.graph.getState({ configurable: { ...this.config.configurable, ...(checkpointNs === undefined ? {} : { checkpoint_ns: checkpointNs }) } }, { subgraphs: true }));
  }
  /** The state (subgraphs) at each checkpoint of the graph's own history, newest first. */
  async statesAlongHistory(): Promise<Shape[]> {
    const states: Shape[] = [];
    for await (const snapshot of this.graph.getStateHistory(this.config)) states.push(snapshotShape(await this.graph.getState(snapshot.config, { subgraphs: true })));
    return states;
  }
  async history(checkpointNs?: string): Promise<Shape[]> {
    const states: Shape[] = [];
    for await (const snapshot of this.graph.getStateHistory({ configurable: { ...this.config.configurable, ...(checkpointNs === undefined ? {} : { checkpoint_ns: checkpointNs }) } })) states.push(snapshotShape(snapshot));
    return states;
  }
}

describe.each(BACKENDS)("thread state of a graph with a subgraph in each checkpointer mode, as LangGraph gives it, on %s", (backend) => {
  let owner: Database;
  let server: TestServer;
  beforeAll(async () => {
    owner = await openBackend(backend);
    const graphs: Record<string, unknown> = { agent: false };
    for (const mode of MODES) for (const ask of [false, true]) graphs[graphName(mode, ask)] = outerGraph(mode, ask);
    server = await startTestServer(owner, [], { graphs: graphs as never });
  });
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${server.url}${path}`, { method, headers: HEADERS, signal: AbortSignal.timeout(30_000), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    try {
      return { status: response.status, body: text === "" ? null : JSON.parse(text) };
    } catch {
      return { status: response.status, body: text };
    }
  };
  const ok = async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(method, path, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
    return answer.body;
  };
  /** A thread of `mode`'s graph after one run per text (each resumed with `resume<n>` when it asks), and the same in-process. */
  const twoRuns = async (mode: Mode, ask: boolean, texts = ["first", "second"]): Promise<{ threadId: string; reference: InProcess }> => {
    const threadId = randomUUID();
    const reference = new InProcess(mode, ask);
    await ok("POST", "/threads", { thread_id: threadId });
    for (const [index, text] of texts.entries()) {
      await ok("POST", `/threads/${threadId}/runs/wait`, { assistant_id: graphName(mode, ask), input: { messages: [{ role: "user", content: text }] } });
      await reference.ask(text);
      if (ask) {
        await ok("POST", `/threads/${threadId}/runs/wait`, { assistant_id: graphName(mode, ask), command: { resume: `resume${index + 1}` } });
        await reference.resume(`resume${index + 1}`);
      }
    }
    return { threadId, reference };
  };

  it.each(MODES)("checkpointer %s, two runs: state (subgraphs), history by POST and GET, the subgraph's history and state at checkpoint_ns equal LangGraph's", async (mode) => {
    const { threadId, reference } = await twoRuns(mode, false);
    const langgraph = await reference.state();
    expect(langgraph.messages).toEqual(["first", "answer 1 -", "second", "answer 3 -"]);
    expect(wireShape(await ok("GET", `/threads/${threadId}/state?subgraphs=true`))).toEqual(langgraph);
    expect(wireShape(await ok("POST", `/threads/${threadId}/state/checkpoint`, { subgraphs: true }))).toEqual(langgraph);

    const history = await reference.history();
    expect(history).toHaveLength(6);
    const posted = (await ok("POST", `/threads/${threadId}/history`, { limit: 10 })) as Record<string, any>[];
    expect(posted.map(wireShape)).toEqual(history);
    // the official server's GET form, with limit and before
    const got = (await ok("GET", `/threads/${threadId}/history`)) as Record<string, any>[];
    expect(got).toEqual(posted);
    const older = (await ok("GET", `/threads/${threadId}/history?limit=2&before=${posted[1]?.checkpoint.checkpoint_id}`)) as Record<string, any>[];
    expect(older.map((state) => state["checkpoint"].checkpoint_id)).toEqual(posted.slice(2, 4).map((state) => state["checkpoint"].checkpoint_id));

    // the subgraph's own states: LangGraph's when it keeps any (true: all six of both runs under
    // `research`; inherited: none under the bare name), none where it keeps none (false: LangGraph throws)
    const subHistory = (await ok("POST", `/threads/${threadId}/history`, { checkpoint: { checkpoint_ns: "research" } })) as Record<string, any>[];
    const subState = wireShape(await ok("POST", `/threads/${threadId}/state/checkpoint`, { subgraphs: true, checkpoint: { checkpoint_ns: "research" } }));
    if (mode === "false") {
      await expect(reference.history("research")).rejects.toMatchObject({ lc_error_code: "MISSING_CHECKPOINTER" });
      await expect(reference.state("research")).rejects.toMatchObject({ lc_error_code: "MISSING_CHECKPOINTER" });
      expect(subHistory).toEqual([]);
      expect(subState).toEqual({ messages: [], next: [], ns: "", tasks: [] });
    } else {
      expect(subHistory.map(wireShape)).toEqual(await reference.history("research"));
      expect(subState).toEqual(await reference.state("research"));
      expect(subHistory).toHaveLength(mode === "true" ? 6 : 0);
    }
    // the namespace the root history names for the first run's subgraph task (with its task id)
    const taskNs = posted[4]?.tasks[0]?.checkpoint?.checkpoint_ns as string | undefined;
    if (mode === "false") expect(taskNs).toBeUndefined();
    else {
      expect(taskNs).toMatch(/^research:[0-9a-f-]{36}$/);
      const atTask = (await ok("POST", `/threads/${threadId}/history`, { checkpoint: { checkpoint_ns: taskNs } })) as Record<string, any>[];
      // inherited: that invocation's own three states; true: the one history of the thread
      if (mode === "true") expect(atTask.map(wireShape)).toEqual(await reference.history("research"));
      else expect(atTask.map(wireShape).map((state) => state.messages)).toEqual([["first", "answer 1 -"], ["first"], []]);
    }
  });

  it("checkpointer false: the subgraph's namespace (bare or with a task id, as the stream names it) reads as holding nothing, an update there is 422 naming checkpoint_ns, never a 500", async () => {
    const { threadId } = await twoRuns("false", false);
    const tree = await sendCommand(server.url, threadId, { id: 1, method: "agent.getTree", params: {} }, HEADERS);
    const streamed = (tree.body as any).result.tree.children[0].namespace[0] as string;
    expect(streamed).toMatch(/^research:[0-9a-f-]{36}$/);
    for (const checkpointNs of ["research", streamed]) {
      expect(await ok("POST", `/threads/${threadId}/history`, { checkpoint: { checkpoint_ns: checkpointNs } })).toEqual([]);
      const state = await ok("POST", `/threads/${threadId}/state/checkpoint`, { subgraphs: true, checkpoint: { checkpoint_ns: checkpointNs } });
      expect(state).toMatchObject({ values: {}, next: [], tasks: [], created_at: null });
      // a checkpoint id there names nothing: 404, as any unknown checkpoint
      const some = (await ok("GET", `/threads/${threadId}/state`))["checkpoint"].checkpoint_id as string;
      expect((await call("POST", `/threads/${threadId}/state/checkpoint`, { checkpoint: { checkpoint_ns: checkpointNs, checkpoint_id: some } })).status).toBe(404);
      const update = await call("POST", `/threads/${threadId}/state`, { values: { messages: [{ role: "user", content: "edit" }] }, checkpoint: { checkpoint_ns: checkpointNs } });
      expect(update).toMatchObject({ status: 422, body: expect.stringContaining(`checkpoint_ns ${JSON.stringify(checkpointNs)} is compiled with checkpointer: false`) });
    }
    // the graph's own state is untouched and still updatable
    const before = await ok("GET", `/threads/${threadId}/state`);
    expect(before["values"].messages).toHaveLength(4);
    await ok("POST", `/threads/${threadId}/state`, { values: { messages: [{ role: "user", content: "edit" }] } });
    expect((await ok("GET", `/threads/${threadId}/state`))["values"].messages).toHaveLength(5);
  });

  it.each(MODES)("checkpointer %s, interrupted inside the subgraph in each of two runs: state (subgraphs), the subgraph's state, protocol state.get / listCheckpoints / agent.getTree, and the resume, as LangGraph", async (mode) => {
    const threadId = randomUUID();
    const assistantId = graphName(mode, true);
    const reference = new InProcess(mode, true);
    await ok("POST", "/threads", { thread_id: threadId });
    for (const [index, text] of ["first", "second"].entries()) {
      const paused = await ok("POST", `/threads/${threadId}/runs/wait`, { assistant_id: assistantId, input: { messages: [{ role: "user", content: text }] } });
      await reference.ask(text);
      expect(paused["__interrupt__"]).toEqual([{ id: expect.any(String), value: { question: "go on?" } }]);
      const langgraph = await reference.state();
      const state = await ok("GET", `/threads/${threadId}/state?subgraphs=true`);
      expect(wireShape(state)).toEqual(langgraph);
      // the paused subgraph's own state: its own (inherited, true), none kept (false)
      const inner = langgraph.tasks[0]?.state;
      if (mode === "false") expect(inner).toBeNull();
      else expect(inner).toMatchObject({ next: ["answer"], ns: mode === "true" ? "research" : "research:<task>", tasks: [{ name: "answer", interrupts: [{ question: "go on?" }] }] });
      if (mode === "true") expect(inner?.messages).toEqual(index === 0 ? ["first"] : ["first", "answer 1 resume1", "second"]);

      // the namespace the stream names it by, read as LangGraph reads it
      const tree = (await sendCommand(server.url, threadId, { id: 1, method: "agent.getTree", params: {} }, HEADERS)).body as any;
      expect(tree.result.tree).toMatchObject({ namespace: [], status: "interrupted", graph_name: assistantId, children: expect.arrayContaining([expect.objectContaining({ status: "interrupted", graph_name: "research" })]) });
      const named = (tree.result.tree.children as { namespace: string[] }[]).map((child) => child.namespace[0] as string);
      // one child, named as LangGraph streams it (a persistent subgraph by its node alone)
      if (mode === "true") expect(named).toEqual(["research"]);
      else expect(named).toEqual([expect.stringMatching(/^research:[0-9a-f-]{36}$/)]);
      for (const checkpointNs of named) {
        const at = wireShape(await ok("POST", `/threads/${threadId}/state/checkpoint`, { subgraphs: true, checkpoint: { checkpoint_ns: checkpointNs } }));
        if (mode === "false") expect(at).toEqual({ messages: [], next: [], ns: "", tasks: [] });
        // LangGraph's own read of it: the paused subgraph's state (true: `research`, whichever the name)
        else expect(at).toEqual(mode === "true" ? await reference.state(checkpointNs) : inner);
      }

      const got = (await sendCommand(server.url, threadId, { id: 2, method: "state.get", params: {} }, HEADERS)).body as any;
      expect(got.result.values.messages.map((message: { content: unknown }) => message.content)).toEqual(langgraph.messages);
      expect(got.result.checkpoint).toEqual({ id: state["checkpoint"].checkpoint_id, ns: "" });
      const listed = (await sendCommand(server.url, threadId, { id: 3, method: "state.listCheckpoints", params: { limit: 50 } }, HEADERS)).body as any;
      expect(listed.result.checkpoints.map((checkpoint: { id: string }) => checkpoint.id)).toEqual(((await ok("POST", `/threads/${threadId}/history`, { limit: 50 })) as Record<string, any>[]).map((item) => item["checkpoint"].checkpoint_id));
      expect(listed.result.checkpoints).toHaveLength((await reference.history()).length);

      // resumed: inherited and true finish the subgraph; false asks again, as LangGraph does
      // (its docs: a subgraph that interrupts needs a checkpointer)
      const resumed = await ok("POST", `/threads/${threadId}/runs/wait`, { assistant_id: assistantId, command: { resume: `resume${index + 1}` } });
      await reference.resume(`resume${index + 1}`);
      expect(wireShape(await ok("GET", `/threads/${threadId}/state?subgraphs=true`))).toEqual(await reference.state());
      if (mode === "false") expect(resumed["__interrupt__"]).toHaveLength(1);
      else expect(resumed["__interrupt__"]).toBeUndefined();
    }
    const history = (await ok("GET", `/threads/${threadId}/history?limit=50`)) as Record<string, any>[];
    expect(history.map(wireShape)).toEqual(await reference.history());
    // each checkpoint read again with its subgraphs, as LangGraph reads it: at the first run's pause
    // a `checkpointer: true` subgraph shows its one history's newest state (the second run's end),
    // an inherited one that invocation's own paused state
    const along = await reference.statesAlongHistory();
    const read = await Promise.all(history.map(async (state) => wireShape(await ok("GET", `/threads/${threadId}/state/${state["checkpoint"].checkpoint_id}?subgraphs=true`))));
    expect(read).toEqual(along);
    const firstPause = read.findLast((state) => state.next[0] === "research");
    if (mode === "true") expect(firstPause?.tasks[0]?.state?.messages).toEqual(["first", "answer 1 resume1", "second", "answer 3 resume2"]);
    if (mode === "inherit") expect(firstPause?.tasks[0]?.state?.messages).toEqual(["first", "answer 1 resume1"]);
  });
});
