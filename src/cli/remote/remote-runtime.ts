import type { StateSnapshot } from "@langchain/langgraph";
import type { RunRecord } from "../../runtime/queue/run-record.js";
import type { GraphsApi, RunsApi, Runtime, StoredRunEvent } from "../../runtime/runtime.js";
import type { ActionRequest } from "../../vocabulary/hitl.js";
import type { ServerClient } from "./server-client.js";

/** What `GET /graphs` tells of each graph the server runs (how a command shows its runs). */
export interface GraphFlags {
  graph_id: string;
  reports_steps: boolean;
  reports_counters: boolean;
  reports_answer: boolean;
}

/** The part of the runtime the read and decide commands call (runs, show, events, approve, reject, resume, cancel, run --detach). */
type CommandRuntime = {
  runs: Pick<RunsApi, "get" | "list" | "events" | "cancel" | "waitStopped" | "wait" | "pendingApprovals" | "decisions" | "decide" | "resume" | "create" | "execute" | "takeOver" | "lastEventSeq" | "live" | "subscribe">;
  threads: Pick<Runtime["threads"], "state">;
  graphs: Pick<GraphsApi, "ids" | "has" | "reportsSteps" | "reportsCounters" | "reportsAnswer" | "ready" | "description">;
  redact: Runtime["redact"];
  close: Runtime["close"];
};

/**
 * The runtime of the read and decide commands over the HTTP API of the local server that holds
 * the embedded database: the commands run unchanged on it, so their output and exit codes are
 * the direct path's. Runs are executed by the server's workers, never here: `execute` (what
 * `approve`, `reject` and `resume` call to continue a run "in this process") follows the run on
 * the server until it stops, and the timeline gets its stored events as they are stored
 * (`subscribe`). Only the methods of `CommandRuntime` exist; the commands that reach this runtime
 * call no other (the cast below is where that is relied on). Decisions and values are recorded
 * with the command's principal (`--by`, default `cli:<login>`), as on the direct path: the CLI is
 * the server's local owner (server-client.ts). A server that wrote no owner key in the lock file
 * records the principal of the CLI's API key instead.
 */
export function remoteRuntime(client: ServerClient, graphs: readonly GraphFlags[]): Runtime {
  const flags = new Map(graphs.map((graph) => [graph.graph_id, graph]));
  const full = (runId: string): Promise<RunRecord> => client.json<RunRecord>("GET", `/runs/${encodeURIComponent(runId)}`);
  // the stream of each run a command subscribed to, so `execute` returns only once it has delivered the run's last event
  const following = new Map<string, Promise<void>>();
  const followToEnd = async (runId: string, onEvent: (event: StoredRunEvent) => void, signal?: AbortSignal): Promise<void> => {
    for await (const event of client.events<StoredRunEvent>(runId, { follow: true, ...(signal === undefined ? {} : { signal }) })) onEvent(event);
  };
  const stopped = async (runId: string, signal?: AbortSignal): Promise<RunRecord> => {
    await (following.get(runId) ?? followToEnd(runId, () => undefined, signal));
    return full(runId);
  };
  const runtime: CommandRuntime = {
    runs: {
      get: full,
      list: (options = {}) => client.json<RunRecord[]>("GET", `/runs?limit=${options.limit ?? 50}${options.status === undefined ? "" : `&status=${options.status}`}`),
      events: (runId, options = {}) => client.events<StoredRunEvent>(runId, options),
      cancel: async (runId) => {
        await client.json("POST", `/runs/${encodeURIComponent(runId)}/cancel`);
        return full(runId);
      },
      waitStopped: (runId, options) => stopped(runId, AbortSignal.timeout(options.timeoutMs)).catch(() => full(runId)),
      wait: (runId, options = {}) => stopped(runId, options.signal ?? (options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs))).catch(() => full(runId)),
      pendingApprovals: async (runId) => {
        const { approvals } = await client.json<{ approvals: { run_id: string; requests: ActionRequest[] }[] }>("GET", "/approvals?status=pending&limit=500");
        return (approvals.find((item) => item.run_id === runId)?.requests ?? []).map(({ name, args, description, tool_call_id, risk }) => ({ name, args, description, tool_call_id, risk }));
      },
      // the server's approvals list leaves out the calls already decided
      decisions: async () => [],
      decide: async (runId, body, audit) => {
        const { decisions } = body as { decisions: unknown[] };
        const run = await client.json<{ run_id: string }>("POST", `/runs/${encodeURIComponent(runId)}/decisions`, { decisions, ...(audit.reason === undefined ? {} : { reason: audit.reason }) }, { by: audit.principal });
        return full(run.run_id);
      },
      resume: async (runId, body, audit) => {
        const waiting = await full(runId);
        const resume = "value" in body ? body.value : "values" in body ? body.values : body.command.resume;
        const run = await client.json<{ run_id: string }>("POST", `/threads/${encodeURIComponent(waiting.thread_id)}/runs`, { assistant_id: waiting.assistant_id, command: { resume } }, { by: audit.principal, ...(audit.reason === undefined ? {} : { reason: audit.reason }) });
        return full(run.run_id);
      },
      create: async (options) => {
        const threadId = options.threadId ?? (await client.json<{ thread_id: string }>("POST", "/threads", {})).thread_id;
        const body = { assistant_id: options.assistantId, input: options.input, ...(options.config === undefined ? {} : { config: options.config }), ...(options.multitask === undefined ? {} : { multitask_strategy: options.multitask }), ...(options.limits === undefined || Object.keys(options.limits).length === 0 ? {} : { limits: options.limits }) };
        const run = await client.json<{ run_id: string }>("POST", `/threads/${encodeURIComponent(threadId)}/runs`, body);
        return full(run.run_id);
      },
      // the server's workers execute it: followed here until it stops
      execute: (runId) => stopped(runId),
      // nothing to take over: the server's workers continue a queued or orphaned run; `execute` follows it
      takeOver: (runId) => full(runId),
      lastEventSeq: async (runId) => {
        let last = 0;
        for await (const event of client.events<StoredRunEvent>(runId)) last = Math.max(last, event.seq);
        return last;
      },
      live: async (runId, listener) => {
        const stop = new AbortController();
        void followToEnd(runId, () => listener({ type: "events.stored", run_id: runId }), stop.signal).catch(() => undefined);
        return async () => stop.abort();
      },
      subscribe: (runId, listener) => {
        const stop = new AbortController();
        const done = followToEnd(runId, (event) => listener(event as never), stop.signal).catch(() => undefined);
        following.set(runId, done);
        return () => {
          following.delete(runId);
          stop.abort();
        };
      },
    },
    threads: {
      state: async (threadId) => client.json<StateSnapshot>("GET", `/threads/${encodeURIComponent(threadId)}/state`),
    },
    graphs: {
      ids: () => [...flags.keys()],
      has: (id) => flags.has(id),
      reportsSteps: (id) => flags.get(id)?.reports_steps === true,
      reportsCounters: (id) => flags.get(id)?.reports_counters === true,
      reportsAnswer: (id) => flags.get(id)?.reports_answer === true,
      description: () => null,
      // the server loaded its graphs ready (a worker refuses to start otherwise)
      ready: async () => undefined,
    },
    redact: (value) => value,
    close: async () => undefined,
  };
  return runtime as unknown as Runtime;
}
