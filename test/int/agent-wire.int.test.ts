import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { PostgresCheckpointSaver } from "../../src/checkpoint/postgres-saver.js";
import { buildAgentGraph } from "../../src/graph/build-agent-graph.js";
import { createChatModel } from "../../src/model/create-chat-model.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { freshMigratedSchema, openBackend } from "../helpers/databases.js";
import { pairing, tempWorkspace } from "../helpers/agent.js";
import { OpenAiTestServer, textReply, toolCallReply } from "../helpers/openai-server.js";

// The whole loop over the wire: the real ChatOpenAI from createChatModel, driven by the agent
// graph, against a local OpenAI-compatible server. What the graph sends back must be a valid
// OpenAI conversation: every tool message answers a tool call of the preceding assistant message.
const server = new OpenAiTestServer();
let owner: Database;
let db: Database;
let drop: () => Promise<void>;
const workspace = tempWorkspace();

beforeAll(async () => {
  await server.start();
  owner = await openBackend("pglite");
  ({ db, drop } = await freshMigratedSchema(owner));
});
afterAll(async () => {
  await server.close();
  await drop();
  await owner.close();
  workspace.cleanup();
});
beforeEach(() => server.reset());

describe("agent graph with ChatOpenAI on the wire", () => {
  it("sends back a valid conversation after a valid and a malformed call in one message", async () => {
    server.enqueue(
      toolCallReply(
        [
          { id: "call_ok", name: "add", argumentParts: ['{"a": 2', ', "b": 3}'] },
          { id: "call_bad", name: "add", argumentParts: ['{"a": 2,,', ' "b"}'] },
        ],
        { usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } },
      ),
      textReply(["2 + 3 = ", "5"], { usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } }),
    );
    const config = loadConfig({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-test-wire-0123456789", OPENAI_MODEL: "wire-model" });
    const graph = buildAgentGraph({
      model: createChatModel(config),
      tools: builtinTools({ workspace: workspace.dir }),
      workspace: workspace.dir,
      checkpointer: new PostgresCheckpointSaver(db),
      limits: { modelMaxRetries: 0 },
    });
    const out = await graph.invoke({ messages: [new HumanMessage("add 2 and 3")] }, { configurable: { thread_id: "wire-1" } });
    expect(out.error).toBeNull();
    expect(out.stop_reason).toBe("completed");
    expect(out.answer).toBe("2 + 3 = 5");
    expect(out.usage).toEqual({ input_tokens: 41, output_tokens: 9 });
    // the test server reuses one completion id for every reply, as some compatible servers do:
    // both AI messages must survive with ids of their own
    const ais = out.messages.filter((m) => m.getType() === "ai");
    expect(ais).toHaveLength(2);
    expect(new Set(ais.map((m) => m.id)).size).toBe(2);
    expect(ais.map((m) => (m.response_metadata as Record<string, unknown>)["provider_message_id"])).toEqual(["chatcmpl-test", "chatcmpl-test"]);
    const pairs = pairing(out.messages);
    expect(pairs.find((p) => p.id === "call_ok")?.envelope.data).toEqual({ sum: 5 });
    expect(pairs.find((p) => p.id === "call_bad")?.envelope.error?.code).toBe("INVALID_ARGUMENTS");

    expect(server.requests).toHaveLength(2);
    const first = server.requests[0]?.body as { tools: { function: { name: string } }[]; stream: boolean };
    expect(first.stream).toBe(true);
    expect(first.tools.map((t) => t.function.name)).toContain("add");
    const sent = (server.requests[1]?.body as { messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[] }).messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    const assistantIds = (sent[2]?.tool_calls ?? []).map((c) => c.id).sort();
    expect(assistantIds).toEqual(["call_bad", "call_ok"]);
    expect(sent.slice(3).map((m) => m.tool_call_id).sort()).toEqual(["call_bad", "call_ok"]);
  });
});
