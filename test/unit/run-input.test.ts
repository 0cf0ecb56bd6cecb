import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/errors.js";
import { inputMessages } from "../../src/graph/agent-input.js";

function refusal(input: unknown): unknown {
  try {
    inputMessages(input);
  } catch (error) {
    return error;
  }
  throw new Error("expected inputMessages to refuse the input");
}

describe("run input messages", () => {
  it("accepts strings, role/content objects and stored LangChain messages, in order", () => {
    const messages = inputMessages({
      messages: ["hi", { role: "system", content: "be brief" }, { role: "assistant", content: "ok" }, { type: "human", data: { content: "stored" } }],
    });
    expect(messages.map((m) => m.constructor)).toEqual([HumanMessage, SystemMessage, AIMessage, HumanMessage]);
    expect(messages.map((m) => m.content)).toEqual(["hi", "be brief", "ok", "stored"]);
  });

  it("accepts LangChain message-likes as LangGraph clients send them: {type, content, id}, {role, content blocks}, tool messages", () => {
    const messages = inputMessages({
      messages: [
        { type: "human", content: "from useStream", id: "m-1" },
        { role: "user", content: [{ type: "text", text: "blocks" }] },
        { type: "ai", content: "", tool_calls: [{ id: "c1", name: "add", args: { a: 1, b: 2 } }] },
        { type: "tool", content: "3", tool_call_id: "c1" },
      ],
    });
    expect(messages.map((m) => m.getType())).toEqual(["human", "human", "ai", "tool"]);
    expect(messages[0]?.id).toBe("m-1");
    expect(messages[1]?.content).toEqual([{ type: "text", text: "blocks" }]);
    expect((messages[2] as AIMessage).tool_calls?.[0]?.id).toBe("c1");
    expect((messages[3] as { tool_call_id?: string }).tool_call_id).toBe("c1");
  });

  it("refuses bad input with RUN_INPUT_INVALID naming the message, never a plain error", () => {
    const cases: [unknown, RegExp][] = [
      [null, /at least one message/],
      [{ messages: [] }, /at least one message/],
      [{ messages: "hi" }, /at least one message/],
      [{ messages: ["ok", 5] }, /message 1 must be/],
      [{ messages: [{ role: "tool", content: "x" }] }, /message 0: a tool message needs tool_call_id/],
      [{ messages: [{ role: "robot", content: "x" }] }, /message 0 must be/],
      [{ messages: [{ type: "human", content: 5 }] }, /message 0: content must be text or a list of content blocks/],
      [{ messages: [{ type: "bogus", data: { content: "x" } }] }, /message 0 is not a valid LangChain message/],
    ];
    for (const [input, message] of cases) {
      const error = refusal(input);
      expect(hasErrorCode(error, "RUN_INPUT_INVALID"), JSON.stringify(input)).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });
});
