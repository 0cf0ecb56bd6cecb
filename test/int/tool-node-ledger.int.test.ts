/**
 * A plain LangGraph `ToolNode` in a user graph runs its calls through the run's tool ledger, with
 * no change to the graph (CONTRACT section 3). Here the node re-executes in the same process (a
 * node retry policy re-runs it after a later step of the node failed): a finished call gives back
 * exactly what the tool returned (a ToolMessage's content, status and artifact; a Command) without
 * running again; a tool that opted out (`metadata.devmind_ledger: false`) runs again; a failure is
 * retried, as a retry asks. A tool that raises LangGraph's interrupt runs again when resumed.
 * (Crashes across processes: graph-durability.int.test.ts.)
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/types.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { BACKENDS, freshMigratedSchema, openBackend } from "../helpers/databases.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  note: Annotation<string>({ reducer: (_, next) => next, default: () => "" }),
  calls: Annotation<string[]>({ reducer: (_, next) => next, default: () => [] }),
});

/** How often each tool's body ran, in this process. */
const runs = new Map<string, number>();
const count = (name: string): number => {
  const next = (runs.get(name) ?? 0) + 1;
  runs.set(name, next);
  return next;
};
const NoArgs = z.object({});

const withArtifact = tool(
  async () => {
    count("with_artifact");
    return ["the content", { rows: [1, 2, 3] }];
  },
  { name: "with_artifact", description: "content and artifact", schema: NoArgs, responseFormat: "content_and_artifact" },
);
const commanding = tool(
  async (_args, config) => {
    count("commanding");
    const id = (config as { toolCall?: { id?: string } }).toolCall?.id ?? "";
    return new Command({ update: { note: "set by a command", messages: [new ToolMessage({ content: "commanded", tool_call_id: id, name: "commanding" })] } });
  },
  { name: "commanding", description: "returns a Command", schema: NoArgs },
);
const optedOut = tool(async () => `ran ${count("opted_out")} times`, { name: "opted_out", description: "not ledgered", schema: NoArgs, metadata: { devmind_ledger: false } });
const flaky = tool(
  async () => {
    if (count("flaky") === 1) throw new Error("flaky the first time");
    return "steady now";
  },
  { name: "flaky", description: "fails once", schema: NoArgs },
);
const asking = tool(
  async () => {
    count("asking");
    const answer = interrupt({ question: "which colour?" }) as string;
    return `the answer is ${answer}`;
  },
  { name: "asking", description: "asks a human", schema: NoArgs },
);

/** The step after the tool node fails the first time: LangGraph's retry policy runs the whole node again. */
let failures = 0;
const failOnce = RunnableLambda.from((output: unknown) => {
  failures += 1;
  if (failures === 1) throw new Error("the step after the tools failed");
  return output;
});

const call = (id: string, name: string) => ({ id, name, args: {} });
const retried = new StateGraph(State)
  .addNode("plan", () => ({ messages: [new AIMessage({ content: "", tool_calls: [call("a", "with_artifact"), call("c", "commanding"), call("o", "opted_out"), call("f", "flaky")] })] }))
  .addNode("tools", new ToolNode([withArtifact, commanding, optedOut, flaky]).pipe(failOnce) as never, { retryPolicy: { maxAttempts: 2, initialInterval: 1, jitter: false } })
  .addEdge(START, "plan")
  .addEdge("plan", "tools")
  .addEdge("tools", END);

const asks = new StateGraph(State)
  .addNode("plan", () => ({ messages: [new AIMessage({ content: "", tool_calls: [call("q", "asking")] })] }))
  .addNode("tools", new ToolNode([asking]))
  .addEdge(START, "plan")
  .addEdge("plan", "tools")
  .addEdge("tools", END);

describe.each(BACKENDS)("a plain ToolNode on the run's ledger (%s)", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let runtime: Runtime;
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
    runtime = createRuntime({ db, config: loadConfig({}), graphs: { agent: false, retried, asks } });
  });
  afterAll(async () => {
    await runtime?.close();
    await drop?.();
    await owner?.close();
  });

  it("a node re-executed in the same run: finished calls return what the tool returned without running; opted-out and failed ones run again", async () => {
    runs.clear();
    failures = 0;
    const created = await runtime.runs.create({ assistantId: "retried", input: { messages: [] } });
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success" });
    expect(failures).toBe(2);
    expect(Object.fromEntries(runs)).toEqual({ with_artifact: 1, commanding: 1, opted_out: 2, flaky: 2 });

    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[]; note: string } };
    expect(state.values.note).toBe("set by a command");
    const answers = new Map((state.values.messages.filter((message) => message.getType() === "tool") as ToolMessage[]).map((message) => [message.tool_call_id, message]));
    expect(answers.get("a")).toMatchObject({ content: "the content", artifact: { rows: [1, 2, 3] }, name: "with_artifact", status: "success" });
    expect(answers.get("c")).toMatchObject({ content: "commanded", name: "commanding" });
    expect(answers.get("o")).toMatchObject({ content: "ran 2 times", name: "opted_out" });
    expect(answers.get("f")).toMatchObject({ content: "steady now", name: "flaky" });
    expect(answers.get("f")?.status).not.toBe("error");
  });

  it("a tool that raises an interrupt is not left in flight: resumed, it runs again and finishes", async () => {
    runs.clear();
    const created = await runtime.runs.create({ assistantId: "asks", input: { messages: [] } });
    expect(await runtime.runs.execute(created.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt" });
    const next = await runtime.runs.resume(created.run_id, { value: "green" }, { principal: "test" });
    // the run that resumes the thread continues the first run's ledger: the interrupted call is not left in flight there
    expect(await runtime.runs.execute(next.run_id)).toMatchObject({ status: "success", stop_reason: "completed" });
    expect(runs.get("asking")).toBe(2);
    const state = (await runtime.threads.state(created.thread_id)) as { values: { messages: BaseMessage[] } };
    expect(state.values.messages.at(-1)).toMatchObject({ content: "the answer is green", tool_call_id: "q" });
  });
});
