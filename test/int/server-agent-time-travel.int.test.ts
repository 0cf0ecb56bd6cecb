import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { ToolLedger } from "../../src/runtime/ledger/tool-ledger.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkRefusal as refusal, sdkServers } from "../helpers/sdk-server.js";
import { collect, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/waits.js";

type Msg = { type: string; content: unknown; id?: string; tool_call_id?: string; tool_calls?: { id: string; name: string }[] };
type Part = { event: string; data: unknown };

function messagesOf(values: unknown): Msg[] {
  return ((values as { messages?: Msg[] } | null)?.messages ?? []) as Msg[];
}

/**
 * The parent checkpoint of the state where message `id` first appears, as Agent Chat UI reads it
 * for Regenerate (useStream's `getMessagesMetadata(message).firstSeenState.parent_checkpoint`).
 */
function parentOfFirstSeen(history: ThreadState[], id: string): { checkpoint_id: string; checkpoint_ns: string; checkpoint_map: null } {
  const first = [...history].reverse().find((state) => messagesOf(state.values).some((message) => message.id === id));
  const parent = first?.parent_checkpoint;
  if (parent === undefined || parent === null || typeof parent.checkpoint_id !== "string") throw new Error(`no state shows message ${id}`);
  return { checkpoint_id: parent.checkpoint_id, checkpoint_ns: "", checkpoint_map: null };
}

/** The ids of a state's checkpoint chain, newest first, from `history` (every checkpoint of the thread). */
function chainOf(history: ThreadState[], from: ThreadState): string[] {
  const byId = new Map(history.map((state) => [state.checkpoint.checkpoint_id, state]));
  const chain: string[] = [];
  for (let state: ThreadState | undefined = from; state !== undefined && chain.length < history.length; state = byId.get(state.parent_checkpoint?.checkpoint_id ?? "")) {
    chain.push(state.checkpoint.checkpoint_id as string);
  }
  return chain;
}

describe.each(BACKENDS)("the built-in agent: time travel, breakpoints and rollback through the official SDK on %s", (backend) => {
  const servers = sdkServers(backend);
  const start = (turns: ScriptedTurn[]): Promise<{ server: TestServer; client: Client }> => servers(1, { turns });

  it("Regenerate as Agent Chat UI sends it: no input and the AI message's parent checkpoint re-run the model on a new branch", async () => {
    const { server, client } = await start([{ content: "the answer" }, { content: "the follow-up" }]);
    const thread = await client.threads.create();
    const first = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "question" }] } }));
    expect(first.map((m) => m.type)).toEqual(["human", "ai"]);
    const oldAi = first[1]?.id as string;
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    const parent = parentOfFirstSeen(history, oldAi);
    expect(history.find((state) => state.checkpoint.checkpoint_id === parent.checkpoint_id)?.next).toEqual(["model"]);

    const parts = (await collect(
      client.runs.stream(thread.thread_id, "agent", { input: undefined, checkpoint: parent, streamMode: ["values", "messages-tuple", "updates"], streamSubgraphs: true, streamResumable: true }),
    )) as Part[];
    expect(parts.filter((part) => part.event === "error")).toEqual([]);
    const regenerated = messagesOf(parts.filter((part) => part.event === "values").pop()?.data);
    expect(regenerated.map((m) => [m.type, m.content])).toEqual([
      ["human", "question"],
      ["ai", "the answer"],
    ]);
    const newAi = regenerated[1]?.id as string;
    expect(newAi).not.toBe(oldAi);
    // the model ran again (its writes on the old branch were not reused), once
    expect(server.model.calls.length).toBe(2);
    // the stream sent the new branch's message, never the old one
    const tupleIds = new Set(parts.filter((part) => part.event === "messages").map((part) => (part.data as [Msg])[0].id));
    expect([...tupleIds]).toEqual([newAi]);

    // the thread shows the new branch; the old one stays in the history, both from the fork point
    const state = await client.threads.getState(thread.thread_id);
    expect(messagesOf(state.values).map((m) => m.id)).toEqual([first[0]?.id, newAi]);
    const oldState = history.find((s) => s.checkpoint.checkpoint_id === parent.checkpoint_id) as ThreadState;
    const [regenerateRun, firstRun] = await client.runs.list(thread.thread_id);
    // the fork's run-scoped state is its own: its run id, a deadline of its own
    expect([(oldState.values as { run_id?: string }).run_id, (state.values as { run_id?: string }).run_id]).toEqual([firstRun?.run_id, regenerateRun?.run_id]);
    expect((state.values as { deadline_at: number }).deadline_at).toBeGreaterThan((oldState.values as { deadline_at: number }).deadline_at);
    const after = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const oldHead = after.find((s) => messagesOf(s.values).some((m) => m.id === oldAi) && s.next.length === 0) as ThreadState;
    expect(chainOf(after, state)).toContain(parent.checkpoint_id);
    expect(chainOf(after, oldHead)).toContain(parent.checkpoint_id);
    expect(chainOf(after, state)).not.toContain(oldHead.checkpoint.checkpoint_id);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((run) => run.status)).toEqual(["success", "success"]);
    const record = await server.runtime.runs.get(runs[0]?.run_id as string);
    expect([record.checkpoint_id, record.input, record.answer, record.model_rounds]).toEqual([parent.checkpoint_id, null, "the answer", 1]);
    // the new branch's checkpoints name the run that wrote them
    expect(after.filter((s) => (s.metadata as { run_id?: string } | null)?.run_id === record.run_id).length).toBeGreaterThan(0);

    // a message sent on the old branch (as the UI sends it after switching back): the input enters at its head
    const followUp = messagesOf(
      await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: "and then?" }] }, checkpoint: { checkpoint_id: oldHead.checkpoint.checkpoint_id as string, checkpoint_ns: "", checkpoint_map: null } }),
    );
    expect(followUp.map((m) => [m.type, m.content])).toEqual([
      ["human", "question"],
      ["ai", "the answer"],
      ["human", "and then?"],
      ["ai", "the follow-up"],
    ]);
    expect(followUp[1]?.id).toBe(oldAi);

    // Regenerate the regenerated answer: its parent is the fork's own entry checkpoint; a third branch
    const latest = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const third = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: null, checkpoint: parentOfFirstSeen(latest, newAi) }));
    expect(third.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(new Set([third[1]?.id, newAi, oldAi]).size).toBe(3);
    expect(server.model.calls.length).toBe(4);
  });

  itOnPrimary(backend)("a fork's new tool call runs in the fork: never the original branch's ledger result", async () => {
    const { server, client } = await start([{ tool_calls: [{ id: "call_read", name: "read_file", args: { path: "note.txt" } }] }, { content: "read it" }]);
    writeFileSync(join(server.workspace, "note.txt"), "one");
    const thread = await client.threads.create();
    const first = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["read note.txt"] } }));
    expect(first.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(String(first[2]?.content)).toContain("one");
    const [original] = await client.runs.list(thread.thread_id);
    writeFileSync(join(server.workspace, "note.txt"), "two");

    // Regenerate the call: the fork's model asks for the same call id again; the tool runs again
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const forked = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: null, checkpoint: parentOfFirstSeen(history, first[1]?.id as string) }));
    expect(forked.map((m) => [m.type, m.tool_call_id ?? null])).toEqual([
      ["human", null],
      ["ai", null],
      ["tool", "call_read"],
      ["ai", null],
    ]);
    expect(String(forked[2]?.content)).toContain("two");
    expect(String(forked[2]?.content)).not.toContain("one");
    const [fork] = await client.runs.list(thread.thread_id);
    const ledger = new ToolLedger(server.db);
    expect([(await ledger.get(original?.run_id as string, "call_read"))?.status, (await ledger.get(fork?.run_id as string, "call_read"))?.status]).toEqual(["succeeded", "succeeded"]);
    expect(JSON.stringify((await ledger.get(fork?.run_id as string, "call_read"))?.result)).toContain("two");
    expect(JSON.stringify((await ledger.get(original?.run_id as string, "call_read"))?.result)).toContain("one");

    // a fork from the checkpoint before the tools step runs the original call again, in the fork's run
    writeFileSync(join(server.workspace, "note.txt"), "three");
    const beforeTools = history.find((state) => state.next.includes("tools")) as ThreadState;
    const again = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: null, checkpointId: beforeTools.checkpoint.checkpoint_id as string }));
    expect(again.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(again[1]?.id).toBe(first[1]?.id);
    expect(String(again[2]?.content)).toContain("three");
    const [third] = await client.runs.list(thread.thread_id);
    expect((await ledger.get(third?.run_id as string, "call_read"))?.status).toBe("succeeded");
    expect(await refusal(client.runs.wait(thread.thread_id, "agent", { input: null, checkpointId: "1f0c0000-0000-6000-8000-000000000000" }))).toMatchObject({ status: 404, message: expect.stringContaining("no checkpoint") });
  });

  itOnPrimary(backend)("a fork that asks for approval waits for a decision of its own; the approved call runs in the fork", async () => {
    const { server, client } = await start([{ tool_calls: [{ id: "call_w", name: "write_file", args: { path: "x.txt", content: "x" } }] }, { content: "written" }]);
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["write x.txt"] } })) as Record<string, unknown>;
    expect(paused["__interrupt__"]).toBeDefined();
    const done = messagesOf(await client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } }));
    expect(done.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    // the resume was a new run (the Platform's model); the decision is on the run it answered
    const [originalResumed, original] = await client.runs.list(thread.thread_id);
    expect(originalResumed).toMatchObject({ status: "success", stop_reason: "completed", resumes_run: original?.run_id });
    rmSync(join(server.workspace, "x.txt"));

    // Regenerate the call: the fork asks again and waits; the original run's approval does not carry over
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    const waiting = (await client.runs.wait(thread.thread_id, "agent", { input: null, checkpoint: parentOfFirstSeen(history, done[1]?.id as string) })) as Record<string, unknown>;
    const requests = (waiting["__interrupt__"] as { value: { action_requests: { tool_call_id: string }[] } }[])[0]?.value.action_requests;
    expect(requests?.map((request) => request.tool_call_id)).toEqual(["call_w"]);
    const [fork] = await client.runs.list(thread.thread_id);
    expect([fork?.run_id !== originalResumed?.run_id, fork?.status, (fork as { stop_reason?: string } | undefined)?.stop_reason, existsSync(join(server.workspace, "x.txt"))]).toEqual([true, "success", "interrupt", false]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    // the fork's own decision (edited arguments) resumes the fork in a new run; the tool runs once, in the fork
    const resumed = messagesOf(
      await client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "edit", edited_action: { name: "write_file", args: { path: "x.txt", content: "y" } } }] } } }),
    );
    expect(resumed.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(readFileSync(join(server.workspace, "x.txt"), "utf8")).toBe("y");
    const listed = await client.runs.list(thread.thread_id);
    expect(listed.map((run) => [run.run_id, run.status, (run as { resumes_run?: string | null }).resumes_run])).toEqual([
      [listed[0]?.run_id, "success", fork?.run_id],
      [fork?.run_id, "success", null],
      [originalResumed?.run_id, "success", original?.run_id],
      [original?.run_id, "success", null],
    ]);
    const decisions = async (runId: string) => (await server.runtime.runs.decisions(runId)).map((d) => [d.tool_call_id, d.decision, d.principal, d.args]);
    expect(await decisions(original?.run_id as string)).toEqual([["call_w", "approve", "alice", { path: "x.txt", content: "x" }]]);
    expect(await decisions(fork?.run_id as string)).toEqual([["call_w", "edit", "alice", { path: "x.txt", content: "y" }]]);
    const ledger = new ToolLedger(server.db);
    expect([(await ledger.get(original?.run_id as string, "call_w"))?.attempts, (await ledger.get(fork?.run_id as string, "call_w"))?.attempts]).toEqual([1, 1]);
  });

  itOnPrimary(backend)("interrupt_before / interrupt_after stop the agent; a run without input continues it", async () => {
    const { server, client } = await start([{ tool_calls: [{ id: "call_add", name: "add", args: { a: 2, b: 3 } }] }, { content: "it is 5" }]);
    const thread = await client.threads.create();
    const stopped = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["add 2 and 3"] }, interruptBefore: ["tools"] }));
    expect(stopped.map((m) => m.type)).toEqual(["human", "ai"]);
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["tools"]);
    const [first] = await client.runs.list(thread.thread_id);
    const firstRecord = await server.runtime.runs.get(first?.run_id as string);
    // a breakpoint ends the run as an interrupt does (the Platform's model): success, stop reason interrupt, no interrupts
    expect([firstRecord.status, firstRecord.stop_reason, firstRecord.answer, firstRecord.interrupt_before, firstRecord.interrupts]).toEqual(["success", "interrupt", null, ["tools"], []]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    // continue: the tools step runs (in the new run), then stop after the next model step
    const after = messagesOf(await client.runs.wait(thread.thread_id, "agent", { input: null, interruptAfter: ["model"] }));
    expect(after.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["guard"]);
    const [second] = await client.runs.list(thread.thread_id);
    const calls: string[] = [];
    for await (const event of server.runtime.runs.events(second?.run_id as string)) if (event.type === "tool.call.started") calls.push((event as { tool_call_id: string }).tool_call_id);
    expect(calls).toEqual(["call_add"]);
    for await (const event of server.runtime.runs.events(first?.run_id as string)) expect(event.type).not.toBe("tool.call.started");

    const done = (await client.runs.wait(thread.thread_id, "agent", { input: null })) as Record<string, unknown>;
    expect([done["stop_reason"], done["answer"]]).toEqual(["completed", "it is 5"]);
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
    // nothing left to run: a run without input ends at once
    await client.runs.wait(thread.thread_id, "agent", { input: null });
    expect((await client.runs.list(thread.thread_id)).map((run) => run.status)).toEqual(["success", "success", "success", "success"]);
    expect(server.model.calls.length).toBe(2);
    // a thread without a checkpoint has nothing to continue
    const empty = await client.threads.create();
    expect(await refusal(client.runs.wait(empty.thread_id, "agent", { input: null }))).toMatchObject({ status: 422, message: expect.stringContaining("no checkpoint") });
  });

  itOnPrimary(backend)("rollback: multitask rollback and cancel action=rollback remove an agent run and its checkpoints", async () => {
    // the script's position is the count of AI messages in the model's input: the second run's input
    // brings one more, so its slow turn is position 2; the third and fourth runs answer at position 1
    const { client } = await start([{ content: "hello" }, { content: "an answer" }, { content: "never said", delay_ms: 30_000 }]);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["first"] } });
    const [first] = await client.runs.list(thread.thread_id);
    const base = await client.threads.getState(thread.thread_id);

    // a running run (its model slow), rolled back by the next run's multitask rollback (a run that
    // waits at an interrupt has ended, the Platform's model: a multitask strategy leaves it be)
    const second = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "ai", content: "an earlier answer" }, { type: "human", content: "second" }] } });
    await waitUntil("the second run to be running", async () => (await client.runs.get(thread.thread_id, second.run_id)).status === "running", 60_000);
    const third = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["third"] }, multitaskStrategy: "rollback" })) as Record<string, unknown>;
    expect(messagesOf(third).map((m) => [m.type, m.type === "human" ? m.content : null])).toEqual([
      ["human", "first"],
      ["ai", null],
      ["human", "third"],
      ["ai", null],
    ]);
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((run) => run.run_id)).not.toContain(second.run_id);
    expect(await refusal(client.runs.get(thread.thread_id, second.run_id))).toMatchObject({ status: 404 });
    const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
    expect(history.filter((state) => (state.metadata as { run_id?: string } | null)?.run_id === second.run_id)).toEqual([]);

    // cancel with action=rollback: the finished third run goes with its checkpoints, the state is the first run's end
    expect(runs[0]).toMatchObject({ status: "success" });
    await client.runs.cancel(thread.thread_id, runs[0]?.run_id as string, true, "rollback");
    const back = await client.threads.getState(thread.thread_id);
    expect([back.checkpoint.checkpoint_id, messagesOf(back.values).map((m) => m.id)]).toEqual([base.checkpoint.checkpoint_id, messagesOf(base.values).map((m) => m.id)]);
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).toEqual([first?.run_id]);
    // the next run starts from there with its own input only
    const fourth = (await client.runs.wait(thread.thread_id, "agent", { input: { messages: ["fourth"] } })) as Record<string, unknown>;
    expect(messagesOf(fourth).filter((m) => m.type === "human").map((m) => m.content)).toEqual(["first", "fourth"]);
  });

});
