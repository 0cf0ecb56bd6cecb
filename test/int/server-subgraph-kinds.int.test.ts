/**
 * The three ways a LangGraph.js subgraph keeps its checkpoints, streamed with `stream_subgraphs`:
 * inherited (its own namespace `node:task_id` per invocation), `checkpointer: false` (nothing
 * stored) and `checkpointer: true` (one history per thread under `node`, every invocation in it).
 * Two runs on one thread, outlined and compared with LangGraph's own stream of the same graph.
 */
import { randomUUID } from "node:crypto";
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { Client, type StreamMode } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, openBackend } from "../helpers/databases.js";
import { readProtocolEvents, rootEnds, sendCommand } from "../helpers/protocol-sse.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { readSse } from "../helpers/server-sse.js";

type Part = { event: string; data: unknown; id?: string };
type Kind = "inherited" | "unsaved" | "persistent";

/** `research` runs a subgraph whose node `think` writes a custom event and answers; the subgraph stored as `kind` says. */
function researchGraph(kind: Kind, checkpointer?: MemorySaver) {
  let answers = 0;
  const researcher = new StateGraph(MessagesAnnotation)
    .addNode("think", (_state, config: LangGraphRunnableConfig) => {
      config.writer?.({ thought: "hard" });
      answers += 1;
      return { messages: [new AIMessage({ id: `ai-${kind}-${answers}-${randomUUID()}`, content: "thought" })] };
    })
    .addEdge(START, "think")
    .addEdge("think", END)
    .compile(kind === "inherited" ? {} : { checkpointer: kind === "persistent" });
  return new StateGraph(MessagesAnnotation).addNode("research", researcher).addEdge(START, "research").addEdge("research", END).compile(checkpointer === undefined ? {} : { checkpointer });
}

const MODES = ["values", "updates", "checkpoints", "tasks", "custom", "messages-tuple"] satisfies StreamMode[];
/** The same modes as LangGraph names them (`messages-tuple` is its `messages`). */
const GRAPH_MODES = ["values", "updates", "checkpoints", "tasks", "custom", "messages"] as const;

/** A part as a line: its mode and namespace (`node` for `node:task_id`), and what identifies it. */
function outline(parts: readonly Part[]): string[] {
  return parts.map(({ event: name, data }) => {
    const [event = name, ...ns] = name.split("|");
    const where = ns.length === 0 ? event : `${event}|${ns.map((segment) => segment.split(":")[0]).join("|")}`;
    const record = data as Record<string, unknown>;
    if (event === "checkpoints") return `${where} ${String((record["metadata"] as { step: number }).step)} -> ${(record["next"] as string[]).join(",")}`;
    if (event === "tasks") return `${where} ${String(record["name"])} ${"input" in record ? "start" : "result"}`;
    if (event === "updates") return `${where} ${Object.keys(record).join(",")}`;
    if (event === "values") return `${where} ${(record["messages"] as unknown[]).length} messages`;
    if (event === "custom") return `${where} ${JSON.stringify(data)}`;
    if (event === "messages") {
      const [message, metadata] = data as [{ content?: unknown; kwargs?: { content?: unknown } }, Record<string, unknown>];
      // LangGraph's own parts are LangChain-serialized (`kwargs`), the server's plain
      const ns = String(metadata["langgraph_checkpoint_ns"]).split("|").map((segment) => segment.split(":")[0]).join("|");
      return `${where} ${String(message.content ?? message.kwargs?.content)} ${String(metadata["langgraph_node"])} ${ns} step ${String(metadata["langgraph_step"])}`;
    }
    return where;
  });
}

/** LangGraph's own stream of two runs of `kind` on one thread (MemorySaver), as parts. */
async function langGraphRuns(kind: Kind): Promise<Part[][]> {
  const graph = researchGraph(kind, new MemorySaver());
  const runs: Part[][] = [];
  for (const content of ["first", "second"]) {
    const parts: Part[] = [];
    const stream = await graph.stream({ messages: [{ role: "user", content }] }, { configurable: { thread_id: "t" }, subgraphs: true, streamMode: [...GRAPH_MODES] });
    for await (const [ns, mode, data] of stream as AsyncIterable<[string[], string, unknown]>) parts.push({ event: [mode, ...ns].join("|"), data: JSON.parse(JSON.stringify(data)) });
    runs.push(parts);
  }
  return runs;
}

describe.each(BACKENDS)("subgraph kinds with stream_subgraphs on %s", (backend) => {
  let owner: Database;
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    owner = await openBackend(backend);
    server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, inherited: researchGraph("inherited"), unsaved: researchGraph("unsaved"), persistent: researchGraph("persistent") } });
    client = new Client({ apiUrl: server.url, defaultHeaders: { "x-api-key": TEST_KEYS.alice } });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  /** Two runs of `kind` on one thread through devmind, streamed live; and each run's stream read again. */
  async function devmindRuns(kind: Kind): Promise<{ live: Part[][]; again: Part[][] }> {
    const thread = await client.threads.create();
    const live: Part[][] = [];
    for (const content of ["first", "second"]) {
      const parts = (await collect(client.runs.stream(thread.thread_id, kind, { input: { messages: [{ type: "human", content }] }, streamMode: MODES, streamSubgraphs: true }))) as Part[];
      expect(parts.map((part) => part.event)).not.toContain("error");
      live.push(parts.slice(1).map(({ event, data }) => ({ event, data })));
    }
    const again: Part[][] = [];
    for (const run of (await client.runs.list(thread.thread_id)).reverse()) {
      const join = `${server.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream?${MODES.map((mode) => `stream_mode=${mode}`).join("&")}&stream_subgraphs=true`;
      again.push((await readSse(await fetch(join, { headers: { "x-api-key": TEST_KEYS.alice } }))).slice(1).map(({ event, data }) => ({ event, data })));
    }
    return { live, again };
  }

  it("inherited: both runs as LangGraph streams them, a namespace per invocation; read again alike", async () => {
    const official = await langGraphRuns("inherited");
    const { live, again } = await devmindRuns("inherited");
    expect(live.map(outline)).toEqual(official.map(outline));
    expect(again).toEqual(live);
  });

  it("checkpointer: true: one namespace named by the node, each run with its own invocation's checkpoints, as LangGraph streams them; read again alike", async () => {
    const official = await langGraphRuns("persistent");
    const { live, again } = await devmindRuns("persistent");
    // no namespace with a task id: LangGraph names a persistent subgraph by its node
    expect(live.flat().filter((part) => part.event.includes("|research:"))).toEqual([]);
    expect(live.map(outline)).toEqual(official.map(outline));
    expect(again).toEqual(live);
  });

  it("checkpointer: false: the parent's parts as LangGraph streams them, and of the subgraph what is stored (its custom events; its message as the parent's); nothing fails or waits", async () => {
    const official = await langGraphRuns("unsaved");
    const started = Date.now();
    const { live, again } = await devmindRuns("unsaved");
    // a subgraph that stores nothing has no checkpoints to wait for (was: 5 s per task start)
    expect(Date.now() - started).toBeLessThan(4_000);
    const stored = (parts: Part[]): Part[] => parts.filter((part) => !part.event.includes("|") || part.event.startsWith("custom|"));
    const withoutMessages = (lines: string[]): string[] => lines.filter((line) => !line.startsWith("messages"));
    expect(live.map(outline).map(withoutMessages)).toEqual(official.map(stored).map(outline).map(withoutMessages));
    // its node's message is in its parent's state only: the parent's message, labelled by the parent's node, before its update
    for (const run of live.map(outline)) {
      const at = run.findIndex((line) => line.startsWith("messages"));
      expect([run[at]?.split(" step ")[0], run[at + 1]]).toEqual(["messages thought research research", "updates research"]);
      expect(run.filter((line) => line.startsWith("messages")).length).toBe(1);
    }
    expect(again).toEqual(live);
  });

  it("the protocol: each kind's subgraph is one namespace started once and completed once per run, the same read again", async () => {
    for (const kind of ["inherited", "unsaved", "persistent"] as const) {
      const threadId = randomUUID();
      for (const content of ["first", "second"]) {
        const started = await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: kind, input: { messages: [{ role: "user", content }] } } }, { "x-api-key": TEST_KEYS.alice });
        expect(started.body["type"]).toBe("success");
        await readProtocolEvents(server.url, threadId, { channels: ["lifecycle"] }, { headers: { "x-api-key": TEST_KEYS.alice }, until: rootEnds(1) });
      }
      const all = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "values", "custom", "tasks"], since: 0 }, { headers: { "x-api-key": TEST_KEYS.alice }, until: rootEnds(2) })).events;
      const subgraph = all.filter((event) => event.method === "lifecycle" && event.params.namespace.length === 1).map((event) => `${event.params.namespace[0]?.split(":")[0]} ${String(event.params.data["event"])}`);
      expect({ kind, subgraph }).toEqual({ kind, subgraph: ["research started", "research completed", "research started", "research completed"] });
      expect(all.filter((event) => event.method === "custom").map((event) => event.params.data["payload"])).toEqual([{ thought: "hard" }, { thought: "hard" }]);
    }
  });
});
