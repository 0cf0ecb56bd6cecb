import { describe, expect, it } from "vitest";
import { chainGraph } from "../helpers/chain-graph.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkRefusal as refusal, sdkServers } from "../helpers/sdk-server.js";

describe.each(BACKENDS)("threads: state updates, history filters, count and prune through the official SDK on %s", (backend) => {
  const start = sdkServers(backend, { agent: false, chain: chainGraph });

  itOnPrimary(backend)("supersteps on create, updateState (as_node, at a checkpoint), getState at a checkpoint object, history by metadata and at a checkpoint", async () => {
    const { client } = await start();
    const thread = await client.threads.create({ graphId: "chain", supersteps: [{ updates: [{ values: { path: ["seed"] }, asNode: "a" }] }] });
    const seeded = await client.threads.getState<{ path: string[] }>(thread.thread_id);
    expect([seeded.values.path, seeded.next]).toEqual([["seed"], ["b"]]);

    const update = await client.threads.updateState(thread.thread_id, { values: { path: ["by-b"] }, asNode: "b" });
    const updateId = update.configurable?.checkpoint_id as string;
    const updated = await client.threads.getState<{ path: string[] }>(thread.thread_id);
    expect([updated.values.path, updated.next, updated.checkpoint.checkpoint_id]).toEqual([["seed", "by-b"], ["c"], updateId]);
    expect(await client.runs.wait(thread.thread_id, "chain", { input: null })).toEqual({ path: ["seed", "by-b", "c"] });

    // at an earlier checkpoint: the thread forks there
    const fork = await client.threads.updateState(thread.thread_id, { values: { path: ["fork"] }, asNode: "a", checkpointId: seeded.checkpoint.checkpoint_id as string });
    const forked = await client.threads.getState<{ path: string[] }>(thread.thread_id);
    expect([forked.values.path, forked.next, forked.parent_checkpoint?.checkpoint_id]).toEqual([["seed", "fork"], ["b"], seeded.checkpoint.checkpoint_id]);
    const atObject = await client.threads.getState<{ path: string[] }>(thread.thread_id, { checkpoint_id: updateId, checkpoint_ns: "" } as never);
    expect(atObject.values.path).toEqual(["seed", "by-b"]);

    const updates = await client.threads.getHistory(thread.thread_id, { metadata: { source: "update" } });
    expect(updates.map((state) => state.checkpoint.checkpoint_id)).toEqual([fork.configurable?.checkpoint_id, updateId, seeded.checkpoint.checkpoint_id]);
    const fromUpdate = await client.threads.getHistory(thread.thread_id, { checkpoint: { checkpoint_id: updateId }, limit: 2 });
    // as LangGraph's savers list with a checkpoint id in the config: that checkpoint alone
    expect(fromUpdate.map((state) => state.checkpoint.checkpoint_id)).toEqual([updateId]);
    expect(await refusal(client.threads.updateState(thread.thread_id, { values: { path: ["x"] }, checkpointId: "1f0c0000-0000-6000-8000-000000000000" }))).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("count, prune; updateState waits for no run; values filters are refused naming them", async () => {
    const { client } = await start(0);
    const [one, two] = [await client.threads.create({ metadata: { team: "x" } }), await client.threads.create({ metadata: { team: "y" } })];
    expect(await client.threads.count()).toBe(2);
    expect(await client.threads.count({ metadata: { team: "x" } })).toBe(1);
    const pending = await client.runs.create(two.thread_id, "chain", { input: { path: [] } });
    expect(await client.threads.count({ status: "busy" })).toBe(1);
    expect(await refusal(client.threads.updateState(two.thread_id, { values: { path: ["x"] } }))).toEqual({ status: 409, message: "HTTP 409: Thread is busy" });
    await client.runs.cancel(two.thread_id, pending.run_id);

    expect(await refusal(client.threads.search({ values: { path: [] } }))).toMatchObject({ status: 422, message: expect.stringContaining("values") });
    expect((await client.threads.search({ select: ["thread_id"], sortBy: "created_at", sortOrder: "asc" }))).toEqual([{ thread_id: one.thread_id }, { thread_id: two.thread_id }]);

    await client.threads.prune([one.thread_id, two.thread_id]);
    expect(await client.threads.count()).toBe(0);
  });

  it("smoke: updateState and the history metadata filter on the engine", async () => {
    const { client } = await start();
    const thread = await client.threads.create({ graphId: "chain" });
    expect(await client.runs.wait(thread.thread_id, "chain", { input: { path: [] }, interruptAfter: ["a"] })).toEqual({ path: ["a"] });
    await client.threads.updateState(thread.thread_id, { values: { path: ["edit"] } });
    expect((await client.threads.getHistory(thread.thread_id, { metadata: { source: "update" } })).map((state) => state.values)).toEqual([{ path: ["a", "edit"] }]);
  });
});
