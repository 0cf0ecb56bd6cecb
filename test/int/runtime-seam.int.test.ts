import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database } from "../../src/db/types.js";
import { ScriptedChatModel } from "../../src/model/scripted-model.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { AttachmentStore } from "../../src/runtime/attachments/attachment-store.js";
import { argsDigest } from "../../src/runtime/interrupts/digest.js";
import { RunStore } from "../../src/runtime/queue/run-store.js";
import { createRuntime, type LiveEvent, type LiveSignal, type Runtime } from "../../src/runtime/runtime.js";
import type { EventRecord } from "../helpers/events.js";
import { EventTail } from "../../src/cli/event-tail.js";
import { tempWorkspace } from "../helpers/agent.js";
import { rejection } from "../helpers/assertions.js";
import { BACKENDS, TEST_DATABASE_URL, freshMigratedSchema, itOn, openBackend } from "../helpers/databases.js";
import { waitUntil } from "../helpers/waits.js";

async function eventsOf(runtime: Runtime, runId: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for await (const event of runtime.runs.events(runId)) out.push(event);
  return out;
}

/** The Runtime API members the CLI and the server use instead of stores, SQL and channels (issue 11 item 7). */
describe.each(BACKENDS)("Runtime API seam on %s", (backend) => {
  let owner: Database;
  let db: Database;
  let drop: () => Promise<void>;
  let workspace: { dir: string; cleanup: () => void };
  const runtimes: Runtime[] = [];
  beforeAll(async () => {
    owner = await openBackend(backend);
    ({ db, drop } = await freshMigratedSchema(owner));
  });
  afterAll(async () => {
    await drop();
    await owner.close();
  });
  beforeEach(() => {
    workspace = tempWorkspace();
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    workspace.cleanup();
  });

  function runtimeOn(on: Database, turns: ScriptedTurn[] = []): Runtime {
    const config = loadConfig({ DEVMIND_WORKSPACE: workspace.dir, DEVMIND_LEASE_MS: "3000", DEVMIND_MODEL_MAX_RETRIES: "0" });
    const runtime = createRuntime({ db: on, model: new ScriptedChatModel(turns), config });
    runtimes.push(runtime);
    return runtime;
  }

  /** Makes every insert of a run event of type `type` fail until the returned function runs. */
  async function refuseEvents(type: string): Promise<() => Promise<void>> {
    const table = `"${db.schema}".run_events`;
    await db.query(`ALTER TABLE ${table} ADD CONSTRAINT test_refuse_event CHECK (type <> '${type}') NOT VALID`);
    return async () => void (await db.query(`ALTER TABLE ${table} DROP CONSTRAINT test_refuse_event`));
  }

  it("cancel: the status change and its events commit together; a failed event write leaves the run as it was", async () => {
    const runtime = runtimeOn(db);
    const run = await runtime.runs.create({ input: { messages: ["never runs"] } });
    const allow = await refuseEvents("run.cancelled");
    try {
      const failed = await runtime.runs.cancel(run.run_id).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failed).not.toBeNull();
    } finally {
      await allow();
    }
    const after = await runtime.runs.get(run.run_id);
    expect(after).toMatchObject({ status: "pending", stop_reason: null, finished_at: null });
    expect((await eventsOf(runtime, run.run_id)).map((event) => event.type)).toEqual(["run.created"]);

    const cancelled = await runtime.runs.cancel(run.run_id);
    expect(cancelled).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    const events = await eventsOf(runtime, run.run_id);
    expect(events.map((event) => [event.seq, event.type])).toEqual([
      [1, "run.created"],
      [2, "run.cancel_requested"],
      [3, "run.cancelled"],
    ]);
    expect((await rejection(runtime.runs.cancel(run.run_id))).code).toBe("RUN_CONFLICT");
    expect(await eventsOf(runtime, run.run_id)).toHaveLength(3);
  });

  it("create: the run and its run.created event commit together", async () => {
    const runtime = runtimeOn(db);
    const thread = "seam-create-thread";
    const allow = await refuseEvents("run.created");
    try {
      const failed = await runtime.runs.create({ threadId: thread, input: { messages: ["refused"] } }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failed).not.toBeNull();
      const claimedHere = await runtime.runs.create({ threadId: thread, input: { messages: ["refused"] }, executeHere: true }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(claimedHere).not.toBeNull();
    } finally {
      await allow();
    }
    expect(await runtime.runs.list({ threadId: thread })).toEqual([]);
    const run = await runtime.runs.create({ threadId: thread, input: { messages: ["stored"] } });
    expect((await eventsOf(runtime, run.run_id)).map((event) => [event.seq, event.type])).toEqual([[1, "run.created"]]);
    expect((await runtime.runs.list({ threadId: thread })).map((r) => r.run_id)).toEqual([run.run_id]);
    await runtime.runs.cancel(run.run_id);
  });

  it("decisions lists who decided what on a run, oldest first, with the digest of the arguments that may run", async () => {
    const runtime = runtimeOn(db, [
      { tool_calls: [{ id: "w1", name: "write_file", args: { path: "a.txt", content: "one" } }, { id: "w2", name: "write_file", args: { path: "b.txt", content: "two" } }] },
      { content: "done" },
    ]);
    const run = await runtime.runs.create({ input: { messages: ["write two files"] } });
    expect(await runtime.runs.execute(run.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect(await runtime.runs.decisions(run.run_id)).toEqual([]);
    await runtime.runs.decide(run.run_id, { decisions: [{ type: "edit", tool_call_id: "w1", edited_action: { args: { path: "a.txt", content: "EDITED" } } }] }, { principal: "alice", reason: "fix" });
    // the last decision creates the run that resumes the thread (the Platform's model)
    const resumed = await runtime.runs.decide(run.run_id, { decisions: [{ type: "reject", tool_call_id: "w2", reason: "no b" }] }, { principal: "bob" });
    expect(resumed).toMatchObject({ status: "pending", resumes_run: run.run_id });
    const decisions = await runtime.runs.decisions(run.run_id);
    expect(decisions.map((d) => [d.tool_call_id, d.tool, d.decision, d.principal, d.reason])).toEqual([
      ["w1", "write_file", "edit", "alice", "fix"],
      ["w2", "write_file", "reject", "bob", "no b"],
    ]);
    expect(decisions[0]?.args_digest).toBe(argsDigest({ path: "a.txt", content: "EDITED" }));
    expect(decisions[1]?.args_digest).toBeNull();
    expect((await runtime.runs.execute(resumed.run_id)).status).toBe("success");
    // the decided events were stored with their decisions, on the run they answered
    const decided = (await eventsOf(runtime, run.run_id)).filter((event) => event.type === "approval.decided");
    expect(decided.map((event) => [event["tool_call_id"], event["decision"], event["by"]])).toEqual([
      ["w1", "edit", "alice"],
      ["w2", "reject", "bob"],
    ]);
  });

  it("decide: decisions and their approval.decided events commit together; racing deciders store one decision", async () => {
    const runtime = runtimeOn(db, [{ tool_calls: [{ id: "w1", name: "write_file", args: { path: "race.txt", content: "x" } }] }, { content: "done" }]);
    const second = runtimeOn(db);
    const run = await runtime.runs.create({ input: { messages: ["write a file"] } });
    expect(await runtime.runs.execute(run.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    const allow = await refuseEvents("approval.decided");
    try {
      const failed = await runtime.runs.decide(run.run_id, { decisions: [{ type: "approve" }] }, { principal: "alice" }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failed).not.toBeNull();
    } finally {
      await allow();
    }
    expect(await runtime.runs.decisions(run.run_id)).toEqual([]);
    // nothing committed: the thread still waits on the run, no run resumes it
    expect(await runtime.runs.get(run.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await runtime.runs.list({ threadId: run.thread_id })).map((item) => item.run_id)).toEqual([run.run_id]);

    const outcomes = await Promise.allSettled([
      runtime.runs.decide(run.run_id, { decisions: [{ type: "approve", tool_call_id: "w1" }] }, { principal: "alice" }),
      second.runs.decide(run.run_id, { decisions: [{ type: "reject", tool_call_id: "w1" }] }, { principal: "bob" }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
    expect(refused?.reason).toMatchObject({ code: "RUN_CONFLICT" });
    const decisions = await runtime.runs.decisions(run.run_id);
    expect(decisions).toHaveLength(1);
    const decided = (await eventsOf(runtime, run.run_id)).filter((event) => event.type === "approval.decided");
    expect(decided.map((event) => [event["tool_call_id"], event["decision"], event["by"]])).toEqual([["w1", decisions[0]?.decision, decisions[0]?.principal]]);
    // the one decision created one run that resumes the thread
    const created = outcomes.find((outcome) => outcome.status === "fulfilled");
    expect(created?.value).toMatchObject({ status: "pending", resumes_run: run.run_id });
    expect(await runtime.runs.list({ threadId: run.thread_id })).toHaveLength(2);
    await runtime.runs.cancel(String(created?.value.run_id));
  });

  it("live delivers another runtime's token deltas and stored-event signals; subscribeAll sees every run executed here", async () => {
    // on PostgreSQL the follower has its own connections: what reaches it went through the server
    const other = backend === "postgres" ? await openDatabase({ url: TEST_DATABASE_URL as string, schema: db.schema, maxConnections: 2 }) : db;
    try {
      const executing = runtimeOn(db, [{ content: "hello from the model" }]);
      const following = runtimeOn(other);
      const run = await executing.runs.create({ input: { messages: ["say hello"] } });
      const signals: LiveSignal[] = [];
      const everyRun: [string, LiveEvent][] = [];
      const unsubscribe = executing.runs.subscribeAll((runId, event) => everyRun.push([runId, event]));
      const stop = await following.runs.live(run.run_id, (signal) => signals.push(signal));
      const onlyEvents: LiveSignal[] = [];
      const stopEvents = await following.runs.live(run.run_id, (signal) => onlyEvents.push(signal), { deltas: false });
      expect((await executing.runs.execute(run.run_id)).status).toBe("success");
      const text = (): string =>
        signals
          .filter((signal) => signal.type === "model.delta")
          .map((signal) => (signal.type === "model.delta" ? signal.text : ""))
          .join("");
      await waitUntil("the deltas and the final events reached the follower", () => text() === "hello from the model" && signals.filter((s) => s.type === "events.stored").length >= 3, 30_000);
      await stop();
      await stopEvents();
      unsubscribe();
      expect(signals.every((signal) => signal.run_id === run.run_id)).toBe(true);
      expect(signals.find((signal) => signal.type === "model.delta")).toMatchObject({ type: "model.delta", run_id: run.run_id, round: 1 });
      expect(onlyEvents.length).toBeGreaterThan(0);
      expect(onlyEvents.every((signal) => signal.type === "events.stored")).toBe(true);
      // what subscribeAll saw: this run's lifecycle, in order, with its id
      const types = everyRun.filter(([runId]) => runId === run.run_id).map(([, event]) => event.type);
      expect(types.filter((type) => type.startsWith("run."))).toEqual(["run.started", "run.succeeded"]);
      expect(types).toContain("model.delta");
      // stopped: nothing more arrives
      const count = signals.length;
      const second = await executing.runs.create({ threadId: run.thread_id, input: { messages: ["again"] } });
      await executing.runs.cancel(second.run_id);
      expect(signals.length).toBe(count);
    } finally {
      if (other !== db) await other.close();
    }
  });

  it("the CLI's event tail of a run executing here reads only when events were stored: no poll, each event once in seq order", async () => {
    // seven tool rounds and the answer: the default limit is 8 model rounds
    const rounds = 7;
    const turns: ScriptedTurn[] = [
      ...Array.from({ length: rounds }, (_, index) => ({ tool_calls: [{ id: `add${index}`, name: "add", args: { a: index, b: 1 } }] })),
      { content: "done" },
    ];
    const runtime = runtimeOn(db, turns);
    const run = await runtime.runs.create({ input: { messages: ["add up"] } });
    let signals = 0;
    const unlisten = await runtime.runs.live(run.run_id, () => (signals += 1), { deltas: false });
    const printed: number[] = [];
    const tail = new EventTail(runtime, run.run_id, (event) => printed.push(event.seq));
    await tail.start();
    try {
      const ended = await runtime.runs.execute(run.run_id);
      expect(ended.status, JSON.stringify(ended.error)).toBe("success");
    } finally {
      await tail.stop();
      await unlisten();
    }
    const stored = (await eventsOf(runtime, run.run_id)).map((event) => event.seq);
    expect(printed).toEqual(stored);
    expect(stored.length).toBeGreaterThan(4 * rounds);
    // one read when the tail starts, one per notification, one drain at stop: never a timer's
    expect(tail.readCount).toBeLessThanOrEqual(signals + 2);
    expect(signals).toBeGreaterThan(rounds);
  });

  it("files.get returns a stored attachment with its bytes, and undefined for unknown or malformed ids", async () => {
    const runtime = runtimeOn(db);
    const stored = await new AttachmentStore(db).put({ name: "note.txt", mimeType: "text/plain", bytes: new TextEncoder().encode("hi there"), toolCallId: "c1" });
    const file = await runtime.files.get(stored.id);
    expect(file?.info).toMatchObject({ id: stored.id, name: "note.txt", mime_type: "text/plain", size: 8 });
    expect(Buffer.from(file?.bytes ?? []).toString("utf8")).toBe("hi there");
    expect(await runtime.files.get("00000000-0000-4000-8000-000000000000")).toBeUndefined();
    expect(await runtime.files.get("not-a-uuid'; DROP TABLE runs; --")).toBeUndefined();
  });

  itOn(backend, "pglite")("embedded: recoverOrphans and takeOver hand a dead process's running run back at once; waitStopped ends a cancelled one", async () => {
    const runtime = runtimeOn(db);
    const store = new RunStore(db);
    const first = await runtime.runs.create({ input: { messages: ["orphaned"] } });
    await store.claim(first.run_id, { owner: "dead-process", leaseMs: 600_000 });
    expect(await runtime.runs.recoverOrphans()).toEqual({ requeued: [first.run_id], failed: [], cancelled: [] });
    expect((await runtime.runs.get(first.run_id)).status).toBe("pending");

    await store.claim(first.run_id, { owner: "dead-again", leaseMs: 600_000 });
    const waits: string[] = [];
    const taken = await runtime.runs.takeOver(first.run_id, { onWait: (until) => waits.push(until) });
    expect(taken).toMatchObject({ run_id: first.run_id, status: "pending", lease: null });
    expect(waits).toEqual([]);

    await store.claim(first.run_id, { owner: "dead-third", leaseMs: 600_000 });
    expect((await runtime.runs.cancel(first.run_id)).status).toBe("running");
    const stopped = await runtime.runs.waitStopped(first.run_id, { timeoutMs: 30_000 });
    expect(stopped).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
    expect((await eventsOf(runtime, first.run_id)).map((event) => event.type).slice(-2)).toEqual(["run.cancel_requested", "run.cancelled"]);
    // other statuses are returned unchanged
    expect((await runtime.runs.takeOver(first.run_id)).status).toBe("interrupted");
  });

  itOn(backend, "postgres")("PostgreSQL: takeOver refuses a live lease, waits for a lapsing one; recoverOrphans leaves running runs alone", async () => {
    const runtime = runtimeOn(db);
    const store = new RunStore(db);
    const held = await runtime.runs.create({ input: { messages: ["held elsewhere"] } });
    await store.claim(held.run_id, { owner: "live-worker", leaseMs: 600_000 });
    expect(await runtime.runs.recoverOrphans()).toEqual({ requeued: [], failed: [], cancelled: [] });
    const refused = await rejection(runtime.runs.takeOver(held.run_id));
    expect(refused.code).toBe("RUN_CONFLICT");
    expect(refused.details).toMatchObject({ runId: held.run_id, owner: "live-worker" });
    expect((await runtime.runs.get(held.run_id)).status).toBe("running");
    await store.release(held.run_id, (await runtime.runs.get(held.run_id)).lease?.epoch ?? 0);
    await runtime.runs.cancel(held.run_id);

    const lapsing = await runtime.runs.create({ input: { messages: ["its process died"] } });
    await store.claim(lapsing.run_id, { owner: "dead-worker", leaseMs: 1_500 });
    const waits: string[] = [];
    const taken = await runtime.runs.takeOver(lapsing.run_id, { onWait: (until) => waits.push(until) });
    expect(taken).toMatchObject({ run_id: lapsing.run_id, status: "pending" });
    expect(waits).toHaveLength(1);

    await store.claim(lapsing.run_id, { owner: "dead-again", leaseMs: 1_500 });
    expect((await runtime.runs.cancel(lapsing.run_id)).status).toBe("running");
    const stopped = await runtime.runs.waitStopped(lapsing.run_id, { timeoutMs: 60_000 });
    expect(stopped).toMatchObject({ status: "interrupted", stop_reason: "cancelled" });
  });
});
