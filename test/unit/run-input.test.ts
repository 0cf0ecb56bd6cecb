import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/errors.js";
import { inputMessages } from "../../src/runtime/run-input.js";

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

  it("refuses bad input with RUN_INPUT_INVALID naming the message, never a plain error", () => {
    const cases: [unknown, RegExp][] = [
      [null, /at least one message/],
      [{ messages: [] }, /at least one message/],
      [{ messages: "hi" }, /at least one message/],
      [{ messages: ["ok", 5] }, /message 1 must be/],
      [{ messages: [{ role: "tool", content: "x" }] }, /message 0 must be/],
      [{ messages: [{ type: "bogus", data: { content: "x" } }] }, /message 0 is not a valid stored LangChain message/],
    ];
    for (const [input, message] of cases) {
      const error = refusal(input);
      expect(hasErrorCode(error, "RUN_INPUT_INVALID"), JSON.stringify(input)).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });
});
