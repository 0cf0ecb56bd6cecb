import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, expect, it } from "vitest";
import { TEST_DATABASE_URL, describeWithPostgres, dropSchema, freshSchemaName, openBackend } from "../helpers/databases.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { freePort } from "../helpers/prometheus.js";
import { spawnServe } from "../helpers/server-process.js";
import { waitUntil } from "../helpers/waits.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const REQUEST_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${REQUEST_SPAN}-01`;
/** The agent asks to write a file (needs approval: the run ends at the interrupt), then answers once it was written. */
const SCRIPT = [
  { tool_calls: [{ id: "call_w", name: "write_file", args: { path: "out.txt", content: "traced" } }], usage: { input_tokens: 12, output_tokens: 6 } },
  { content: "written", usage: { input_tokens: 30, output_tokens: 3 } },
];

describeWithPostgres("OpenTelemetry traces across processes (OTLP/HTTP to a receiver in the test)", () => {
  const schema = freshSchemaName("traces");
  const dir = mkdtempSync(join(tmpdir(), "devmind-traces-"));
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPT));
  let receiver: OtlpReceiver | undefined;
  const env = (extra: Record<string, string>): Record<string, string> => ({
    DATABASE_URL: TEST_DATABASE_URL as string,
    DEVMIND_DB_SCHEMA: schema,
    DEVMIND_WORKSPACE: join(dir, "ws"),
    DEVMIND_MODEL: `scripted:${script}`,
    OTEL_SERVICE_NAME: "devmind-test",
    ...extra,
  });

  afterAll(async () => {
    await receiver?.close();
    const owner = await openBackend("postgres");
    await dropSchema(owner, schema);
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("a run interrupted in one process and resumed in another after it stopped is one trace under the request's span, with the right parents", async () => {
    receiver = await startOtlpReceiver();
    const tracing = env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });

    // process A: the request with a traceparent creates the run; it ends at the approval
    const first = await spawnServe(["--port", "0", "--workers", "1"], tracing);
    let threadId: string;
    try {
      const client = new Client({ apiUrl: first.url, defaultHeaders: { traceparent: TRACEPARENT } });
      const thread = await client.threads.create();
      threadId = thread.thread_id;
      await client.runs.wait(threadId, "agent", { input: { messages: [{ type: "human", content: "write out.txt" }] } });
      expect((await client.threads.get(threadId)).status).toBe("interrupted");
    } finally {
      expect(await first.stop()).toBe(0);
    }

    // process B, started afterwards: a human approves (no traceparent on this request); the new run finishes
    const second = await spawnServe(["--port", "0", "--workers", "1"], tracing);
    try {
      const client = new Client({ apiUrl: second.url });
      await client.runs.wait(threadId, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } });
      expect((await client.threads.get(threadId)).status).toBe("idle");
      // a malformed traceparent is ignored: the run is created and executed all the same, in a trace of its own
      const other = new Client({ apiUrl: second.url, defaultHeaders: { traceparent: "00-nothex-zz-01" } });
      const elsewhere = await other.threads.create();
      await other.runs.wait(elsewhere.thread_id, "agent", { input: { messages: [{ type: "human", content: "again" }] } });
    } finally {
      expect(await second.stop()).toBe(0);
    }

    const all = receiver.spans();
    const ours = all.filter(({ span }) => span.traceId === TRACE_ID);
    const name = (s: ReceivedSpan): string => s.span.name;
    const runs = ours.filter((s) => name(s) === "invoke_agent agent");
    // one span per run, each a child of the request's span, from two processes
    expect(runs).toHaveLength(2);
    expect(runs.map((s) => s.span.parentSpanId)).toEqual([REQUEST_SPAN, REQUEST_SPAN]);
    expect(new Set(runs.map((s) => s.pid)).size).toBe(2);
    expect(runs.map((s) => s.attributes["gen_ai.operation.name"])).toEqual(["invoke_agent", "invoke_agent"]);
    expect(new Set(runs.map((s) => s.attributes["gen_ai.conversation.id"]))).toEqual(new Set([threadId]));
    const byId = new Map(ours.map((s) => [s.span.spanId, s]));
    const parentName = (s: ReceivedSpan): string | undefined => byId.get(s.span.parentSpanId ?? "")?.span.name;
    // nodes under their run; model calls under the model node; the tool call under the tools node
    const nodes = ours.filter((s) => name(s).startsWith("node "));
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    expect(nodes.every((s) => parentName(s) === "invoke_agent agent")).toBe(true);
    const chats = ours.filter((s) => name(s).startsWith("chat "));
    expect(chats.map((s) => [parentName(s), s.attributes["gen_ai.operation.name"], s.attributes["gen_ai.request.model"], s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]).sort()).toEqual([
      ["node model", "chat", "scripted", 12, 6],
      ["node model", "chat", "scripted", 30, 3],
    ]);
    const tools = ours.filter((s) => name(s).startsWith("execute_tool "));
    expect(tools.map((s) => [name(s), parentName(s), s.attributes["gen_ai.tool.name"], s.attributes["gen_ai.tool.call.id"]])).toEqual([["execute_tool write_file", "node tools", "write_file", "call_w"]]);
    // the tool ran after the approval, in process B: the run span of B is its grandparent
    const runOfTool = byId.get(byId.get(tools[0]?.span.parentSpanId ?? "")?.span.parentSpanId ?? "");
    expect(runOfTool?.pid).toBe(tools[0]?.pid);
    expect(runOfTool?.pid).not.toBe(runs.find((s) => s.attributes["devmind.stop_reason"] === "interrupt")?.pid);
    // every span of the two processes' runs is in this trace or the malformed-header run's own one
    const traces = new Set(all.map((s) => s.span.traceId));
    expect(traces.size).toBe(2);
    const malformed = all.filter((s) => s.span.traceId !== TRACE_ID && s.span.name === "invoke_agent agent");
    expect(malformed).toHaveLength(1);
  }, 240_000);

  it("an unreachable OTLP endpoint: runs go on, one log line for the outage", async () => {
    const closed = await freePort();
    const serve = await spawnServe(["--port", "0", "--workers", "1"], env({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`, LOG_LEVEL: "info" }));
    try {
      const client = new Client({ apiUrl: serve.url });
      for (let i = 0; i < 3; i += 1) {
        const thread = await client.threads.create();
        await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: `run ${i}` }] } });
        expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
      }
      await waitUntil("the outage logged", () => serve.stderr().includes("tracing.export_failed"), 30_000);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.stderr().split("\n").filter((line) => line.includes("tracing.export_failed"))).toHaveLength(1);
  }, 120_000);
});
