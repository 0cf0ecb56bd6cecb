/**
 * A user graph whose model has `_generate` only, streamed by the server (issue 37 item 1): its
 * answers come whole (one chunk, `tool_calls` and no `tool_call_chunks`), and the `messages-tuple`
 * and `messages` modes still carry every tool call once — a client joining the chunks of a
 * message by id gets the stored message's calls, no more, no fewer.
 */
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Database } from "../../src/db/types.js";
import { openBackend } from "../helpers/databases.js";
import { GenerateOnlyModel, turnsSinceHuman } from "../helpers/generate-only-model.js";
import { collect, startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";

type Part = { event: string; data: unknown };
type Dict = { type: string; id?: string; content?: unknown; tool_calls?: { id?: string; name: string }[]; tool_call_chunks?: { id?: string; name?: string }[] };

const echo = tool(async ({ word }: { word: string }) => `echo ${word}`, { name: "echo", description: "echoes a word", schema: z.object({ word: z.string() }) });
const model = new GenerateOnlyModel((messages) => {
  const done = turnsSinceHuman(messages);
  return done >= 2 ? { content: "echoed twice" } : { tool_calls: [{ id: `e${done}`, name: "echo", args: { word: `w${done}` } }] };
});
const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => ({ messages: [await model.bindTools().invoke(state.messages)] }))
  .addNode("tools", new ToolNode([echo]))
  .addEdge(START, "model")
  .addConditionalEdges("model", toolsCondition, ["tools", END])
  .addEdge("tools", "model");

describe("the server streams a _generate-only model's tool calls once each", () => {
  let owner: Database;
  let server: TestServer;
  beforeAll(async () => {
    owner = await openBackend("pglite");
    server = await startTestServer(owner, [], { graphs: { agent: false, echoing: graph } });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("messages-tuple chunks joined by id hold each call once; messages/complete too", async () => {
    const client = new Client({ apiUrl: server.url, apiKey: TEST_KEYS.alice });
    const thread = await client.threads.create();
    const parts = (await collect(client.runs.stream(thread.thread_id, "echoing", { input: { messages: [{ type: "human", content: "echo twice" }] }, streamMode: ["messages-tuple", "messages", "values"] }))) as Part[];
    const values = parts.filter((part) => part.event === "values").at(-1)?.data as { messages: Dict[] };
    const stored = values.messages.filter((message) => message.type === "ai");
    expect(stored.map((message) => (message.tool_calls ?? []).map((call) => call.id))).toEqual([["e0"], ["e1"], []]);
    // every call of a message, from its chunks: whole calls and call chunks, by call id
    const calls = new Map<string, string[]>();
    for (const part of parts.filter((candidate) => candidate.event === "messages")) {
      const [chunk] = part.data as [Dict, unknown];
      if (chunk.type !== "ai" && chunk.type !== "AIMessageChunk") continue;
      const ids = [...(chunk.tool_calls ?? []), ...(chunk.tool_call_chunks ?? [])].map((call) => call.id).filter((id): id is string => id !== undefined);
      calls.set(chunk.id ?? "", [...(calls.get(chunk.id ?? "") ?? []), ...new Set(ids)]);
    }
    expect(stored.map((message) => calls.get(message.id ?? "") ?? [])).toEqual([["e0"], ["e1"], []]);
    // the `messages` mode: no live chunk for a whole answer, each message complete once with its calls
    const complete = parts.filter((part) => part.event === "messages/complete").flatMap((part) => part.data as Dict[]);
    expect(complete.filter((message) => message.type === "ai").map((message) => (message.tool_calls ?? []).map((call) => call.id))).toEqual([["e0"], ["e1"], []]);
  });
});
