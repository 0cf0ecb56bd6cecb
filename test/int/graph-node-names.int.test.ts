/**
 * A user graph whose nodes are named like the built-in agent's (`guard`, `model`, `approval`,
 * `tools`; and `finish`, a name the agent once had) and whose tool node is named like a stream mode (`tools`) is a graph like
 * any other: through the official SDK, with every stream mode, it streams and runs exactly as
 * the same graph with other names — part for part, once the names, ids and times are set aside —
 * and its devmind events are the same too. Its chat model's tokens carry its own node's name,
 * its HITL interrupt is audited and resumed as any graph's, its plain `ToolNode` runs the tool
 * once. (Names starting with `__` are refused when the graph loads: graphs-loading.int.test.ts.)
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Client, type StreamMode } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import { openBackend, PRIMARY_ENGINE } from "../helpers/databases.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };

/** The agent's node names, and the prefix the twin graph puts before each. */
const AGENT_NAMES = ["guard", "model", "approval", "tools", "finish"] as const;
type Names = Record<(typeof AGENT_NAMES)[number], string>;
const TWIN_PREFIX = "my_";
const AS_AGENT: Names = { guard: "guard", model: "model", approval: "approval", tools: "tools", finish: "finish" };
const TWIN: Names = { guard: "my_guard", model: "my_model", approval: "my_approval", tools: "my_tools", finish: "my_finish" };

const MODES: StreamMode[] = ["values", "updates", "messages-tuple", "custom", "tasks", "checkpoints", "debug", "tools"];
const SCRIPT = [{ content: "Let me write it.", tool_calls: [{ id: "call_write", name: "write_line", args: { line: "hello" } }] }, { content: "Written." }];

/**
 * The agent's shape as a user would write it: a guard that reports through `config.writer`, a
 * model node, an approval node raising LangChain's HITL request for each tool call, a plain
 * `ToolNode` (ledgered when the graph loads), and a finish node.
 */
function agentShaped(names: Names, written: string[]) {
  const writeLine = tool(
    async ({ line }: { line: string }) => {
      written.push(line);
      return `wrote: ${line}`;
    },
    { name: "write_line", description: "Write one line.", schema: z.object({ line: z.string() }) },
  );
  const model = new ScriptedChatModel(SCRIPT).bindTools([writeLine]);
  const lastAi = (messages: BaseMessage[]): AIMessage | undefined => messages.filter((m): m is AIMessage => AIMessage.isInstance(m)).at(-1);
  return new StateGraph(MessagesAnnotation)
    .addNode(names.guard, (state: typeof MessagesAnnotation.State, config) => {
      config.writer?.({ checked: state.messages.length });
      return {};
    })
    .addNode(names.model, async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode(names.approval, (state: typeof MessagesAnnotation.State) => {
      const calls = lastAi(state.messages)?.tool_calls ?? [];
      const answer = interrupt({
        actionRequests: calls.map((call) => ({ name: call.name, args: call.args, description: `run ${call.name}` })),
        reviewConfigs: calls.map((call) => ({ actionName: call.name, allowedDecisions: ["approve", "reject"] })),
      }) as { decisions: { type: string }[] };
      if (answer.decisions.some((decision) => decision.type !== "approve")) throw new Error("this test approves");
      return {};
    })
    .addNode(names.tools, new ToolNode([writeLine]))
    .addNode(names.finish, () => ({}))
    .addEdge(START, names.guard)
    .addEdge(names.guard, names.model)
    .addConditionalEdges(names.model, (state: typeof MessagesAnnotation.State) => ((lastAi(state.messages)?.tool_calls ?? []).length > 0 ? names.approval : names.finish), [names.approval, names.finish])
    .addEdge(names.approval, names.tools)
    .addEdge(names.tools, names.guard)
    .addEdge(names.finish, END);
}

/** Ids: uuids, LangGraph's interrupt ids (32 hex digits), digests of values holding them (64). */
const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b|\b[0-9a-f]{64}\b/gi;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?/g;
const TWIN_NAME = new RegExp(`\\b${TWIN_PREFIX}(${AGENT_NAMES.join("|")})\\b`, "g");

/** `value` with the twin's node names as the agent's and its graph id as the other's, object keys sorted (JSONB orders keys by length), durations 0. */
function canonical(value: unknown): unknown {
  if (value === "twin") return "named";
  if (typeof value === "string") return value.replace(TWIN_NAME, "$1");
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, item]) => [key.replace(TWIN_NAME, "$1"), key === "duration_ms" ? 0 : canonical(item)] as const);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Each item as canonical JSON, times as `<time>` and every id as `<idN>`, N its order of first appearance across all items. */
function comparable(items: unknown[]): string[] {
  const ids = new Map<string, string>();
  return items.map((item) =>
    JSON.stringify(canonical(item))
      .replace(TIME, "<time>")
      .replace(ID, (id) => {
        const key = id.toLowerCase();
        if (!ids.has(key)) ids.set(key, `<id${ids.size}>`);
        return ids.get(key) as string;
      }),
  );
}

describe(`a user graph with nodes named like the agent's, through the SDK on ${PRIMARY_ENGINE}`, () => {
  let owner: Database;
  let server: TestServer;
  let client: Client;
  const written = { named: [] as string[], twin: [] as string[] };
  beforeAll(async () => {
    owner = await openBackend(PRIMARY_ENGINE);
    server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, named: agentShaped(AS_AGENT, written.named), twin: agentShaped(TWIN, written.twin) } });
    client = new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice });
  });
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  /** Runs the graph to its approval and resumes it with an approval, streaming both runs in every mode; its parts, devmind events, final state. */
  const converse = async (graph: string): Promise<{ parts: Part[][]; events: unknown[]; messages: { type: string; content: unknown }[]; runs: unknown[] }> => {
    const thread = await client.threads.create();
    const asked = (await collect(client.runs.stream(thread.thread_id, graph, { input: { messages: [{ type: "human", content: "write hello" }] }, streamMode: MODES }))) as Part[];
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const approved = (await collect(client.runs.stream(thread.thread_id, graph, { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: MODES }))) as Part[];
    const runs = (await client.runs.list(thread.thread_id)).reverse();
    const events: unknown[] = [];
    for (const run of runs) {
      const response = await fetch(`${server.url}/runs/${run.run_id}/events?follow=0`, { headers: { "x-api-key": TEST_KEYS.alice } });
      for (const line of (await response.text()).split("\n")) if (line.startsWith("data: ")) events.push(JSON.parse(line.slice(6)));
    }
    const state = await client.threads.getState<{ messages: { type: string; content: unknown }[] }>(thread.thread_id);
    return {
      parts: [asked, approved],
      events,
      messages: state.values.messages,
      runs: runs.map((run) => [run.status, (run as { stop_reason?: string }).stop_reason]),
    };
  };

  it("runs, streams and records exactly as the same graph with other node names; its names are its own in every part", async () => {
    const named = await converse("named");
    const twin = await converse("twin");

    // it ran as the agent-shaped graph it is: approval, one tool call, the answer
    expect(named.runs).toEqual([
      ["success", "interrupt"],
      ["success", "completed"],
    ]);
    expect(named.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "write hello"],
      ["ai", "Let me write it."],
      ["tool", "wrote: hello"],
      ["ai", "Written."],
    ]);
    expect(written.named).toEqual(["hello"]);
    const [asked, approved] = named.parts as [Part[], Part[]];
    // updates under the graph's own names, one per node that ran (a node that wrote nothing
    // included, as `{}`, as LangGraph sends it; but the approval node that ran again on the
    // resume, whose result the state does not show — the same for any name, see the twin below)
    const updated = (parts: Part[]): string[] => parts.filter((p) => p.event === "updates").flatMap((p) => Object.keys(p.data as object));
    expect(updated(asked)).toEqual(["guard", "model", "__interrupt__"]);
    expect(updated(approved)).toEqual(["tools", "guard", "model", "finish"]);
    // the guard's custom writes, under the mode's name
    expect([...asked, ...approved].filter((p) => p.event === "custom").map((p) => p.data)).toEqual([{ checked: 1 }, { checked: 3 }]);
    // messages-tuple: the model's tokens live and the tool's message whole, each once (a resume
    // sends nothing of the thread's earlier messages), labelled with the graph's own node
    const tuples = [...asked, ...approved].filter((p) => p.event === "messages").map((p) => p.data as [{ id: string; type: string; content: unknown }, { langgraph_node: string }]);
    const byMessage = new Map<string, [string, string, string]>();
    for (const [message, metadata] of tuples) {
      const [, text] = byMessage.get(message.id) ?? [message.type, ""];
      byMessage.set(message.id, [message.type, text + String(message.content), metadata.langgraph_node]);
    }
    expect([...byMessage.values()]).toEqual([
      ["ai", "Let me write it.", "model"],
      ["tool", "wrote: hello", "tools"],
      ["ai", "Written.", "model"],
    ]);
    // the tool node's LangChain tool events (mode `tools`), the node named `tools` among the tasks
    expect(approved.filter((p) => p.event === "tools").map((p) => (p.data as { event: string; name: string }).event)).toEqual(["on_tool_start", "on_tool_end"]);
    expect(approved.filter((p) => p.event === "tasks" && "triggers" in (p.data as object)).map((p) => (p.data as { name: string }).name)).toEqual(["approval", "tools", "guard", "model", "finish"]);
    // devmind's audit and events: the HITL request and decision as for any graph
    const types = (named.events as { type: string }[]).map((event) => event.type);
    expect(types.filter((type) => type.startsWith("approval."))).toEqual(["approval.requested", "approval.decided"]);
    expect((named.events as { type: string; node?: string }[]).filter((event) => event.type === "node.started").map((event) => event.node)).toEqual(["guard", "model", "approval", "approval", "tools", "guard", "model", "finish"]);

    // and every part of every mode, every event, the same as the twin's, names aside (but where
    // the live token chunks fall among the parts, which depends on when they came)
    expect(twin.runs).toEqual(named.runs);
    expect(written.twin).toEqual(["hello"]);
    const durable = (parts: Part[][]): unknown[] => parts.flat().flatMap(({ event, data, id }) => (event === "messages" && id === undefined ? [] : [{ event, data }]));
    expect(comparable(durable(twin.parts))).toEqual(comparable(durable(named.parts)));
    expect(comparable(twin.events)).toEqual(comparable(named.events));
  });
});
