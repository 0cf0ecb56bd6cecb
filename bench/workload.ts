import { randomUUID } from "node:crypto";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import {
  JsonPlusSerializer,
  uuid6,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";

/** Shape of the checkpointer workload; the issue fixes these numbers, so they are not options. */
export const WORKLOAD = {
  /** Threads written step by step, interleaved (step 0 of every thread, then step 1, …). */
  threads: 100,
  /** Steps per thread: one `put` and one `putWrites` each, the message list growing by one. */
  steps: 20,
  /** Checkpoints on the extra thread that `list` reads. */
  listCheckpoints: 200,
  /** `list` calls on that thread, each consumed to the end. */
  listCalls: 50,
  /** `limit` passed to each `list` call. */
  listLimit: 10,
  /** `getTuple` calls by explicit `checkpoint_id` (random checkpoints of random threads). */
  getByIdCalls: 100,
  /** Steps of the throwaway warm-up thread (kept in the schema, so counted in its bytes). */
  warmupSteps: 3,
  /** Target size of one message serialized with LangGraph's JsonPlusSerializer. */
  messageBytes: 330,
  /** Seed of the text and of the random `getTuple` targets, so every run does the same thing. */
  seed: 0x5eed,
} as const;

/** The task path LangGraph passes to `putWrites` for a pull task of the node "agent". */
export const TASK_PATH = "~__pregel_pull, agent";

/** One step of a thread: the arguments of its `put` and of the `putWrites` that follows. */
export interface PlannedStep {
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: ChannelVersions;
  writes: PendingWrite[];
  taskId: string;
}

/** A thread and its steps in order; step `i` has `i + 1` messages. */
export interface PlannedThread {
  threadId: string;
  steps: PlannedStep[];
}

/**
 * Everything the bench writes and reads, built once and replayed identically against every
 * saver (fresh schemas make the reuse of thread and checkpoint ids safe).
 */
export interface Workload {
  threads: PlannedThread[];
  /** The 200-checkpoint thread that `list` reads. */
  listThread: PlannedThread;
  /** A short thread used only to warm up a saver before anything is timed. */
  warmupThread: PlannedThread;
  /** Targets of the `getTuple` by id calls. */
  byIdTargets: { threadId: string; checkpointId: string }[];
  /** Serialized sizes of the generated messages, to show they are what the issue asks. */
  messageBytes: { min: number; max: number; mean: number };
}

/** A small deterministic PRNG (mulberry32): values in [0, 1). */
export function createRng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the agent reads a file then runs the tests and reports which check failed before it edits the " +
  "parser so that empty lines no longer break the build while the reviewer asks for a smaller patch " +
  "with one commit per change plus a note on why the cache key must include the schema version"
).split(" ");

/** ASCII prose of exactly `length` characters (no characters JSON would escape). */
function prose(rng: () => number, length: number): string {
  let text = "";
  while (text.length < length) text += (text === "" ? "" : " ") + WORDS[Math.floor(rng() * WORDS.length)];
  return text.slice(0, length);
}

const serde = new JsonPlusSerializer();

/** Bytes of `value` as LangGraph's default serializer stores it. */
export async function serializedBytes(value: unknown): Promise<number> {
  const [, bytes] = await serde.dumpsTyped(value);
  return bytes.length;
}

/**
 * Builds message `index` of a conversation: even indexes are HumanMessage, odd ones AIMessage,
 * every third AIMessage with one tool call; the content is padded so the message serializes to
 * `WORKLOAD.messageBytes`.
 */
async function buildMessage(rng: () => number, index: number): Promise<{ message: BaseMessage; bytes: number }> {
  const id = randomUUID();
  let make: (content: string) => BaseMessage;
  if (index % 2 === 0) {
    make = (content) => new HumanMessage({ id, content });
  } else if (index % 6 === 1) {
    const toolCall = { id: `call_${id.slice(0, 8)}`, name: "search_repo", args: { query: prose(rng, 24) }, type: "tool_call" as const };
    make = (content) => new AIMessage({ id, content, tool_calls: [toolCall] });
  } else {
    make = (content) => new AIMessage({ id, content });
  }
  const overhead = await serializedBytes(make(""));
  const message = make(prose(rng, Math.max(0, WORKLOAD.messageBytes - overhead)));
  return { message, bytes: await serializedBytes(message) };
}

/** The `put` and `putWrites` arguments of step `step`, given the thread's messages so far. */
function buildStep(messages: readonly BaseMessage[], step: number): PlannedStep {
  const checkpoint: Checkpoint = {
    v: 4,
    id: uuid6(-1),
    ts: new Date().toISOString(),
    channel_values: { messages: messages.slice(0, step + 1), step },
    channel_versions: { __start__: 1, messages: step + 1, step: step + 1 },
    versions_seen: { agent: { messages: step }, __input__: {} },
  };
  const newVersions: ChannelVersions = step === 0 ? { __start__: 1, messages: 1, step: 1 } : { messages: step + 1, step: step + 1 };
  return {
    checkpoint,
    metadata: { source: "loop", step, parents: {} },
    newVersions,
    writes: [["messages", [messages[step]]]],
    taskId: randomUUID(),
  };
}

/**
 * Plans threads of `steps` steps each. Checkpoint ids (uuid6, time-ordered) are drawn in
 * interleaved order (step 0 of every thread, then step 1, …), as concurrent runs would draw them.
 */
async function planThreads(rng: () => number, threadIds: readonly string[], steps: number, sizes: number[]): Promise<PlannedThread[]> {
  const conversations: BaseMessage[][] = [];
  for (const _ of threadIds) {
    const messages: BaseMessage[] = [];
    for (let index = 0; index < steps; index++) {
      const built = await buildMessage(rng, index);
      messages.push(built.message);
      sizes.push(built.bytes);
    }
    conversations.push(messages);
  }
  const threads: PlannedThread[] = threadIds.map((threadId) => ({ threadId, steps: [] }));
  for (let step = 0; step < steps; step++) {
    threads.forEach((thread, index) => thread.steps.push(buildStep(conversations[index] ?? [], step)));
  }
  return threads;
}

/** Builds the whole workload (messages, checkpoints, writes, random read targets) once. */
export async function buildWorkload(): Promise<Workload> {
  const rng = createRng(WORKLOAD.seed);
  const sizes: number[] = [];
  const threadIds = Array.from({ length: WORKLOAD.threads }, (_, index) => `bench-thread-${String(index).padStart(3, "0")}`);
  const threads = await planThreads(rng, threadIds, WORKLOAD.steps, sizes);
  const [listThread] = await planThreads(rng, ["bench-list-thread"], WORKLOAD.listCheckpoints, sizes);
  const [warmupThread] = await planThreads(rng, ["bench-warmup"], WORKLOAD.warmupSteps, []);
  if (listThread === undefined || warmupThread === undefined) throw new Error("workload: thread planning returned nothing");
  const byIdTargets = Array.from({ length: WORKLOAD.getByIdCalls }, () => {
    const thread = threads[Math.floor(rng() * threads.length)];
    const step = thread?.steps[Math.floor(rng() * thread.steps.length)];
    if (thread === undefined || step === undefined) throw new Error("workload: no checkpoint to target");
    return { threadId: thread.threadId, checkpointId: step.checkpoint.id };
  });
  const total = sizes.reduce((sum, size) => sum + size, 0);
  return {
    threads,
    listThread,
    warmupThread,
    byIdTargets,
    messageBytes: { min: Math.min(...sizes), max: Math.max(...sizes), mean: total / sizes.length },
  };
}
