import { Hono, type Context } from "hono";
import { RUNTIME_DEFAULTS } from "../../constants.js";
import { RunNotFoundError } from "../../errors.js";
import { isDatabaseFault, retryDatabaseFaults } from "../../runtime/execution/backoff.js";
import { isRunStatus, type RunRecord } from "../../runtime/queue/run-record.js";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { httpError } from "../http-errors.js";
import { cancelAndRollback, finalValues, startRun, waitForRun, type StartedRun } from "../run-start.js";
import { runStream } from "../run-stream.js";
import { cancelLikeOfficial, isHiddenFromCaller, notFoundPart } from "../run-cancel.js";
import { MESSAGES_EVENTS_MODE } from "../stream-messages.js";
import { sseResponse } from "../sse.js";
import { parseStreamResume } from "../stream-cursor.js";
import { parseThreadCursor, threadStream } from "../thread-stream.js";
import { intQuery, readBody, readJson, RunCancelManyBody, RunCreateBody, STREAM_MODES, validate, type RunCreateBody as RunCreateBodyType } from "../validation.js";
import { SERVER_DEFAULTS } from "../../constants.js";
import { z } from "zod";
import { runWire } from "../wire.js";
import { readRunRequest, withRequestContext } from "../run-request.js";
import { authorizeRunCreate, runListAccess, visibleRun, withAuthUser } from "../custom-auth/run-access.js";
import { visibleThread } from "../custom-auth/thread-access.js";

type Env = { Variables: AuthVariables };

const SERVED_MODES = "values, updates, messages, messages-tuple, custom, checkpoints, tasks, debug, tools, events";

/**
 * Stream modes from a body or query; default `values`; `messages-tuple` is served as `messages`,
 * and LangGraph's older `messages` mode as MESSAGES_EVENTS_MODE.
 * An unknown mode is refused naming it. `events` (LangChain's stream events) is sent from what
 * the run recorded: a run created with it records them (`runLimitsOf`).
 */
function modesOf(requested: string | readonly string[] | null | undefined): Set<string> {
  const list = requested === undefined || requested === null ? ["values"] : typeof requested === "string" ? [requested] : requested;
  for (const mode of list) {
    if (!(STREAM_MODES as readonly string[]).includes(mode)) throw httpError("REQUEST_INVALID", `unknown stream_mode ${JSON.stringify(mode.slice(0, 50))}; devmind serves ${SERVED_MODES}`, { field: "stream_mode" });
  }
  return new Set(list.map((mode) => (mode === "messages-tuple" ? "messages" : mode === "messages" ? MESSAGES_EVENTS_MODE : mode)));
}

/** Cancel `action`: interrupt (the default) or rollback (the run and its checkpoints removed); anything else 422. */
function cancelAction(action: string | undefined): "interrupt" | "rollback" {
  if (action === undefined || action === "" || action === "interrupt") return "interrupt";
  if (action === "rollback") return "rollback";
  throw httpError("REQUEST_INVALID", `cancel action ${JSON.stringify(action.slice(0, 50))} is not supported: interrupt or rollback`, { field: "action" });
}

function runPath(run: RunRecord): string {
  return `/threads/${encodeURIComponent(run.thread_id)}/runs/${run.run_id}`;
}

/**
 * LangGraph Platform's runs (CONTRACT section 8), as the SDK's `client.runs` calls them. Runs
 * execute on workers (in this or any other process); these routes create, resume, stream and wait.
 *
 * - `POST /threads/{tid}/runs` (and `/runs` without a thread) -> Run, `Content-Location: /threads/{tid}/runs/{rid}`.
 * - `POST /threads/{tid}/runs/stream` (and `/runs/stream`) -> SSE (see `runStream`), with
 *   `Content-Location` and `Location: /threads/{tid}/runs/{rid}/stream` to reconnect to.
 * - `POST /threads/{tid}/runs/wait` (and `/runs/wait`) -> the thread's values when the run stops
 *   (`__interrupt__` added while it waits for approval).
 * - `command: {resume: {decisions: [...]}}` instead of `input` decides the thread's interrupted
 *   run as the caller's key (CONTRACT section 5); the same run continues (same run id).
 * - `multitask_strategy` reject (default: 409 while the thread has an active run) | enqueue |
 *   interrupt (cancels the thread's active runs first) | rollback (and removes them with their
 *   checkpoints); run options in `runOptionsOf`. Cancel `action=rollback`: `cancelAndRollback`.
 * - `POST /runs/batch [RunCreate...]` -> Run[] (stateless); `POST /runs/cancel {run_ids?|status?,
 *   thread_id?}` -> 204; `DELETE /threads/{tid}/runs/{rid}` -> 204 (409 while running or interrupted).
 * - `GET /threads/{tid}/runs?limit&offset&status` -> Run[] newest first; `GET .../runs/{rid}` -> Run;
 *   `POST .../runs/{rid}/cancel?wait=0|1` -> 202 Run (200 after it stopped with wait=1);
 *   `GET .../runs/{rid}/join` -> values; `GET .../runs/{rid}/stream` (and `/runs/{rid}/stream`)
 *   -> SSE from the start, or after `Last-Event-ID` (a part's position in the run's stream, `-1`
 *   for all), in the modes asked, else those the run was created with.
 * - `GET /threads/{tid}/stream?stream_mode=run_modes` (`threads.joinStream`) -> SSE of the thread's
 *   runs as they come (`threadStream`), after `Last-Event-ID`; `lifecycle` and `state_update` 422.
 * Run: LangGraph's fields plus devmind's record (`stop_reason`, `answer`, counts, `usage`, `error`).
 */
export function langgraphRunRoutes(deps: AppDeps): Hono<Env> {
  const { runtime } = deps;
  const app = new Hono<Env>();

  // the run of the path, on a thread the caller may see (its auth handler's filter, in SQL)
  const threadRun = (c: Context<Env>, action: "read" | "update" | "delete" = "read"): Promise<RunRecord> => visibleRun(c, runtime, action, c.req.param("rid") ?? "", c.req.param("tid"));
  // the request's run body as the auth handler leaves it (owner metadata, the user in configurable), and the thread filter
  const authorized = async (c: Context<Env>, threadId: string | null, read: RunCreateBodyType) => {
    const { body, access } = await authorizeRunCreate(c, threadId, withAuthUser(c, read));
    const reason = c.get("auditReason");
    return { body, options: { access, ...(reason === undefined ? {} : { reason }) } };
  };

  // a stateless run with on_completion "delete" read by this request: its thread is deleted once the request is done with it
  const holdFor = (threadId: string | null) => (threadId === null ? { holdCompletionMs: SERVER_DEFAULTS.waitMaxMs } : {});
  const release = (run: RunRecord): Promise<void> => runtime.runs.releaseCompletion(run.run_id).catch(() => undefined);

  const streamStarted = (c: Context<Env>, started: StartedRun, modes: Set<string>, subgraphs: boolean, cancelOnDisconnect: boolean, releaseAtEnd = false): Response => {
    c.header("Content-Location", runPath(started.run));
    // where the SDK reconnects (with Last-Event-ID); it carries the modes, which a reconnect does not resend
    const query = new URLSearchParams([...modes].map((mode): [string, string] => ["stream_mode", mode === "messages" ? "messages-tuple" : mode === MESSAGES_EVENTS_MODE ? "messages" : mode]));
    if (subgraphs) query.set("stream_subgraphs", "true");
    c.header("Location", `${runPath(started.run)}/stream?${query.toString()}`);
    const runId = started.run.run_id;
    return sseResponse(
      c,
      async function* parts(signal) {
        try {
          yield* runStream(runtime, runId, { modes, from: started.from, after: started.after, subgraphs, run: started.run, signal });
        } finally {
          if (releaseAtEnd) await release(started.run);
        }
      },
      { shutdown: deps.shutdown, heartbeatMs: deps.heartbeatMs, onClientGone: cancelOnDisconnect ? () => void runtime.runs.cancel(runId).catch(() => undefined) : undefined },
    );
  };

  const create = async (c: Context<Env>, threadId: string | null): Promise<Response> => {
    const { body, options } = await authorized(c, threadId, await readRunRequest(c, deps.selfUrl?.()));
    modesOf(body.stream_mode);
    const started = await startRun(runtime, threadId, body, c.get("principal"), options);
    c.header("Content-Location", runPath(started.run));
    return c.json(runWire(started.run));
  };
  const stream = async (c: Context<Env>, threadId: string | null): Promise<Response> => {
    const { body, options } = await authorized(c, threadId, await readRunRequest(c, deps.selfUrl?.()));
    const modes = modesOf(body.stream_mode);
    // a stream option: the stream sends subgraph parts (runs.create and runs.wait refuse it)
    const subgraphs = body.stream_subgraphs === true;
    const started = await startRun(runtime, threadId, { ...body, stream_subgraphs: undefined }, c.get("principal"), { ...holdFor(threadId), ...options });
    return streamStarted(c, started, modes, subgraphs, body.on_disconnect === "cancel", threadId === null);
  };
  const wait = async (c: Context<Env>, threadId: string | null): Promise<Response> => {
    const { body, options } = await authorized(c, threadId, await readRunRequest(c, deps.selfUrl?.()));
    modesOf(body.stream_mode);
    // listening for run ends before the run exists: its end reaches this wait, which needs no first read
    const listening = await runtime.runs.listenEnds();
    const started = await startRun(runtime, threadId, body, c.get("principal"), { ...holdFor(threadId), ...options });
    c.header("Content-Location", runPath(started.run));
    try {
      const { run, state } = await waitForRun(runtime, started.run, c.req.raw.signal, listening);
      return c.json(await finalValues(runtime, run, state));
    } finally {
      if (threadId === null) await release(started.run);
    }
  };

  app.post("/runs/batch", async (c) => {
    const raw = await readJson(c);
    const bodies = validate(z.array(RunCreateBody).min(1).max(SERVER_DEFAULTS.runBatchMax), raw);
    // one by one, so a refused payload leaves the ones before it created, as the official server's Promise.all would
    const created: Record<string, unknown>[] = [];
    for (const read of bodies) {
      const { body, options } = await authorized(c, null, withRequestContext(read, c, deps.selfUrl?.()));
      created.push(runWire((await startRun(runtime, null, body, c.get("principal"), options)).run));
    }
    return c.json(created);
  });
  app.post("/runs/cancel", async (c) => {
    const body = await readBody(c, RunCancelManyBody);
    const action = cancelAction(c.req.query("action"));
    const named = body.run_ids ?? null;
    // with an auth handler: only runs of threads the caller may change (another user's run is 404; by status, not listed)
    const threadAccess = named === null ? await runListAccess(c, "update") : undefined;
    const targets =
      named !== null
        ? await Promise.all(named.map((runId) => visibleRun(c, runtime, "update", runId)))
        : (
            await Promise.all(
              (body.status === "all" ? (["pending", "running"] as const) : [body.status as "pending" | "running"]).map((status) =>
                runtime.runs.list({ status, limit: 500, ...(body.thread_id == null ? {} : { threadId: body.thread_id }), ...(threadAccess === undefined ? {} : { threadAccess }) }),
              ),
            )
          ).flat();
    if (body.thread_id != null && targets.some((run) => run.thread_id !== body.thread_id)) throw new RunNotFoundError(targets.find((run) => run.thread_id !== body.thread_id)?.run_id ?? "");
    await Promise.all(targets.map((run) => (action === "rollback" ? cancelAndRollback(runtime, run) : cancelLikeOfficial(runtime, run.run_id))));
    return c.body(null, 204);
  });
  app.post("/threads/:tid/runs", (c) => create(c, c.req.param("tid")));
  app.post("/runs", (c) => create(c, null));
  app.post("/threads/:tid/runs/stream", (c) => stream(c, c.req.param("tid")));
  app.post("/runs/stream", (c) => stream(c, null));
  app.post("/threads/:tid/runs/wait", (c) => wait(c, c.req.param("tid")));
  app.post("/runs/wait", (c) => wait(c, null));

  app.get("/threads/:tid/runs", async (c) => {
    const threadId = c.req.param("tid");
    await visibleThread(c, runtime, "read", threadId);
    const limit = intQuery(c.req.query("limit"), "limit", 10, 500) || 10;
    const offset = intQuery(c.req.query("offset"), "offset", 0, 500);
    const status = c.req.query("status");
    if (status !== undefined && !isRunStatus(status)) throw httpError("REQUEST_INVALID", `unknown run status ${JSON.stringify(status.slice(0, 50))}`);
    const runs = await runtime.runs.list({ threadId, status, limit: Math.min(500, limit + offset) });
    return c.json(runs.slice(offset, offset + limit).map(runWire));
  });
  app.get("/threads/:tid/runs/:rid", async (c) => c.json(runWire(await threadRun(c))));
  app.post("/threads/:tid/runs/:rid/cancel", async (c) => {
    const run = await threadRun(c, "update");
    if (cancelAction(c.req.query("action")) === "rollback") {
      await cancelAndRollback(runtime, run);
      return c.body(null, 204);
    }
    // a run that already ended is answered 202 as it is (the official server's answer), not 409
    const cancelled = await cancelLikeOfficial(runtime, run.run_id);
    if (c.req.query("wait") !== "1" && c.req.query("wait") !== "true") return c.json(runWire(cancelled), 202);
    const stopped = await runtime.runs.wait(run.run_id, { timeoutMs: RUNTIME_DEFAULTS.drainTimeoutMs, signal: c.req.raw.signal });
    return c.json(runWire(stopped));
  });
  app.delete("/threads/:tid/runs/:rid", async (c) => {
    const run = await threadRun(c, "delete");
    await runtime.runs.delete(run.run_id);
    return c.body(null, 204);
  });
  app.get("/threads/:tid/runs/:rid/join", async (c) => {
    const run = await threadRun(c);
    const stopped = await waitForRun(runtime, run, c.req.raw.signal);
    return c.json(await finalValues(runtime, stopped.run, stopped.state));
  });
  /** A stream of one `notFoundPart` (then its end). */
  const notFoundStream = (c: Context<Env>, what: "Run" | "Thread"): Response =>
    sseResponse(
      c,
      async function* parts() {
        yield notFoundPart(what);
      },
      { shutdown: deps.shutdown, heartbeatMs: deps.heartbeatMs },
    );
  /** The modes a join streams: those asked, else the run's own (as the official server streams a run it joins). */
  const joinModes = (c: Context<Env>, run: RunRecord): Set<string> => {
    const modes = modesOf(c.req.queries("stream_mode") ?? run.stream_mode);
    if (modes.has("events") && run.limits.maxStreamEvents === undefined) {
      throw httpError("REQUEST_INVALID", `stream_mode "events" is not available for run ${run.run_id}: it was created without it, so its LangChain stream events were not recorded`, { field: "stream_mode" });
    }
    return modes;
  };
  const join = async (c: Context<Env>): Promise<Response> => {
    const resume = parseStreamResume(c.req.header("last-event-id"));
    const subgraphs = c.req.query("stream_subgraphs");
    if (subgraphs !== undefined && subgraphs !== "true" && subgraphs !== "false") throw httpError("REQUEST_INVALID", "stream_subgraphs must be true or false", { field: "stream_subgraphs" });
    const cancelOnDisconnect = c.req.query("cancel_on_disconnect") === "1";
    let run: RunRecord;
    try {
      run = await threadRun(c);
    } catch (error) {
      // with an auth handler, another user's run (or none) opens the stream with one error part, as the official server answers
      if (isHiddenFromCaller(c, error)) return notFoundStream(c, "Run");
      if (!isDatabaseFault(error)) throw error;
      // the database is away: an SDK reconnecting to its stream (Location + Last-Event-ID) gets the
      // stream, heartbeats until the database answers, not a 503 that would spend its reconnects;
      // nothing is sent before the run is found and the caller's access to it checked
      c.header("Content-Location", c.req.path.replace(/\/stream$/, ""));
      let foundId: string | undefined;
      return sseResponse(
        c,
        async function* parts(signal) {
          const found = await retryDatabaseFaults(() => threadRun(c), { maxMs: SERVER_DEFAULTS.streamFaultMaxMs, signal });
          foundId = found.run_id;
          yield* runStream(runtime, found.run_id, { modes: joinModes(c, found), ...(resume ?? {}), subgraphs: subgraphs === "true", run: found, signal });
        },
        {
          shutdown: deps.shutdown,
          heartbeatMs: deps.heartbeatMs,
          onClientGone: cancelOnDisconnect ? () => void (foundId === undefined ? undefined : runtime.runs.cancel(foundId).catch(() => undefined)) : undefined,
        },
      );
    }
    return streamStarted(c, { run, ...resume }, joinModes(c, run), subgraphs === "true", cancelOnDisconnect);
  };
  // the SDK's threads.joinStream: every run of the thread in turn; `run_modes` sends each run's values
  app.get("/threads/:tid/stream", async (c) => {
    const threadId = c.req.param("tid");
    try {
      await visibleThread(c, runtime, "read", threadId);
    } catch (error) {
      if (isHiddenFromCaller(c, error)) return notFoundStream(c, "Thread");
      throw error;
    }
    const requested = c.req.queries("stream_mode") ?? ["run_modes"];
    const refused = requested.find((mode) => mode === "lifecycle" || mode === "state_update");
    if (refused !== undefined) {
      throw httpError("REQUEST_INVALID", `thread stream_mode "${refused}" is not supported by devmind serve: run_modes (each run's values) or run stream modes (${SERVED_MODES})`, { field: "stream_mode" });
    }
    const runModes = requested.filter((mode) => mode !== "run_modes");
    const modes = runModes.length === 0 ? new Set(["values"]) : modesOf(runModes);
    if (requested.includes("run_modes")) modes.add("values");
    const from = parseThreadCursor(c.req.header("last-event-id"));
    return sseResponse(c, (signal) => threadStream(runtime, threadId, { modes, from, signal }), { shutdown: deps.shutdown, heartbeatMs: deps.heartbeatMs });
  });
  app.get("/threads/:tid/runs/:rid/stream", join);
  app.get("/runs/:rid/stream", join);
  return app;
}
