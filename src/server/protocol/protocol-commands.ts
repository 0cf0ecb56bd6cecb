import type { Context } from "hono";
import type { CommandResponse, ErrorResponse } from "@langchain/protocol";
import { PROTOCOL_DEFAULTS } from "../../constants.js";
import { hasErrorCode } from "../../errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import { COMMAND_PARAMS, CommandEnvelope, isCommandMethod, issuesText, type CommandMethod, type CommandParams } from "../../runtime/protocol/command-schema.js";
import { checkpointIdOf } from "../../runtime/threads/thread-state.js";
import type { AuthVariables } from "../auth.js";
import { authorizeRunCreate, withAuthUser } from "../custom-auth/run-access.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import { withRequestContext } from "../run-request.js";
import { startRun } from "../run-start.js";
import { validate, RunCreateBody } from "../validation.js";
import { interruptsOf, toWire } from "../wire.js";
import { commandFailure, protocolError } from "./protocol-errors.js";
import { errorBody } from "../http-errors.js";
import { latestRun, threadRunsOldestFirst } from "./thread-runs.js";
import { runAgentTree } from "./thread-now.js";

type Ctx = Context<{ Variables: AuthVariables }>;

/** What a command runs with: the request (auth, headers), the runtime, the thread, the server's own URL. */
export interface CommandScope {
  c: Ctx;
  runtime: Runtime;
  threadId: string;
  selfUrl?: string | undefined;
}

type Answer = CommandResponse | ErrorResponse;

function success(id: number, result: Record<string, unknown>, threadId: string): CommandResponse {
  return { type: "success", id, result, meta: { thread_id: threadId } };
}

/**
 * Answers one protocol command (`@langchain/protocol`'s `Command`) on a thread: the envelope
 * and the method's params are validated (an unknown method is `unknown_command`, params that do
 * not fit `invalid_argument` naming the field; nothing is stored), then the command maps onto the
 * runtime's operations as the LangGraph routes do them, with the same auth: `run.start` (a run,
 * or the resume of the thread's interrupt, with the multitask strategy asked, default enqueue;
 * `config.configurable.checkpoint_id` forks), `input.respond` (a run resuming the interrupts
 * named), `input.inject` (a run with the message, queued behind the active one; the root graph
 * only), `state.get`, `state.listCheckpoints`, `state.fork`, `agent.getTree` (the run's tree of
 * subgraphs: `runAgentTree`). Subscriptions are the event stream's (`POST .../stream/events`, or
 * in-band on the WebSocket, where `subscription.reconnect` restores them): over HTTP they are
 * `not_supported`.
 */
export async function handleCommand(scope: CommandScope, raw: unknown): Promise<Answer> {
  const envelope = CommandEnvelope.safeParse(raw);
  if (!envelope.success) return protocolError(readId(raw), "invalid_argument", `invalid command: ${issuesText(envelope.error)}`);
  const { id, method } = envelope.data;
  if (!isCommandMethod(method)) return protocolError(id, "unknown_command", `unknown method ${JSON.stringify(method.slice(0, 100))}`);
  const parsed = COMMAND_PARAMS[method].safeParse(envelope.data.params ?? {});
  if (!parsed.success) return protocolError(id, "invalid_argument", `invalid params for ${method}: ${issuesText(parsed.error)}`);
  try {
    return await dispatch(scope, id, method, parsed.data);
  } catch (error) {
    return commandFailure(id, error);
  }
}

function readId(raw: unknown): number | null {
  const id = raw !== null && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined;
  return typeof id === "number" && Number.isInteger(id) && id >= 0 ? id : null;
}

async function dispatch(scope: CommandScope, id: number, method: CommandMethod, params: unknown): Promise<Answer> {
  const { runtime, threadId } = scope;
  switch (method) {
    case "run.start":
      return runStart(scope, id, params as CommandParams<"run.start">);
    case "input.respond":
      return inputRespond(scope, id, params as CommandParams<"input.respond">);
    case "input.inject": {
      const { message, namespace } = params as CommandParams<"input.inject">;
      // a run's input is the root graph's: a subgraph's input cannot be reached from outside it
      if (namespace !== undefined && namespace.length > 0) return protocolError(id, "not_supported", "input.inject reaches the root graph only (namespace [])");
      const assistantId = (await latestRun(runtime, threadId))?.assistant_id;
      if (assistantId === undefined) return protocolError(id, "no_such_run", "input.inject needs a run on the thread first (run.start)");
      const run = await createRun(scope, { assistant_id: assistantId, input: { messages: [{ role: message.role, content: message.content, ...(message.name === undefined ? {} : { name: message.name }) }] }, multitask_strategy: "enqueue" });
      return success(id, { run_id: run }, threadId);
    }
    case "state.get": {
      const { keys } = params as CommandParams<"state.get">;
      await visibleThread(scope.c, runtime, "read", threadId);
      const state = await runtime.threads.state(threadId);
      const values = (toWire(state.values ?? {}) ?? {}) as Record<string, unknown>;
      const picked = keys === undefined ? values : Object.fromEntries(Object.entries(values).filter(([key]) => keys.includes(key)));
      const checkpointId = checkpointIdOf(state);
      return success(id, { values: picked, ...(checkpointId === "" ? {} : { checkpoint: { id: checkpointId, ns: String(state.config.configurable?.["checkpoint_ns"] ?? "") } }) }, threadId);
    }
    case "state.listCheckpoints": {
      const { limit, before } = params as CommandParams<"state.listCheckpoints">;
      await visibleThread(scope.c, runtime, "read", threadId);
      const history = await runtime.threads.history(threadId, { limit: Math.min(limit ?? 10, PROTOCOL_DEFAULTS.listCheckpointsMax), before });
      const checkpoints = history.map((snapshot) => ({
        id: checkpointIdOf(snapshot),
        timestamp: snapshot.createdAt ?? new Date(0).toISOString(),
        step: typeof snapshot.metadata?.step === "number" ? snapshot.metadata.step : 0,
        ...(snapshot.tasks[0] === undefined ? {} : { node_name: snapshot.tasks[0].name }),
        metadata: toWire(snapshot.metadata ?? {}),
      }));
      return success(id, { checkpoints }, threadId);
    }
    case "state.fork": {
      const { checkpoint_id: checkpointId, input, config } = params as CommandParams<"state.fork">;
      const assistantId = (await latestRun(runtime, threadId))?.assistant_id;
      if (assistantId === undefined) return protocolError(id, "no_such_run", "state.fork needs a run on the thread first (its graph is the run's)");
      await visibleThread(scope.c, runtime, "read", threadId);
      const found = await runtime.threads.stateAt(threadId, checkpointId).then(
        () => true,
        (error: unknown) => {
          if (errorBody(error).status === 404) return false;
          throw error;
        },
      );
      if (!found) return protocolError(id, "no_such_checkpoint", `no checkpoint ${JSON.stringify(checkpointId.slice(0, 100))} on this thread`);
      const run = await createRun(scope, { assistant_id: assistantId, input: input ?? null, ...(config === undefined || config === null ? {} : { config }), checkpoint_id: checkpointId, multitask_strategy: "enqueue" });
      return success(id, { run_id: run, thread_id: threadId }, threadId);
    }
    case "agent.getTree": {
      const { run_id: runId } = params as CommandParams<"agent.getTree">;
      await visibleThread(scope.c, runtime, "read", threadId);
      const runs = await threadRunsOldestFirst(runtime, threadId);
      const run = runId === undefined ? runs[runs.length - 1] : runs.find((candidate) => candidate.run_id === runId);
      if (run === undefined) return protocolError(id, "no_such_run", runId === undefined ? "no run on this thread yet (run.start first)" : `no run ${JSON.stringify(runId.slice(0, 100))} on this thread`);
      return success(id, { tree: await runAgentTree(runtime, runs, run) }, threadId);
    }
    case "subscription.subscribe":
    case "subscription.unsubscribe":
    case "subscription.reconnect":
      return protocolError(id, "not_supported", `${method} is a WebSocket command; over HTTP each POST /threads/{id}/stream/events is one subscription (since: resume after a seq)`);
  }
}

async function runStart(scope: CommandScope, id: number, params: CommandParams<"run.start">): Promise<Answer> {
  const { threadId } = scope;
  // a thread waiting at an interrupt is resumed by run.start's input (the protocol's state machine)
  const { exists, waiting } = await threadWaits(scope);
  const resume = waiting.length > 0 && params.input !== undefined && params.input !== null;
  const run = await createRun(
    scope,
    {
    assistant_id: params.assistant_id,
    ...(resume ? { command: { resume: params.input } } : { input: params.input ?? null }),
    ...(params.config === undefined || params.config === null ? {} : { config: params.config }),
    ...(params.metadata === undefined || params.metadata === null ? {} : { metadata: params.metadata }),
    multitask_strategy: params.multitaskStrategy ?? PROTOCOL_DEFAULTS.multitaskStrategy,
    },
    exists,
  );
  return success(id, { run_id: run }, threadId);
}

async function inputRespond(scope: CommandScope, id: number, params: CommandParams<"input.respond">): Promise<Answer> {
  const { runtime, threadId } = scope;
  const values: Record<string, unknown> = {};
  const many = params as { responses?: { interrupt_id: string; response: unknown }[]; interrupt_id?: string; response?: unknown };
  if (many.responses !== undefined) for (const entry of many.responses) values[entry.interrupt_id] = entry.response;
  else if (many.interrupt_id !== undefined) values[many.interrupt_id] = many.response;
  const last = await latestRun(runtime, threadId);
  if (last === undefined) return protocolError(id, "no_such_run", "no interrupted run on this thread");
  const waiting = await pendingInterruptIds(scope);
  const unknown = Object.keys(values).find((interruptId) => !waiting.includes(interruptId));
  if (unknown !== undefined) return protocolError(id, "no_such_interrupt", `no interrupt ${JSON.stringify(unknown.slice(0, 100))} is waiting on this thread`);
  const command = { resume: values, ...(params.update === undefined ? {} : { update: params.update }), ...(params.goto === undefined ? {} : { goto: params.goto }) };
  const run = await createRun(scope, {
    assistant_id: last.assistant_id,
    command,
    ...(params.config === undefined || params.config === null ? {} : { config: params.config }),
    ...(params.metadata === undefined || params.metadata === null ? {} : { metadata: params.metadata }),
    multitask_strategy: "enqueue",
  });
  return success(id, { run_id: run }, threadId);
}

/** The ids of the interrupts the thread waits on (none for a new thread); the caller must see the thread. */
async function pendingInterruptIds(scope: CommandScope): Promise<string[]> {
  return (await threadWaits(scope)).waiting;
}

/**
 * Whether the thread exists for the caller (a thread it may not see counts as absent, and the run
 * request that follows answers for it as the routes do), and the ids of the interrupts it waits on.
 */
async function threadWaits(scope: CommandScope): Promise<{ exists: boolean; waiting: string[] }> {
  const { runtime, threadId, c } = scope;
  let status: string;
  try {
    status = (await visibleThread(c, runtime, "read", threadId)).status;
  } catch (error) {
    if (hasErrorCode(error, "THREAD_NOT_FOUND")) return { exists: false, waiting: [] };
    throw error;
  }
  // only a thread waiting at an interrupt has any: its state is read then, not for every run.start
  if (status !== "interrupted") return { exists: true, waiting: [] };
  const state = await runtime.threads.state(threadId).catch(() => undefined);
  if (state === undefined) return { exists: true, waiting: [] };
  const waiting = interruptsOf(state)
    .map((item) => item.id)
    .filter((item): item is string => typeof item === "string");
  return { exists: true, waiting };
}

/**
 * Creates a run on the thread as `POST /threads/{id}/runs` does (auth handler, request headers in
 * configurable), streaming every protocol mode; the thread is created when missing. `exists`: the
 * caller just saw the thread, so the request is the plain one (`startRun`'s one transaction that
 * checks the thread and creates the run), not one that looks for the thread first.
 */
async function createRun(scope: CommandScope, fields: Record<string, unknown>, exists = false): Promise<string> {
  const { c, runtime, threadId } = scope;
  const body = validate(RunCreateBody, { ...forkOf(fields, threadId), ...(exists ? {} : { if_not_exists: "create" }), stream_mode: [...PROTOCOL_DEFAULTS.runStreamModes] });
  const withContext = withRequestContext(body, c, scope.selfUrl);
  const { body: authorized, access } = await authorizeRunCreate(c, threadId, withAuthUser(c, withContext));
  const started = await startRun(runtime, threadId, authorized, c.get("principal"), { access });
  return started.run.run_id;
}

/**
 * The protocol forks with `config.configurable.checkpoint_id` (the SDK folds `forkFrom` into it);
 * devmind's run request names it `checkpoint_id` beside the config (where the runtime sets the
 * configurable one itself): moved there. `configurable.thread_id` naming this thread is dropped:
 * `@langchain/react`'s `useStream` sends it with every `run.start` (the official server sets it
 * again itself); another thread's id stays, and the run request refuses it.
 */
function forkOf(fields: Record<string, unknown>, threadId: string): Record<string, unknown> {
  const config = fields["config"] as Record<string, unknown> | undefined;
  const given = config?.["configurable"] as Record<string, unknown> | undefined;
  if (config === undefined || given === undefined || given === null || typeof given !== "object") return fields;
  const { thread_id: givenThread, ...others } = given;
  const configurable = givenThread === threadId ? others : given;
  const checkpointId = configurable["checkpoint_id"];
  if (checkpointId === undefined) return { ...fields, config: { ...config, configurable } };
  const { checkpoint_id: _moved, checkpoint_ns: _ns, ...rest } = configurable;
  return { ...fields, config: { ...config, configurable: rest }, checkpoint_id: checkpointId };
}
