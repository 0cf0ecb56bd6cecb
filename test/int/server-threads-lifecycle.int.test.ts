import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, DeltaChannel, END, messagesDeltaReducer, START, StateGraph, type Messages } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { chainGraph, pauseGraph } from "../helpers/chain-graph.js";
import { BACKENDS, itOnPrimary } from "../helpers/databases.js";
import { sdkRefusal as refusal, sdkServers } from "../helpers/sdk-server.js";
import { waitUntil } from "../helpers/waits.js";

/** A chat whose `messages` is a DeltaChannel (as the built-in agent's): checkpoints store only each step's new messages. */
const deltaState = Annotation.Root({ messages: () => new DeltaChannel<BaseMessage[], Messages>(messagesDeltaReducer, { snapshotFrequency: 100 }) });
const echoGraph = new StateGraph(deltaState)
  .addNode("echo", (state) => ({ messages: [new AIMessage({ content: `echo ${state.messages.length}` })] }))
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();


type Chat = { messages: { content: string }[] };
const contents = (values: Chat): string[] => values.messages.map((message) => message.content);
const said = (text: string) => ({ messages: [{ type: "human", content: text }] });

describe.each(BACKENDS)("threads: copy, prune keep_latest, ttl, patchState, on_completion and joinStream through the official SDK on %s", (backend) => {
  const start = sdkServers(backend, { agent: false, chain: chainGraph, echo: echoGraph, pause: pauseGraph });

  it("copy: the same state and history under a new id, independent of the source; 404 for an unknown thread", async () => {
    const { client } = await start();
    const source = await client.threads.create({ graphId: "echo", metadata: { team: "x" } });
    await client.runs.wait(source.thread_id, "echo", { input: said("one") });
    await client.runs.wait(source.thread_id, "echo", { input: said("two") });
    const sourceState = await client.threads.getState<Chat>(source.thread_id);
    const sourceHistory = await client.threads.getHistory(source.thread_id, { limit: 50 });

    const copy = await client.threads.copy(source.thread_id);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toMatchObject({ team: "x", graph_id: "echo", thread_id: copy.thread_id });
    const copyState = await client.threads.getState<Chat>(copy.thread_id);
    expect(contents(copyState.values)).toEqual(["one", "echo 1", "two", "echo 3"]);
    expect(copyState.values).toEqual(sourceState.values);
    expect([copyState.checkpoint.checkpoint_id, copyState.checkpoint.thread_id]).toEqual([sourceState.checkpoint.checkpoint_id, copy.thread_id]);
    const copyHistory = await client.threads.getHistory(copy.thread_id, { limit: 50 });
    expect(copyHistory.map((state) => state.checkpoint.checkpoint_id)).toEqual(sourceHistory.map((state) => state.checkpoint.checkpoint_id));
    expect(copyHistory.map((state) => state.values)).toEqual(sourceHistory.map((state) => state.values));
    expect(await client.runs.list(copy.thread_id)).toEqual([]);

    // a run on the copy leaves the source as it was
    await client.runs.wait(copy.thread_id, "echo", { input: said("three") });
    expect(contents((await client.threads.getState<Chat>(copy.thread_id)).values)).toEqual(["one", "echo 1", "two", "echo 3", "three", "echo 5"]);
    expect((await client.threads.getState<Chat>(source.thread_id)).values).toEqual(sourceState.values);

    expect(await refusal(client.threads.copy("00000000-0000-4000-8000-000000000000"))).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("copy and keep_latest are refused while a run is active", async () => {
    const { client } = await start(0);
    const thread = await client.threads.create({ graphId: "chain" });
    await client.runs.create(thread.thread_id, "chain", { input: { path: [] } });
    expect(await refusal(client.threads.copy(thread.thread_id))).toMatchObject({ status: 409 });
    expect(await refusal(client.threads.prune([thread.thread_id], { strategy: "keep_latest" }))).toMatchObject({ status: 409 });
    expect(await client.threads.count()).toBe(1);
  });

  it("prune keep_latest: one checkpoint left, the state (delta channel included) unchanged, and the next run continues it", async () => {
    const { client } = await start();
    const chat = await client.threads.create({ graphId: "echo" });
    await client.runs.wait(chat.thread_id, "echo", { input: said("one") });
    await client.runs.wait(chat.thread_id, "echo", { input: said("two") });
    const chain = await client.threads.create({ graphId: "chain" });
    await client.runs.wait(chain.thread_id, "chain", { input: { path: ["start"] } });
    const [chatBefore, chainBefore] = [await client.threads.getState<Chat>(chat.thread_id), await client.threads.getState(chain.thread_id)];
    expect((await client.threads.getHistory(chat.thread_id, { limit: 50 })).length).toBeGreaterThan(2);

    expect(await client.threads.prune([chat.thread_id, chain.thread_id, "00000000-0000-4000-8000-000000000000"], { strategy: "keep_latest" })).toEqual({ pruned_count: 2 });
    for (const [thread, before] of [[chat, chatBefore], [chain, chainBefore]] as const) {
      const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
      expect(history.map((state) => state.checkpoint.checkpoint_id)).toEqual([before.checkpoint.checkpoint_id]);
      expect([history[0]?.values, history[0]?.parent_checkpoint ?? null]).toEqual([before.values, null]);
      expect((await client.threads.getState(thread.thread_id)).values).toEqual(before.values);
    }
    expect(contents(chatBefore.values)).toEqual(["one", "echo 1", "two", "echo 3"]);
    await client.runs.wait(chat.thread_id, "echo", { input: said("three") });
    expect(contents((await client.threads.getState<Chat>(chat.thread_id)).values)).toEqual(["one", "echo 1", "two", "echo 3", "three", "echo 5"]);
    expect((await client.threads.getHistory(chat.thread_id, { limit: 50 })).length).toBe(4);
  });

  itOnPrimary(backend)("ttl: stored on create and PATCH; the sweep deletes lapsed threads without an active run, keeps the others", async () => {
    const { server, client } = await start(0);
    // 0.0005 minutes: lapsed 30 ms after its last update
    const lapsing = await client.threads.create({ ttl: 0.0005, graphId: "chain" });
    const lasting = await client.threads.create({ ttl: 60 });
    const untimed = await client.threads.create();
    const busy = await client.threads.create({ ttl: 0.0005 });
    await client.runs.create(busy.thread_id, "chain", { input: { path: [] } });
    const patched = await client.threads.create();
    await client.threads.update(patched.thread_id, { ttl: 0.0005, metadata: { tag: "t" } });
    // refused by the body's schema: the official validator's 400 with zod issues naming the field
    expect(await refusal(client.threads.create({ ttl: { strategy: "keep", ttl: 1 } as never }))).toMatchObject({ status: 400, message: expect.stringMatching(/^HTTP 400: \{"success":false.*"ttl".*"ZodError"/) });
    expect(await refusal(client.threads.create({ ttl: -1 }))).toMatchObject({ status: 400, message: expect.stringMatching(/^HTTP 400: \{"success":false.*"ttl".*"ZodError"/) });

    let swept = 0;
    await waitUntil(
      "the lapsed threads swept",
      async () => {
        swept += await server.runtime.threads.sweepExpired();
        return swept >= 2;
      },
      5_000,
    );
    expect(swept).toBe(2);
    const left = await client.threads.search({ limit: 10, select: ["thread_id"], sortBy: "created_at", sortOrder: "asc" });
    expect(left.map((thread) => thread.thread_id)).toEqual([lasting.thread_id, untimed.thread_id, busy.thread_id]);
    expect(await refusal(client.threads.get(lapsing.thread_id))).toEqual({ status: 404, message: `HTTP 404: Thread with ID ${lapsing.thread_id} not found` });
    expect(await refusal(client.threads.get(patched.thread_id))).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("patchState merges metadata into the newest checkpoint's; the history filters by it", async () => {
    const { client } = await start();
    const thread = await client.threads.create({ graphId: "chain" });
    await client.runs.wait(thread.thread_id, "chain", { input: { path: [] } });
    const before = await client.threads.getState(thread.thread_id);
    await client.threads.patchState(thread.thread_id, { reviewed: "yes" });
    const after = await client.threads.getState(thread.thread_id);
    expect([after.checkpoint.checkpoint_id, after.metadata]).toEqual([before.checkpoint.checkpoint_id, { ...before.metadata, reviewed: "yes" }]);
    expect((await client.threads.getHistory(thread.thread_id, { metadata: { reviewed: "yes" } })).map((state) => state.checkpoint.checkpoint_id)).toEqual([before.checkpoint.checkpoint_id]);
    const empty = await client.threads.create({ graphId: "chain" });
    expect(await refusal(client.threads.patchState(empty.thread_id, { reviewed: "yes" }))).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("on_completion delete: a stateless run's thread is deleted once the run ended (wait, stream, create); keep keeps it", async () => {
    const { client } = await start();
    let waitedOn: string | undefined;
    // the SDK sends onCompletion as on_completion whatever its (stale) types say: LangGraph's values are "delete" and "keep"
    const deleting = { onCompletion: "delete" } as Record<string, unknown>;
    expect(await client.runs.wait(null, "chain", { input: { path: [] }, ...deleting, onRunCreated: (meta) => void (waitedOn = meta.thread_id) })).toEqual({ path: ["a", "b", "c"] });
    let streamedOn: string | undefined;
    const parts = [];
    for await (const part of client.runs.stream(null, "chain", { input: { path: ["s"] }, ...deleting, onRunCreated: (meta) => void (streamedOn = meta.thread_id) })) parts.push(part);
    expect(parts.filter((part) => part.event === "values").at(-1)?.data).toEqual({ path: ["s", "a", "b", "c"] });
    const created = await client.runs.create(null, "chain", { input: { path: ["c"] }, ...deleting });
    const kept = await client.runs.create(null, "chain", { input: { path: ["k"] }, ...({ onCompletion: "keep" } as Record<string, unknown>) });
    for (const threadId of [waitedOn, streamedOn, created.thread_id]) {
      await waitUntil(`thread ${String(threadId)} deleted`, async () => (await refusal(client.threads.get(threadId as string))).status === 404, 10_000);
    }
    await client.runs.join(kept.thread_id, kept.run_id);
    expect((await client.threads.getState(kept.thread_id)).values).toEqual({ path: ["k", "a", "b", "c"] });
  });

  itOnPrimary(backend)("joinStream follows the thread's runs as they come, and replays after Last-Event-ID", async () => {
    const { server, client } = await start(0);
    const thread = await client.threads.create({ graphId: "chain" });
    // no worker: the first run waits (pending) until the stream follows it
    const one = await client.runs.create(thread.thread_id, "chain", { input: { path: ["one"] } });
    const controller = new AbortController();
    const seen: { id?: string; event: string; data: unknown }[] = [];
    const following = (async () => {
      for await (const part of client.threads.joinStream(thread.thread_id, { signal: controller.signal })) {
        seen.push(part as { id?: string; event: string; data: unknown });
        if (seen.filter((item) => item.event === "values").length === 8) controller.abort();
      }
    })().catch((error: unknown) => {
      if (!controller.signal.aborted) throw error;
    });
    await waitUntil("the stream follows the pending run", () => seen.some((part) => part.event === "metadata"), 10_000);
    await server.runtime.runs.execute(one.run_id);
    const two = await client.runs.create(thread.thread_id, "chain", { input: { path: ["two"] } });
    await server.runtime.runs.execute(two.run_id);
    await waitUntil("both runs streamed", () => controller.signal.aborted, 10_000);
    await following;
    expect(seen.filter((part) => part.event === "metadata").map((part) => (part.data as { run_id: string }).run_id)).toEqual([one.run_id, two.run_id]);
    const values = seen.filter((part) => part.event === "values");
    expect(values.map((part) => (part.data as { path: string[] }).path.at(-1))).toEqual(["one", "a", "b", "c", "two", "a", "b", "c"]);
    expect(values.map((part) => part.id?.split(":")[0])).toEqual([...Array(4).fill(one.run_id), ...Array(4).fill(two.run_id)]);

    // after the second values part of the first run: the rest of it, then the second run
    const again = new AbortController();
    const replayed: { event: string; data: unknown }[] = [];
    for await (const part of client.threads.joinStream(thread.thread_id, { lastEventId: values[1]?.id, signal: again.signal })) {
      replayed.push(part as { event: string; data: unknown });
      if (replayed.filter((item) => item.event === "values").length === 6) break;
    }
    again.abort();
    expect(replayed.filter((part) => part.event === "values").map((part) => (part.data as { path: string[] }).path)).toEqual([
      ["one", "a", "b"],
      ["one", "a", "b", "c"],
      ["one", "a", "b", "c", "two"],
      ["one", "a", "b", "c", "two", "a"],
      ["one", "a", "b", "c", "two", "a", "b"],
      ["one", "a", "b", "c", "two", "a", "b", "c"],
    ]);
    expect(await refusal(client.threads.joinStream(thread.thread_id, { streamMode: "lifecycle" }).next())).toMatchObject({ status: 422, message: expect.stringContaining("lifecycle") });
    expect(await refusal(client.threads.joinStream("00000000-0000-4000-8000-000000000000").next())).toMatchObject({ status: 404 });
  });

  itOnPrimary(backend)("joinStream on a thread waiting at an interrupt sends the run that resumes it, not what the waiting run did before", async () => {
    // no worker: the resuming run stays pending until the stream follows it
    const { client, server } = await start(0);
    const thread = await client.threads.create({ graphId: "pause" });
    const run = await server.runtime.runs.create({ threadId: thread.thread_id, assistantId: "pause", input: { path: [] }, executeHere: true });
    await server.runtime.runs.execute(run.run_id);
    expect(await client.runs.get(thread.thread_id, run.run_id)).toMatchObject({ status: "success", stop_reason: "interrupt", waiting: true });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const controller = new AbortController();
    const seen: { event: string; data: unknown }[] = [];
    const following = (async () => {
      for await (const part of client.threads.joinStream(thread.thread_id, { signal: controller.signal })) {
        seen.push(part as { event: string; data: unknown });
        if (part.event === "values" && (part.data as { path: string[] }).path.includes("go")) controller.abort();
      }
    })().catch((error: unknown) => {
      if (!controller.signal.aborted) throw error;
    });
    // a resume is a new run (the Platform's model): the stream follows it from its start
    const resumed = await client.runs.create(thread.thread_id, "pause", { command: { resume: "go" } });
    expect(resumed.run_id).not.toBe(run.run_id);
    await waitUntil("the stream follows the resuming run", () => seen.some((part) => part.event === "metadata"), 10_000);
    const worker = server.runtime.worker({ concurrency: 1 });
    await worker.start();
    try {
      await waitUntil("the resumed run's values streamed", () => controller.signal.aborted, 10_000);
      await following;
    } finally {
      await worker.stop();
    }
    expect(seen.map((part) => [part.event, part.event === "metadata" ? (part.data as { run_id: string }).run_id : part.data])).toEqual([
      ["metadata", resumed.run_id],
      // the new run's values from its start: the state it resumes from, then its step
      ["values", { path: ["a"] }],
      ["values", { path: ["a", "go"] }],
    ]);
    expect(await client.runs.join(thread.thread_id, resumed.run_id)).toEqual({ path: ["a", "go"] });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });

});
