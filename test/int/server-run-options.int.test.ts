import { describe, expect, it } from "vitest";
import { chainGraph, pauseGraph } from "../helpers/chain-graph.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkRefusal as refusal, sdkServers } from "../helpers/sdk-server.js";


describe.each(BACKENDS)("LangGraph run options through the official SDK on %s", (backend) => {
  const start = sdkServers(backend, { chain: chainGraph, pause: pauseGraph });

  it("after_seconds: no worker starts the run before its delay; then it runs", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const created = await client.runs.create(thread.thread_id, "chain", { input: { path: [] }, afterSeconds: 1 });
    expect(created.status).toBe("pending");
    const done = await client.runs.join(thread.thread_id, created.run_id);
    expect(done).toEqual({ path: ["a", "b", "c"] });
    const events = [];
    for await (const event of server.runtime.runs.events(created.run_id)) events.push(event);
    const startedAt = events.find((event) => event.type === "run.started")?.at;
    const record = await server.runtime.runs.get(created.run_id);
    expect(Date.parse(String(startedAt)) - Date.parse(record.created_at)).toBeGreaterThanOrEqual(1_000);
    expect(record.not_before).not.toBeNull();
  });

  itOnPrimary(backend)("metadata is stored on the run and filters runs; interrupt_before / interrupt_after stop the graph, input null continues", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    const stopped = await client.runs.wait(thread.thread_id, "chain", { input: { path: [] }, interruptBefore: ["b"], metadata: { origin: "test", n: 1 } });
    expect(stopped).toEqual({ path: ["a"] });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["b"]);
    const [first] = await client.runs.list(thread.thread_id);
    expect([first?.status, first?.metadata]).toEqual(["success", { origin: "test", n: 1 }]);
    expect((await server.runtime.runs.list({ metadata: { origin: "test" } })).map((run) => run.run_id)).toEqual([first?.run_id]);
    expect(await server.runtime.runs.list({ metadata: { origin: "other" } })).toEqual([]);

    const after = await client.runs.wait(thread.thread_id, "chain", { input: null, interruptAfter: ["b"] });
    expect(after).toEqual({ path: ["a", "b"] });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["c"]);
    const finished = await client.runs.wait(thread.thread_id, "chain", { input: null });
    expect(finished).toEqual({ path: ["a", "b", "c"] });
    expect((await client.threads.getState(thread.thread_id)).next).toEqual([]);
    expect(await refusal(client.runs.create(thread.thread_id, "chain", { input: null, interruptBefore: 7 as never }))).toMatchObject({ status: 422, message: expect.stringContaining("interrupt_before") });
  });

  itOnPrimary(backend)("checkpoint_id / checkpoint: a run from an earlier checkpoint forks the thread there", async () => {
    const { client } = await start();
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, "chain", { input: { path: ["start"] } })).toEqual({ path: ["start", "a", "b", "c"] });
    const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
    const afterA = history.find((state) => JSON.stringify(state.values) === JSON.stringify({ path: ["start", "a"] }));
    expect(afterA?.next).toEqual(["b"]);
    const forkFrom = afterA?.checkpoint.checkpoint_id as string;

    // replay from there (input null): b and c run again on a new branch
    expect(await client.runs.wait(thread.thread_id, "chain", { input: null, checkpointId: forkFrom })).toEqual({ path: ["start", "a", "b", "c"] });
    const replayed = await client.threads.getState(thread.thread_id);
    expect(replayed.values).toEqual({ path: ["start", "a", "b", "c"] });
    const branch = await client.threads.getHistory(thread.thread_id, { limit: 3 });
    expect(branch[2]?.parent_checkpoint?.checkpoint_id).toBe(forkFrom);

    // the checkpoint object form, with new input: the fork starts from that state plus the input
    expect(await client.runs.wait(thread.thread_id, "chain", { input: { path: ["again"] }, checkpoint: { checkpoint_id: forkFrom, checkpoint_ns: "", thread_id: thread.thread_id } as never })).toEqual({
      path: ["start", "a", "again", "a", "b", "c"],
    });
    expect(await refusal(client.runs.wait(thread.thread_id, "chain", { input: null, checkpointId: "1f0c0000-0000-6000-8000-000000000000" }))).toMatchObject({ status: 404, message: expect.stringContaining("no checkpoint") });
  });

  itOnPrimary(backend)("options devmind does not implement are refused naming them, and leave no run behind", async () => {
    const { client } = await start(0);
    const thread = await client.threads.create();
    const cases: [Record<string, unknown>, string][] = [
      // a target outside DEVMIND_WEBHOOK_ALLOW (default: loopback only)
      [{ webhook: "http://10.0.0.1/hook" }, "webhook"],
      [{ onCompletion: "delete" }, "on_completion"],
      [{ durability: "exit" }, "durability"],
    ];
    for (const [option, name] of cases) {
      expect(await refusal(client.runs.create(thread.thread_id, "chain", { input: { path: [] }, ...option }))).toMatchObject({ status: 422, message: expect.stringContaining(name) });
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
  });

  itOnPrimary(backend)("multitask interrupt cancels the thread's active run and starts the new one; delete, cancelMany and createBatch", async () => {
    const { server, client } = await start(0);
    const thread = await client.threads.create();
    // no worker: the first run stays pending until the second one interrupts it
    const first = await client.runs.create(thread.thread_id, "chain", { input: { path: ["one"] } });
    const second = await client.runs.create(thread.thread_id, "chain", { input: { path: ["two"] }, multitaskStrategy: "interrupt" });
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
    expect(second.status).toBe("pending");
    await server.runtime.runs.execute(second.run_id);
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({ path: ["two", "a", "b", "c"] });

    // delete: a finished run goes with its events; an active one is refused
    await client.runs.delete(thread.thread_id, first.run_id);
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).toEqual([second.run_id]);
    expect(await refusal(client.runs.get(thread.thread_id, first.run_id))).toMatchObject({ status: 404 });
    const waiting = await client.runs.create(thread.thread_id, "chain", { input: { path: [] } });
    const claimed = await server.runtime.runs.get(waiting.run_id);
    expect(claimed.status).toBe("pending");

    // createBatch: stateless runs, one thread each; cancelMany by ids and by status
    const batch = await client.runs.createBatch([
      { assistantId: "chain", input: { path: ["x"] }, metadata: { batch: 1 } },
      { assistantId: "chain", input: { path: ["y"] }, metadata: { batch: 1 } },
    ]);
    expect(batch.map((run) => [run.status, run.metadata])).toEqual([["pending", { batch: 1 }], ["pending", { batch: 1 }]]);
    expect(new Set(batch.map((run) => run.thread_id)).size).toBe(2);
    await client.runs.cancelMany({ runIds: [batch[0]?.run_id as string] });
    expect((await server.runtime.runs.get(batch[0]?.run_id as string)).status).toBe("interrupted");
    await client.runs.cancelMany({ status: "pending" });
    expect((await server.runtime.runs.list({ status: "pending" })).map((run) => run.run_id)).toEqual([]);
    expect((await server.runtime.runs.get(waiting.run_id)).status).toBe("interrupted");
  });

  it("rollback: cancel action=rollback and multitask rollback remove the run and its checkpoints; the thread is as before it", async () => {
    const { server, client } = await start();
    const thread = await client.threads.create();
    expect(await client.runs.wait(thread.thread_id, "pause", { input: { path: ["one"] } })).toMatchObject({ path: ["one", "a"] });
    const first = (await client.runs.list(thread.thread_id))[0]?.run_id as string;
    // the resume is a new run (the Platform's model); it leaves the thread idle
    expect(await client.runs.wait(thread.thread_id, "pause", { command: { resume: "done" } })).toEqual({ path: ["one", "a", "done"] });
    const resumed = (await client.runs.list(thread.thread_id))[0]?.run_id as string;
    expect(await client.runs.get(thread.thread_id, resumed)).toMatchObject({ status: "success", stop_reason: "completed", resumes_run: first });
    const before = await client.threads.getState(thread.thread_id);

    // a finished run, rolled back by cancel: its checkpoints go, the state is the resumed run's end
    expect(await client.runs.wait(thread.thread_id, "chain", { input: { path: ["two"] } })).toEqual({ path: ["one", "a", "done", "two", "a", "b", "c"] });
    const second = (await client.runs.list(thread.thread_id))[0]?.run_id as string;
    await client.runs.cancel(thread.thread_id, second, true, "rollback");
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).toEqual([resumed, first]);
    const after = await client.threads.getState(thread.thread_id);
    expect([after.values, after.checkpoint.checkpoint_id]).toEqual([before.values, before.checkpoint.checkpoint_id]);
    expect((await client.threads.getHistory(thread.thread_id, { limit: 50 })).filter((state) => (state.metadata as { run_id?: string } | null)?.run_id === second)).toEqual([]);

    // multitask rollback: the thread's pending run goes, the new one runs on the state before it
    const third = await client.runs.create(thread.thread_id, "chain", { input: { path: ["three"] }, afterSeconds: 600 });
    expect(third.status).toBe("pending");
    const next = await client.runs.wait(thread.thread_id, "chain", { input: { path: ["four"] }, multitaskStrategy: "rollback" });
    expect(next).toEqual({ path: ["one", "a", "done", "four", "a", "b", "c"] });
    expect((await client.runs.list(thread.thread_id)).map((run) => run.run_id)).not.toContain(third.run_id);
    expect(await refusal(server.runtime.runs.rollback(resumed).then(() => client.runs.get(thread.thread_id, resumed)))).toMatchObject({ status: 404 });
  });

});
