import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { timed } from "./stats.js";
import { TASK_PATH, WORKLOAD, type PlannedThread, type Workload } from "./workload.js";

/** The timed operations, in report order. */
export const OPS = ["put", "putWrites", "getTuple latest", "getTuple by id", "list limit 10", "put, 200-step thread"] as const;

/** One of the timed operations. */
export type OpName = (typeof OPS)[number];

/** Per-call durations in milliseconds, by operation. */
export type OpSamples = Record<OpName, number[]>;

function threadConfig(threadId: string, checkpointId?: string): RunnableConfig {
  const configurable: Record<string, string> = { thread_id: threadId, checkpoint_ns: "" };
  if (checkpointId !== undefined) configurable["checkpoint_id"] = checkpointId;
  return { configurable };
}

/** Checks a saver's answer outside the timed region, so a saver that skips work cannot look fast. */
function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`bench sanity check failed: ${what}`);
}

/**
 * Writes step `step` of `thread` (`put`, then `putWrites` on the returned config) and returns
 * the new config; records the durations when `samples` is given.
 */
async function writeStep(
  saver: BaseCheckpointSaver,
  thread: PlannedThread,
  step: number,
  parent: RunnableConfig,
  samples?: { put: number[]; putWrites: number[] },
): Promise<RunnableConfig> {
  const planned = thread.steps[step];
  if (planned === undefined) throw new Error(`bench: ${thread.threadId} has no step ${step}`);
  let next: RunnableConfig = parent;
  const putMs = await timed(async () => {
    next = await saver.put(parent, planned.checkpoint, planned.metadata, planned.newVersions);
  });
  expect(next.configurable?.["checkpoint_id"] === planned.checkpoint.id, `put on ${thread.threadId} returned another checkpoint_id`);
  const writesMs = await timed(() => saver.putWrites(next, planned.writes, planned.taskId, TASK_PATH));
  samples?.put.push(putMs);
  samples?.putWrites.push(writesMs);
  return next;
}

/** Writes a whole thread step after step. */
async function writeThread(saver: BaseCheckpointSaver, thread: PlannedThread, samples?: { put: number[]; putWrites: number[] }): Promise<void> {
  let config = threadConfig(thread.threadId);
  for (let step = 0; step < thread.steps.length; step++) config = await writeStep(saver, thread, step, config, samples);
}

async function drain(saver: BaseCheckpointSaver, config: RunnableConfig, limit: number): Promise<number> {
  let count = 0;
  for await (const _ of saver.list(config, { limit })) count++;
  return count;
}

/** Exercises every operation on the throwaway warm-up thread (connections, prepared statements, JIT). */
export async function warmUp(saver: BaseCheckpointSaver, workload: Workload): Promise<void> {
  const thread = workload.warmupThread;
  await writeThread(saver, thread);
  const first = thread.steps[0]?.checkpoint.id;
  for (let round = 0; round < 3; round++) {
    await saver.getTuple(threadConfig(thread.threadId));
    await saver.getTuple(threadConfig(thread.threadId, first));
    await drain(saver, threadConfig(thread.threadId), WORKLOAD.listLimit);
  }
}

/**
 * Runs the measured workload against `saver`, every call awaited before the next: the threads'
 * steps interleaved (step 0 of every thread, then step 1, …), `getTuple` of each thread's latest
 * checkpoint, `getTuple` by id on random targets, then the 200-checkpoint thread and `list` on it.
 */
export async function runWorkload(saver: BaseCheckpointSaver, workload: Workload): Promise<OpSamples> {
  const samples: OpSamples = Object.fromEntries(OPS.map((op) => [op, [] as number[]])) as OpSamples;
  const configs = workload.threads.map((thread) => threadConfig(thread.threadId));
  for (let step = 0; step < WORKLOAD.steps; step++) {
    for (const [index, thread] of workload.threads.entries()) {
      configs[index] = await writeStep(saver, thread, step, configs[index] ?? threadConfig(thread.threadId), samples);
    }
  }

  for (const thread of workload.threads) {
    let tuple: Awaited<ReturnType<BaseCheckpointSaver["getTuple"]>>;
    samples["getTuple latest"].push(await timed(async () => (tuple = await saver.getTuple(threadConfig(thread.threadId)))));
    const latest = thread.steps[thread.steps.length - 1]?.checkpoint.id;
    expect(tuple?.checkpoint.id === latest, `getTuple latest on ${thread.threadId}`);
    const messages = tuple?.checkpoint.channel_values["messages"];
    expect(Array.isArray(messages) && messages.length === WORKLOAD.steps, `getTuple latest on ${thread.threadId} lost messages`);
    expect(tuple?.pendingWrites?.length === 1, `getTuple latest on ${thread.threadId} lost its pending write`);
  }

  for (const target of workload.byIdTargets) {
    let tuple: Awaited<ReturnType<BaseCheckpointSaver["getTuple"]>>;
    samples["getTuple by id"].push(await timed(async () => (tuple = await saver.getTuple(threadConfig(target.threadId, target.checkpointId)))));
    expect(tuple?.checkpoint.id === target.checkpointId, `getTuple by id ${target.checkpointId}`);
  }

  await writeThread(saver, workload.listThread, { put: samples["put, 200-step thread"], putWrites: [] });
  const listConfig = threadConfig(workload.listThread.threadId);
  for (let call = 0; call < WORKLOAD.listCalls; call++) {
    let count = 0;
    samples["list limit 10"].push(await timed(async () => (count = await drain(saver, listConfig, WORKLOAD.listLimit))));
    expect(count === WORKLOAD.listLimit, `list returned ${count} checkpoints, expected ${WORKLOAD.listLimit}`);
  }
  return samples;
}
