import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { assistantIdFor } from "../../src/graphs/assistant-id.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkRefusal as refusal, sdkServers } from "../helpers/sdk-server.js";
import { TEST_KEYS } from "../helpers/server.js";

/** A graph that writes down what its run was given: configurable keys, context and tags. */
const seenState = Annotation.Root({ text: Annotation<string>(), seen: Annotation<Record<string, unknown>>() });
const echoGraph = new StateGraph(seenState)
  .addNode("look", (state: typeof seenState.State, config: LangGraphRunnableConfig) => {
    const configurable = config.configurable ?? {};
    return {
      seen: {
        text: state.text,
        tone: configurable["tone"] ?? null,
        model: configurable["model"] ?? null,
        context: (config as { context?: unknown }).context ?? null,
        assistant_id: (config.metadata ?? {})["assistant_id"] ?? null,
      },
    };
  })
  .addEdge(START, "look")
  .addEdge("look", END)
  .compile();

/** A parent graph with one subgraph node, `inner`, of two nodes (LangGraph's xray expands only subgraphs of more than one). */
const innerGraph = new StateGraph(Annotation.Root({ text: Annotation<string>() }))
  .addNode("shout", (state: { text: string }) => ({ text: state.text.toUpperCase() }))
  .addNode("mark", (state: { text: string }) => ({ text: `${state.text}!` }))
  .addEdge(START, "shout")
  .addEdge("shout", "mark")
  .addEdge("mark", END)
  .compile();
const nestedGraph = new StateGraph(Annotation.Root({ text: Annotation<string>() }))
  .addNode("inner", innerGraph)
  .addEdge(START, "inner")
  .addEdge("inner", END)
  .compile();

describe.each(BACKENDS)("assistants through the official SDK on %s", (backend) => {
  const servers = sdkServers(backend, { agent: false, echo: echoGraph, nested: nestedGraph });
  const start = async (workers = 1): Promise<Client> => (await servers(workers)).client;

  itOnPrimary(backend)("create, get, update (versions), setLatest, search, count and delete behave as LangGraph Platform's", async () => {
    const client = await start(0);
    const defaults = await client.assistants.search();
    expect(defaults.map((a) => [a.assistant_id, a.graph_id, a.name, a.version, a.metadata])).toEqual([
      [assistantIdFor("echo"), "echo", "echo", 1, { created_by: "system" }],
      [assistantIdFor("nested"), "nested", "nested", 1, { created_by: "system" }],
    ]);

    const loud = await client.assistants.create({ graphId: "echo", name: "Loud echo", description: "shouts", config: { configurable: { tone: "loud" } }, context: { user: "ann" }, metadata: { team: "a" } });
    expect(loud).toMatchObject({ graph_id: "echo", name: "Loud echo", description: "shouts", config: { configurable: { tone: "loud" } }, context: { user: "ann" }, metadata: { team: "a" }, version: 1 });
    const fixedId = "3f1c3c0e-0000-4000-8000-000000000001";
    const quiet = await client.assistants.create({ graphId: "echo", assistantId: fixedId, name: "Quiet echo", metadata: { team: "b" } });
    expect(quiet.assistant_id).toBe(fixedId);
    expect(await refusal(client.assistants.create({ graphId: "echo", assistantId: fixedId }))).toEqual({ status: 409, message: "HTTP 409: Assistant already exists" });
    expect((await client.assistants.create({ graphId: "echo", assistantId: fixedId, ifExists: "do_nothing", name: "ignored" })).name).toBe("Quiet echo");
    expect(await refusal(client.assistants.create({ graphId: "missing" }))).toMatchObject({ status: 422, message: expect.stringContaining("graph_id") });
    expect(await refusal(client.assistants.create({ graphId: "echo", config: { run_name: "x" } as never }))).toMatchObject({ status: 422, message: expect.stringContaining("config.run_name") });

    // newest first by default; filters by graph, name (substring, any case) and metadata; select; pagination headers
    expect((await client.assistants.search({ graphId: "echo" })).map((a) => a.name)).toEqual(["Quiet echo", "Loud echo", "echo"]);
    expect((await client.assistants.search({ name: "ECHO", metadata: { team: "a" } })).map((a) => a.assistant_id)).toEqual([loud.assistant_id]);
    expect((await client.assistants.search({ sortBy: "name", sortOrder: "asc", select: ["name"] }))).toEqual([{ name: "Loud echo" }, { name: "Quiet echo" }, { name: "echo" }, { name: "nested" }]);
    const paged = await client.assistants.search({ limit: 2, offset: 1, includePagination: true });
    expect([paged.assistants.map((a) => a.name), paged.next]).toEqual([["Loud echo", "echo"], "3"]);
    expect(await client.assistants.count()).toBe(4);
    expect(await client.assistants.count({ graphId: "echo", metadata: { team: "b" } })).toBe(1);

    // update: a new version, metadata merged; setLatest goes back; versions newest first
    const updated = await client.assistants.update(loud.assistant_id, { config: { configurable: { tone: "whisper" } }, metadata: { stage: "beta" } });
    expect(updated).toMatchObject({ version: 2, name: "Loud echo", config: { configurable: { tone: "whisper" } }, context: { user: "ann" }, metadata: { team: "a", stage: "beta" } });
    const versions = await client.assistants.getVersions(loud.assistant_id);
    expect(versions.map((v) => [v.version, v.config, v.metadata])).toEqual([
      [2, { configurable: { tone: "whisper" } }, { team: "a", stage: "beta" }],
      [1, { configurable: { tone: "loud" } }, { team: "a" }],
    ]);
    expect((await client.assistants.getVersions(loud.assistant_id, { metadata: { stage: "beta" } })).map((v) => v.version)).toEqual([2]);
    const back = await client.assistants.setLatest(loud.assistant_id, 1);
    expect([back.version, back.config, back.metadata]).toEqual([1, { configurable: { tone: "loud" } }, { team: "a" }]);
    expect((await client.assistants.get(loud.assistant_id)).version).toBe(1);
    expect(await refusal(client.assistants.setLatest(loud.assistant_id, 9))).toMatchObject({ status: 404 });

    // the default assistant can be updated too, by graph id or uuid
    expect((await client.assistants.update("nested", { name: "Nested graph" })).assistant_id).toBe(assistantIdFor("nested"));

    await client.assistants.delete(quiet.assistant_id);
    expect(await refusal(client.assistants.get(quiet.assistant_id))).toEqual({ status: 404, message: "HTTP 404: Assistant not found" });
    // deleteThreads: the assistant's threads go with it (server-official-errors tests which ones)
    const loudThread = await client.threads.create({ metadata: { assistant_id: loud.assistant_id } });
    await client.assistants.delete(loud.assistant_id, { deleteThreads: true });
    expect(await refusal(client.assistants.get(loud.assistant_id))).toEqual({ status: 404, message: "HTTP 404: Assistant not found" });
    expect(await refusal(client.threads.get(loudThread.thread_id))).toEqual({ status: 404, message: `HTTP 404: Thread with ID ${loudThread.thread_id} not found` });
    expect(await client.assistants.count()).toBe(2);
  });

  itOnPrimary(backend)("an assistant's config and context are its runs' defaults; the run's own values win key by key", async () => {
    const client = await start();
    const bot = await client.assistants.create({ graphId: "echo", config: { configurable: { tone: "loud", model: "small" } }, context: { user: "ann", lang: "en" } });
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, bot.assistant_id, { input: { text: "hi" }, config: { configurable: { model: "large" } }, context: { lang: "fr" } })) as { seen: unknown };
    expect(first.seen).toEqual({ text: "hi", tone: "loud", model: "large", context: { user: "ann", lang: "fr" }, assistant_id: bot.assistant_id });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run?.assistant_id).toBe(bot.assistant_id);

    await client.assistants.update(bot.assistant_id, { config: { configurable: { tone: "soft" } }, context: { user: "bob" } });
    const second = (await client.runs.wait(thread.thread_id, bot.assistant_id, { input: { text: "again" } })) as { seen: unknown };
    expect(second.seen).toEqual({ text: "again", tone: "soft", model: null, context: { user: "bob" }, assistant_id: bot.assistant_id });

    // the graph's default assistant: no config, no context
    const plain = (await client.runs.wait(null, "echo", { input: { text: "plain" } })) as { seen: unknown };
    expect(plain.seen).toEqual({ text: "plain", tone: null, model: null, context: null, assistant_id: assistantIdFor("echo") });
    expect(await refusal(client.runs.wait(null, "3f1c3c0e-0000-4000-8000-00000000dead", { input: { text: "x" } }))).toMatchObject({ status: 404, message: expect.stringContaining('No assistant found for "3f1c3c0e-0000-4000-8000-00000000dead"') });
  });

  itOnPrimary(backend)("getSubgraphs lists a graph's subgraphs by namespace with their schemas", async () => {
    const client = await start(0);
    const subgraphs = await client.assistants.getSubgraphs("nested");
    expect(Object.keys(subgraphs)).toEqual(["inner"]);
    // the official server's shape: LangGraph's names (state, input, output, config), not the SDK type's *_schema
    const inner = subgraphs["inner"] as unknown as { state: { properties: object }; input: unknown; output: unknown; config: unknown };
    expect(Object.keys(inner).sort()).toEqual(["config", "input", "output", "state"]);
    expect(Object.keys(inner.state.properties)).toEqual(["text"]);
    expect(Object.keys(await client.assistants.getSubgraphs("nested", { namespace: "inner" }))).toEqual(["inner"]);
    expect(await client.assistants.getSubgraphs("echo")).toEqual({});
  });

  itOnPrimary(backend)("getGraph draws the parent's nodes, and with xray the subgraph's nodes under its namespace", async () => {
    const { server, client } = await servers(0);
    const ids = (drawing: { nodes: { id: string | number }[] }): string[] => drawing.nodes.map((node) => String(node.id)).sort();
    const flat = await client.assistants.getGraph("nested");
    expect(ids(flat)).toEqual(["__end__", "__start__", "inner"]);
    const expanded = await client.assistants.getGraph("nested", { xray: true });
    expect(ids(expanded)).toEqual(["__end__", "__start__", "inner:mark", "inner:shout"]);
    expect(expanded.edges.map((edge) => [edge.source, edge.target]).sort()).toEqual([
      ["__start__", "inner:shout"],
      ["inner:mark", "__end__"],
      ["inner:shout", "inner:mark"],
    ]);
    expect(ids(await client.assistants.getGraph("nested", { xray: 1 }))).toEqual(ids(expanded));
    expect(ids(await client.assistants.getGraph("nested", { xray: false }))).toEqual(ids(flat));
    const bad = await fetch(`${server.url}/assistants/nested/graph?xray=deep`, { headers: { "x-api-key": TEST_KEYS.alice } });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("xray");
  });

  it("smoke: an assistant created through the SDK is stored and runs with its config", async () => {
    const client = await start();
    const bot = await client.assistants.create({ graphId: "echo", config: { configurable: { tone: "dry" } }, metadata: { engine: backend } });
    expect((await client.assistants.search({ metadata: { engine: backend } })).map((a) => a.assistant_id)).toEqual([bot.assistant_id]);
    const done = (await client.runs.wait(null, bot.assistant_id, { input: { text: "x" } })) as { seen: { tone: unknown } };
    expect(done.seen.tone).toBe("dry");
  });
});
