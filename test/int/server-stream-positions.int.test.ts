/**
 * A run's stream positions are a function of what is stored: with a chat model's tokens streamed
 * live, the LangGraph stream (`Last-Event-ID`) and the protocol's event stream (`since`) number
 * every durable part alike live and read later, and resuming after ANY position gives exactly
 * what comes after it (none missed, none twice).
 */
import { randomUUID } from "node:crypto";
import { AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/types.js";
import { BACKENDS, itOn, openBackend } from "../helpers/databases.js";
import { readProtocolEvents, rootEnds, sendCommand, type WireEvent } from "../helpers/protocol-sse.js";
import { startTestServer, TEST_KEYS, type TestServer } from "../helpers/server.js";
import { readSse, type SseEvent } from "../helpers/server-sse.js";

const KEY = { "x-api-key": TEST_KEYS.alice };

/** `talk` streams its answer a character at a time; `after` writes a custom event and a message of its own. */
const talker = new StateGraph(MessagesAnnotation)
  .addNode("talk", async (state) => ({ messages: [await new FakeListChatModel({ responses: ["hello there"], sleep: 100 }).invoke(state.messages)] }))
  .addNode("after", (_state, config: LangGraphRunnableConfig) => {
    config.writer?.({ step: "after" });
    return { messages: [new AIMessage({ content: "and more", id: "ai-after" })] };
  })
  .addEdge(START, "talk")
  .addEdge("talk", "after")
  .addEdge("after", END)
  .compile();

/** A graph whose node `research` runs a subgraph whose first node streams its answer at once, stored as `checkpointer` says. */
function researchGraph(checkpointer?: boolean) {
  const researcher = new StateGraph(MessagesAnnotation)
    .addNode("think", async (state) => ({ messages: [await new FakeListChatModel({ responses: ["thinking hard"], sleep: 40 }).invoke(state.messages)] }))
    .addEdge(START, "think")
    .addEdge("think", END)
    .compile(checkpointer === undefined ? {} : { checkpointer });
  return new StateGraph(MessagesAnnotation).addNode("research", researcher).addEdge(START, "research").addEdge("research", END).compile();
}
/** Its subgraph stores checkpoints (the parent's saver); its tokens can come before its first checkpoint is read. */
const subtalker = researchGraph();
/** Its subgraph stores nothing (`checkpointer: false`): only its task starts and tokens say it ran. */
const unsavedtalker = researchGraph(false);
/** Its subgraph keeps one history per thread (`checkpointer: true`): LangGraph names its namespace by the node alone. */
const persistenttalker = researchGraph(true);

const MODES = ["messages-tuple", "values", "updates", "custom"];

/** `gated`: `first` waits until the test opens the gate; `last` writes the run's final state. */
let openGate: () => void = () => undefined;
const gate = (): Promise<void> => new Promise((resolve) => (openGate = resolve));
let gateOpened: Promise<void> = Promise.resolve();
const gated = new StateGraph(MessagesAnnotation)
  .addNode("first", async () => {
    await gateOpened;
    return { messages: [new AIMessage({ content: "first", id: "ai-first" })] };
  })
  .addNode("last", () => ({ messages: [new AIMessage({ content: "last", id: "ai-last" })] }))
  .addEdge(START, "first")
  .addEdge("first", "last")
  .addEdge("last", END)
  .compile();

describe.each(BACKENDS)("stream positions with streamed tokens on %s", (backend) => {
  let owner: Database;
  let server: TestServer;
  beforeAll(async () => {
    owner = await openBackend(backend);
    server = await startTestServer(owner, [], { workers: 1, graphs: { agent: false, talker, gated, subtalker, unsavedtalker, persistenttalker } });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await owner?.close();
  });

  it("the LangGraph stream: live ids are the replay's; every Last-Event-ID resumes with exactly the parts after it", async () => {
    const thread = randomUUID();
    const live = await readSse(
      await fetch(`${server.url}/threads/${thread}/runs/stream`, {
        method: "POST",
        headers: { ...KEY, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "talker", input: { messages: [{ role: "user", content: "hi" }] }, stream_mode: MODES, if_not_exists: "create" }),
      }),
    );
    const chunks = live.filter((part) => part.id === undefined);
    expect(chunks.length).toBeGreaterThan(2);
    const runId = String((live[0]?.data as { run_id: string }).run_id);
    const join = `${server.url}/threads/${thread}/runs/${runId}/stream?${MODES.map((mode) => `stream_mode=${mode}`).join("&")}`;
    const replay = async (lastEventId?: string): Promise<SseEvent[]> => readSse(await fetch(join, { headers: { ...KEY, ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }) } }));
    const whole = await replay();
    // read later, no chunk: the streamed message is one part whole, where live had its closing
    // chunk or nothing (an id skipped); every other part has the same id, event and data
    const durable = live.filter((part) => part.id !== undefined);
    const streamedAt = whole.findIndex((part) => part.event === "messages" && (part.data as [{ content?: unknown }])[0].content === "hello there");
    expect(streamedAt).toBeGreaterThan(0);
    const skipped = whole[streamedAt]?.id as string;
    const others = (parts: SseEvent[]): SseEvent[] => parts.filter((part) => part.id !== skipped);
    expect(others(durable)).toEqual(others(whole));
    expect(durable.map((part) => part.id).filter((id) => id !== skipped)).toEqual(whole.map((part) => part.id).filter((id) => id !== skipped));
    // the parts after the streamed message keep their ids: a client that had them resumes exactly
    expect(Number(whole.at(-1)?.id)).toBe(whole.length - 1);
    for (const [index, part] of whole.entries()) expect(await replay(part.id)).toEqual(whole.slice(index + 1));
    // after the last live part before the message's end (a chunk's client has that id): the message whole, then the rest
    const beforeEnd = durable.filter((part) => Number(part.id) < Number(skipped)).at(-1)?.id as string;
    expect((await replay(beforeEnd))[0]).toEqual(whole[streamedAt]);
  }, 120_000);

  it("the protocol: every durable event has its live seq read later; since any position (a live chunk's too) gives exactly the events after it", async () => {
    const threadId = randomUUID();
    const channels = ["lifecycle", "values", "updates", "messages", "custom", "checkpoints", "tasks"];
    // subscribed before the run exists (it follows the thread's first run), so the tokens come live
    const following = readProtocolEvents(server.url, threadId, { channels }, { headers: KEY, until: rootEnds(1), limitMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "talker", input: { messages: [{ role: "user", content: "hi" }] } } }, KEY);
    const live = (await following).events;
    const chunks = live.filter((event) => event.event_id.includes(":live:"));
    expect(chunks.length).toBeGreaterThan(2);
    const later = (await readProtocolEvents(server.url, threadId, { channels, since: 0 }, { headers: KEY, until: rootEnds(1) })).events;
    expect(later.some((event) => event.event_id.includes(":live:"))).toBe(false);
    const seqOf = new Map(later.map((event) => [event.event_id, event.seq]));
    const stored = live.filter((event) => !event.event_id.includes(":live:"));
    expect(stored.map((event) => [event.event_id, seqOf.get(event.event_id)])).toEqual(stored.map((event) => [event.event_id, event.seq]));
    // the live stream's durable events are the later read's, but the streamed message's start and deltas (sent as chunks)
    const ids = (events: WireEvent[]): string[] => events.map((event) => event.event_id);
    expect(ids(later).filter((id) => ids(stored).includes(id))).toEqual(ids(stored));
    const positions = [...new Set([...later.map((event) => event.seq), ...chunks.map((event) => event.seq)])].sort((a, b) => a - b);
    const last = later.at(-1)?.seq as number;
    for (const since of positions) {
      // after the run's end nothing comes (the stream waits for a next run): a short look
      const resumed = (await readProtocolEvents(server.url, threadId, { channels, since }, { headers: KEY, until: rootEnds(1), limitMs: since >= last ? 1_500 : 10_000 })).events;
      expect(ids(resumed)).toEqual(ids(later.filter((event) => event.seq > since)));
    }
  }, 180_000);

  // a trigger stores the subgraph's checkpoints late (PostgreSQL; PGlite has one connection): its tokens come first
  itOn(backend, "postgres")("a subgraph's tokens before its first checkpoint is stored: its lifecycle started is a stored event, live as read later; resuming after any position gives exactly the rest", async () => {
    const schema = `"${server.db.schema}"`;
    await owner.query(`CREATE FUNCTION ${schema}.test_slow_subgraph() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$`);
    await owner.query(`CREATE TRIGGER test_slow_subgraph BEFORE INSERT ON ${schema}.checkpoints FOR EACH ROW WHEN (NEW.checkpoint_ns <> '') EXECUTE FUNCTION ${schema}.test_slow_subgraph()`);
    try {
      await subgraphTokens("subtalker");
    } finally {
      await owner.query(`DROP TRIGGER test_slow_subgraph ON ${schema}.checkpoints`);
      await owner.query(`DROP FUNCTION ${schema}.test_slow_subgraph()`);
    }
  }, 180_000);

  it("a subgraph's tokens: its lifecycle started is a stored event, live as read later; resuming after any position gives exactly the rest", async () => {
    await subgraphTokens("subtalker");
  }, 180_000);

  it("a subgraph that stores nothing (checkpointer: false): its tokens stream live after its stored task start; resuming after any position gives exactly the rest; the LangGraph stream with subgraphs ends without an error", async () => {
    const { threadId } = await subgraphTokens("unsavedtalker");
    const runs = (await (await fetch(`${server.url}/threads/${threadId}/runs`, { headers: KEY })).json()) as { run_id: string }[];
    const parts = await readSse(await fetch(`${server.url}/threads/${threadId}/runs/${runs[0]?.run_id}/stream?stream_mode=values&stream_mode=custom&stream_mode=messages-tuple&stream_subgraphs=true`, { headers: KEY }));
    expect(parts.map((part) => part.event)).not.toContain("error");
    expect(parts.at(-1)).toMatchObject({ event: "values" });
    expect(JSON.stringify(parts.at(-1)?.data)).toContain("thinking hard");
  }, 180_000);

  it("a subgraph with a history per thread (checkpointer: true): its tokens stream live under the namespace LangGraph gives it (the node), in each run; resuming after any position gives exactly the rest", async () => {
    const { live } = await subgraphTokens("persistenttalker");
    expect(new Set(live.filter((event) => event.event_id.includes(":live:")).map((event) => event.params.namespace[0]))).toEqual(new Set(["research"]));
  }, 180_000);

  /**
   * Runs `assistantId` (a `researchGraph`) while following it live, then reads it again and
   * resumes after every position (each durable event's and each token's): the subgraph's tokens
   * came live under its namespace, each namespace started once with a stored event, and every
   * resume gives exactly the later read's events after it.
   */
  async function subgraphTokens(assistantId: string): Promise<{ threadId: string; live: WireEvent[] }> {
    const threadId = randomUUID();
    const channels = ["lifecycle", "values", "updates", "messages", "checkpoints", "tasks"];
    const following = readProtocolEvents(server.url, threadId, { channels }, { headers: KEY, until: rootEnds(1), limitMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: assistantId, input: { messages: [{ role: "user", content: "hi" }] } } }, KEY);
    const live = (await following).events;
    const chunks = live.filter((event) => event.event_id.includes(":live:"));
    // under the namespace of the node that streams them, in the subgraph's, as LangGraph's protocol stream sends messages
    expect(chunks.filter((event) => event.params.namespace.length === 2 && event.params.namespace[1]?.startsWith("think:")).length).toBeGreaterThan(2);
    const startedOf = (events: WireEvent[]): WireEvent[] => events.filter((event) => event.method === "lifecycle" && event.params.data["event"] === "started");
    expect(startedOf(live).map((event) => event.params.namespace.length)).toEqual([0, 1, 2]);
    // no started goes out with a token: each is where a later read puts it
    expect(startedOf(live).filter((event) => event.event_id.includes(":live:"))).toEqual([]);
    // the streamed message ends where it started
    const message = chunks[0]?.params.data["id"];
    const ofMessage = live.filter((event) => event.method === "messages" && (event.params.data["id"] === message || event.event_id.includes(":live:") || event.params.data["event"] === "message-finish"));
    expect(new Set(ofMessage.map((event) => event.params.namespace.join("|")))).toEqual(new Set([chunks[0]?.params.namespace.join("|")]));
    const later = (await readProtocolEvents(server.url, threadId, { channels, since: 0 }, { headers: KEY, until: rootEnds(1) })).events;
    const ids = (events: WireEvent[]): string[] => events.map((event) => event.event_id);
    const seqOf = new Map(later.map((event) => [event.event_id, event.seq]));
    const stored = live.filter((event) => !event.event_id.includes(":live:"));
    expect(stored.map((event) => [event.event_id, seqOf.get(event.event_id)])).toEqual(stored.map((event) => [event.event_id, event.seq]));
    expect(ids(later).filter((id) => ids(stored).includes(id))).toEqual(ids(stored));
    const last = later.at(-1)?.seq as number;
    for (const since of [...new Set([...later.map((event) => event.seq), ...chunks.map((event) => event.seq)])].sort((a, b) => a - b)) {
      const resumed = (await readProtocolEvents(server.url, threadId, { channels, since }, { headers: KEY, until: rootEnds(1), limitMs: since >= last ? 1_500 : 10_000 })).events;
      expect(ids(resumed)).toEqual(ids(later.filter((event) => event.seq > since)));
      // a client that had the live events up to there: each namespace started once
      expect([...startedOf(live.filter((event) => event.seq <= since)), ...startedOf(resumed)].map((event) => event.params.namespace.length).sort()).toEqual([0, 1, 2]);
    }
    return { threadId, live };
  }

  // a second transaction holds the run's row (PostgreSQL; PGlite has one connection)
  itOn(backend, "postgres")("a step's state is sent once stored: the last step's values reach the subscriber while the run's end cannot be stored yet", async () => {
    gateOpened = gate();
    const threadId = randomUUID();
    const started = await sendCommand(server.url, threadId, { id: 1, method: "run.start", params: { assistant_id: "gated", input: { messages: [{ role: "user", content: "go" }] } } }, KEY);
    const runId = (started.body["result"] as { run_id: string }).run_id;
    for (let tries = 0; tries < 200 && (await server.runtime.runs.get(runId)).status !== "running"; tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    // the run's row held FOR SHARE: its checkpoints and events are stored (their fence shares the
    // lock), its end (an UPDATE of the row) waits for this transaction
    let early: WireEvent[] = [];
    await owner.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM "${server.db.schema}".runs WHERE run_id = $1 FOR SHARE`, [runId]);
      openGate();
      const last = (events: WireEvent[]): boolean => events.some((event) => event.method === "values" && JSON.stringify(event.params.data).includes("ai-last"));
      early = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "values"] }, { headers: KEY, until: last, limitMs: 30_000 })).events;
    });
    expect(early.some((event) => event.method === "values" && JSON.stringify(event.params.data).includes("ai-last"))).toBe(true);
    expect(early.filter((event) => event.method === "lifecycle" && event.params.namespace.length === 0).map((event) => event.params.data["event"])).toEqual(["started"]);
    const all = (await readProtocolEvents(server.url, threadId, { channels: ["lifecycle", "values"], since: 0 }, { headers: KEY, until: rootEnds(1) })).events;
    expect(all.at(-1)?.params.data["event"]).toBe("completed");
  }, 120_000);
});
