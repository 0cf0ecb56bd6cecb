import { describe, expect, it } from "vitest";
import { runCheckpointMetadata } from "../../src/checkpoint/run-metadata.js";
import type { RunRecord } from "../../src/runtime/queue/run-record.js";
import { withStateMessageIds } from "../../src/server/message-ids.js";
import { runErrorPart } from "../../src/server/run-error-part.js";

function failed(error: RunRecord["error"]): RunRecord {
  return { status: "error", stop_reason: "internal_error", error } as RunRecord;
}

describe("a failed run's stream error part", () => {
  it("names the recorded error class and gives the message it was thrown with", () => {
    expect(runErrorPart(failed({ code: "GRAPH_FAILED", message: "CustomError: Boo!", name: "CustomError" }))).toEqual({ error: "CustomError", message: "Boo!" });
    // a plain Error is stored as its message alone: a colon in it is not a class name
    expect(runErrorPart(failed({ code: "GRAPH_FAILED", message: "Connection: refused", name: "Error" }))).toEqual({ error: "Error", message: "Connection: refused" });
  });

  it("reads runs recorded without a name as before: the class from the message, or the code", () => {
    expect(runErrorPart(failed({ code: "GRAPH_FAILED", message: "CustomError: Boo!" }))).toEqual({ error: "CustomError", message: "Boo!" });
    expect(runErrorPart(failed({ code: "GRAPH_RECURSION_LIMIT", message: "too many steps" }))).toEqual({ error: "GraphRecursionError", message: "too many steps" });
    expect(runErrorPart(failed({ code: "MODEL_FAILED", message: "upstream said no" }))).toEqual({ error: "MODEL_FAILED", message: "upstream said no" });
  });
});

describe("written messages with the state's ids", () => {
  const human = { type: "human", content: "hi", id: "h1" };
  const ai = { type: "ai", content: "hello", id: "a1" };

  it("gives an id-less written message the id of the same new message in the state, once", () => {
    const tool = { type: "tool", content: "42", tool_call_id: "c1" };
    const after = { messages: [human, ai, { ...tool, id: "t1" }, { ...tool, id: "t2" }] };
    const claimed = new Set<string>();
    expect(withStateMessageIds({ messages: [tool] }, { messages: [human, ai] }, after, claimed)).toEqual({ messages: [{ ...tool, id: "t1" }] });
    // a second task of the step that wrote the same message gets the other one
    expect(withStateMessageIds({ messages: tool }, { messages: [human, ai] }, after, claimed)).toEqual({ messages: { ...tool, id: "t2" } });
  });

  it("leaves messages with ids, other values, and messages the state does not have as they are", () => {
    const writes = { messages: [ai, { type: "tool", content: "other", tool_call_id: "c9" }], note: "x" };
    const result = withStateMessageIds(writes, { messages: [human] }, { messages: [human, ai, { type: "tool", content: "42", tool_call_id: "c1", id: "t1" }] }, new Set());
    expect(result).toBe(writes);
    expect(withStateMessageIds(null, {}, {}, new Set())).toBeNull();
  });
});

describe("a run's checkpoint metadata", () => {
  it("carries the run's configurable values and config metadata, but internal keys, the checkpoint address and what is not JSON", () => {
    const config = {
      configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c", run_id: "r", graph_id: "g", assistant_id: "a", user_id: "u", __devmind_run_id: "r", handle: () => 1 },
      metadata: { run_metadata: "yes", graph_id: "g" },
    };
    expect(runCheckpointMetadata(config)).toEqual({ graph_id: "g", assistant_id: "a", user_id: "u", run_metadata: "yes" });
    expect(runCheckpointMetadata({})).toEqual({});
  });
});
