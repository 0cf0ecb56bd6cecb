/**
 * Tokens go live to LangGraph streams from any chat model in any node, as the official server
 * streams them: a user graph whose `writer` node invokes the real ChatOpenAI, and the built-in
 * agent on the same model, both against the local OpenAI-compatible server on loopback. The
 * server holds the model's answer half-way until the SDK client has received its first tokens,
 * so a stream that sent them only once the node ended would never get there.
 */
import { ChatOpenAI } from "@langchain/openai";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { Client, type StreamMode } from "@langchain/langgraph-sdk";
import { MessageTupleManager } from "@langchain/langgraph-sdk/ui";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { BACKENDS, itOnPrimary, openBackend } from "../helpers/databases.js";
import { OpenAiTestServer, textReply } from "../helpers/openai-server.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown; id?: string };
type Msg = { type: string; content: unknown; id?: string };
type Tuple = [Msg, Record<string, unknown>];

const PIECES = ["Once ", "upon ", "a ", "time"];
/** The streamed reply's chunks: a first empty one with the role, one per piece, the finish. The server holds after the role and two pieces... */
const HOLD_AFTER = 3;
/** ...until the client got their text. */
const BEFORE_HOLD = "Once upon ";
/** Longest the server holds the answer when no token reaches the client (then the test fails). */
const HOLD_MAX_MS = 30_000;

describe.each(BACKENDS)("live tokens of any chat model through the SDK on %s", (backend) => {
  const openai = new OpenAiTestServer();
  const servers: TestServer[] = [];
  let owner: Database;
  beforeAll(async () => {
    await openai.start();
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
    await openai.close();
  });
  afterEach(async () => {
    openai.reset();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  const start = async (): Promise<Client> => {
    const model = new ChatOpenAI({ model: "gpt-test", apiKey: "sk-test-0123456789", configuration: { baseURL: openai.baseUrl }, maxRetries: 0 });
    // written as users write graphs: the node invokes the model, LangGraph streams its tokens
    const writing = new StateGraph(MessagesAnnotation)
      .addNode("writer", async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] }))
      .addEdge(START, "writer")
      .addEdge("writer", END);
    // the same node inside a subgraph
    const nested = new StateGraph(MessagesAnnotation).addNode("story", writing.compile()).addEdge(START, "story").addEdge("story", END);
    const config = loadConfig({ OPENAI_BASE_URL: openai.baseUrl, OPENAI_API_KEY: "sk-test-0123456789", OPENAI_MODEL: "agent-model" });
    const server = await startTestServer(owner, [], { workers: 1, graphs: { writing, nested }, chatModel: createChatModel(config) });
    servers.push(server);
    return new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice });
  };

  /**
   * Streams a run whose model answer the OpenAI server holds after its first pieces until this
   * client got their tokens (or HOLD_MAX_MS passed): the parts, and whether tokens released it.
   */
  const streamHeld = async (client: Client, threadId: string, graph: string, streamMode: StreamMode[], streamSubgraphs = false): Promise<{ parts: Part[]; releasedByTokens: boolean }> => {
    let release: () => void = () => undefined;
    let released = false;
    const until = new Promise<void>((resolve) => (release = resolve)).then(() => void (released = true));
    const fallback = setTimeout(release, HOLD_MAX_MS);
    const reply = textReply(PIECES);
    if (reply.kind !== "stream") throw new Error("a text reply streams");
    openai.enqueue({ ...reply, hold: { after: HOLD_AFTER, until } });
    const parts: Part[] = [];
    let releasedByTokens = false;
    try {
      for await (const part of client.runs.stream(threadId, graph, { input: { messages: [{ type: "human", content: "tell a story" }] }, streamMode, streamSubgraphs })) {
        parts.push(part as Part);
        const text = parts.map((p) => (p.event.split("|")[0] === "messages" ? String((p.data as Tuple)[0].content) : "")).join("");
        if (!released && text === BEFORE_HOLD) {
          releasedByTokens = true;
          release();
        }
      }
    } finally {
      clearTimeout(fallback);
      release();
    }
    return { parts, releasedByTokens };
  };

  const tuplesOf = (parts: Part[]): Tuple[] => parts.filter((p) => p.event === "messages").map((p) => p.data as Tuple);
  const lastValues = (parts: Part[]): Msg[] => (parts.filter((p) => p.event === "values").pop()?.data as { messages: Msg[] }).messages;

  it("a user graph's node: its ChatOpenAI tokens reach messages-tuple while the model answers, under the node's name and LangGraph's metadata; a replay has the message whole", async () => {
    const client = await start();
    const thread = await client.threads.create();
    const { parts, releasedByTokens } = await streamHeld(client, thread.thread_id, "writing", ["messages-tuple", "messages", "values"]);
    // the first tokens came while the model was held: live, not after the node ended
    expect(releasedByTokens).toBe(true);
    const stored = lastValues(parts);
    expect(stored.map((m) => [m.type, m.content])).toEqual([
      ["human", "tell a story"],
      ["ai", "Once upon a time"],
    ]);
    const answer = stored[1] as Msg;
    const tuples = tuplesOf(parts);
    // the model's own chunks, one part each
    expect(tuples.map(([m]) => m.content).filter((text) => text !== "")).toEqual(PIECES);
    // every chunk under the stored message's id, and nothing after the last values part
    expect(tuples.every(([m]) => m.type === "ai" && m.id === answer.id)).toBe(true);
    const lastMessage = parts.findLastIndex((p) => p.event === "messages");
    expect(lastMessage).toBeLessThan(parts.findLastIndex((p) => p.event === "values"));
    // LangGraph's metadata, the node's real name, the model's LangSmith parameters
    for (const [, metadata] of tuples) {
      expect(metadata).toMatchObject({
        langgraph_node: "writer",
        langgraph_step: 1,
        langgraph_triggers: ["branch:to:writer"],
        langgraph_path: ["__pregel_pull", "writer"],
        langgraph_checkpoint_ns: expect.stringMatching(/^writer:/),
        checkpoint_ns: metadata["langgraph_checkpoint_ns"],
        ls_provider: "openai",
        ls_model_name: "gpt-test",
        thread_id: thread.thread_id,
        graph_id: "writing",
      });
    }
    // what a client concatenates by id is the stored message, never twice
    const manager = new MessageTupleManager();
    for (const [m, metadata] of tuples) manager.add(structuredClone(m) as never, metadata);
    expect(manager.get(answer.id)?.chunk?.content).toBe("Once upon a time");
    // LangGraph's older messages mode: the metadata at the first token, the text so far at each
    const metadataPart = parts.find((p) => p.event === "messages/metadata")?.data as Record<string, { metadata: Record<string, unknown> }>;
    expect(metadataPart[answer.id as string]?.metadata).toMatchObject({ langgraph_node: "writer", ls_provider: "openai" });
    const partials = parts.filter((p) => p.event === "messages/partial").map((p) => (p.data as Msg[])[0]?.content as string);
    expect(partials.length).toBe(tuples.length);
    expect(partials.every((text, index) => index === 0 || text.startsWith(partials[index - 1] as string))).toBe(true);
    expect(partials.at(-1)).toBe("Once upon a time");

    // replayed after the run: no tokens, the message whole, labelled with its node
    const [run] = await client.runs.list(thread.thread_id);
    const replay = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: ["messages-tuple", "messages"] }))) as Part[];
    const replayed = tuplesOf(replay);
    expect(replayed.map(([m]) => [m.type, m.id, m.content])).toEqual([["ai", answer.id, "Once upon a time"]]);
    expect(replayed[0]?.[1]).toMatchObject({ langgraph_node: "writer", langgraph_step: 1, langgraph_checkpoint_ns: tuples[0]?.[1]["langgraph_checkpoint_ns"], thread_id: thread.thread_id });
    expect(replay.some((p) => p.event === "messages/partial" || p.event === "messages/metadata")).toBe(false);
  });

  itOnPrimary(backend)("a run created without a messages mode is not streamed token by token (as the official server runs it); a stream joined later asking for messages-tuple gets the message whole, labelled with its node", async () => {
    const client = await start();
    const thread = await client.threads.create();
    openai.enqueue(textReply(PIECES));
    const parts = (await collect(client.runs.stream(thread.thread_id, "writing", { input: { messages: [{ type: "human", content: "tell a story" }] }, streamMode: ["values"] }))) as Part[];
    const stored = lastValues(parts);
    expect(stored.map((m) => [m.type, m.content])).toEqual([
      ["human", "tell a story"],
      ["ai", "Once upon a time"],
    ]);
    // the graph ran without LangGraph's messages handler: ChatOpenAI asked for the whole answer at once
    expect(openai.requests.map((request) => (request.body as { stream?: unknown }).stream === true)).toEqual([false]);
    const [run] = await client.runs.list(thread.thread_id);
    const joined = (await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: ["messages-tuple"] }))) as Part[];
    expect(tuplesOf(joined).map(([m, metadata]) => [m.type, m.id, m.content, metadata["langgraph_node"]])).toEqual([["ai", stored[1]?.id, "Once upon a time", "writer"]]);
  });

  itOnPrimary(backend)("the built-in agent on ChatOpenAI: its model node's tokens reach messages-tuple while the model answers, labelled model, under the stored message's id", async () => {
    const client = await start();
    const thread = await client.threads.create();
    const { parts, releasedByTokens } = await streamHeld(client, thread.thread_id, "agent", ["messages-tuple", "values"]);
    expect(releasedByTokens).toBe(true);
    const stored = lastValues(parts);
    expect(stored.map((m) => [m.type, m.content])).toEqual([
      ["human", "tell a story"],
      ["ai", "Once upon a time"],
    ]);
    const answer = stored[1] as Msg;
    const tuples = tuplesOf(parts);
    expect(tuples.map(([m]) => m.content).filter((text) => text !== "")).toEqual(PIECES);
    // the agent stores its answer under an id of its own (not the provider's, which repeats): the tokens carry it
    expect(answer.id).not.toBe("chatcmpl-test");
    expect(tuples.every(([m]) => m.type === "ai" && m.id === answer.id)).toBe(true);
    for (const [, metadata] of tuples) {
      expect(metadata).toMatchObject({ langgraph_node: "model", langgraph_triggers: ["branch:to:model"], langgraph_checkpoint_ns: expect.stringMatching(/^model:/), ls_provider: "openai", ls_model_name: "agent-model", thread_id: thread.thread_id, graph_id: "agent" });
    }
    expect(parts.findLastIndex((p) => p.event === "messages")).toBeLessThan(parts.findLastIndex((p) => p.event === "values"));

    const [run] = await client.runs.list(thread.thread_id);
    const replayed = tuplesOf((await collect(client.runs.joinStream(thread.thread_id, run?.run_id as string, { streamMode: ["messages-tuple"] }))) as Part[]);
    expect(replayed.map(([m, metadata]) => [m.type, m.id, m.content, metadata["langgraph_node"]])).toEqual([["ai", answer.id, "Once upon a time", "model"]]);
  });

  itOnPrimary(backend)("a chat model in a subgraph: its tokens are messages|ns parts with stream_subgraphs, none without; the parent's message comes whole, labelled with the parent's node", async () => {
    const client = await start();
    const thread = await client.threads.create();
    const { parts, releasedByTokens } = await streamHeld(client, thread.thread_id, "nested", ["messages-tuple", "values"], true);
    expect(releasedByTokens).toBe(true);
    const tokenParts = parts.filter((p) => p.event.startsWith("messages|"));
    expect(tokenParts.map((p) => (p.data as Tuple)[0].content).filter((text) => text !== "")).toEqual(PIECES);
    for (const part of tokenParts) {
      expect(part.event).toMatch(/^messages\|story:[^|]+$/);
      const metadata = (part.data as Tuple)[1];
      expect(metadata).toMatchObject({ langgraph_node: "writer", ls_provider: "openai", langgraph_checkpoint_ns: expect.stringMatching(/^story:[^|]+\|writer:/) });
    }
    // the parent stores the streamed message: not sent again
    expect(parts.filter((p) => p.event === "messages")).toEqual([]);

    openai.enqueue(textReply(PIECES));
    const other = await client.threads.create();
    const plain = (await collect(client.runs.stream(other.thread_id, "nested", { input: { messages: [{ type: "human", content: "tell a story" }] }, streamMode: ["messages-tuple"] }))) as Part[];
    expect(plain.some((p) => p.event.startsWith("messages|"))).toBe(false);
    expect(tuplesOf(plain).map(([m, metadata]) => [m.type, m.content, metadata["langgraph_node"]])).toEqual([["ai", "Once upon a time", "story"]]);
  });
});
