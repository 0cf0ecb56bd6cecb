import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import { configSecrets, loadConfig, type DevmindConfig } from "../config.js";
import { RUNS_CHANNEL, RUNTIME_DEFAULTS } from "../constants.js";
import { notify } from "../db/channels.js";
import type { Database } from "../db/types.js";
import { RunConflictError } from "../errors.js";
import { silentLogger, type Logger } from "../logger.js";
import { createRedactor, type Redactor } from "../secret-redaction.js";
import type { ActionRequest } from "../graph/approvals.js";
import { buildAgentGraph, type AgentGraph } from "../graph/build-agent-graph.js";
import { limitsFromConfig } from "../graph/limits.js";
import { createChatModel } from "../model/create-chat-model.js";
import { builtinTools } from "../tools/builtin/index.js";
import type { Tool } from "../tools/define-tool.js";
import { ToolRegistry } from "../tools/registry.js";
import { ensureWorkspace } from "../tools/workspace.js";
import { AttachmentStore } from "./attachment-store.js";
import { planDecisions } from "./decide.js";
import { DecisionStore } from "./decision-store.js";
import { EventStore, type RunEvent } from "./event-store.js";
import type { ExecutorDeps } from "./executor.js";
import { DatabaseHealth, executeWithRecovery, type DatabaseHealthReport } from "./fault-recovery.js";
import { LiveDeltaPublisher } from "./live-deltas.js";
import type { ClaimedRun, RunInput, RunLimits, RunRecord, RunStatus } from "./run-record.js";
import { RunStore } from "./run-store.js";
import { retryDatabaseFaults } from "./backoff.js";
import { createThreadsApi, type ThreadsApi } from "./threads-api.js";
import { ToolLedger } from "./tool-ledger.js";
import { checkHealth } from "./health.js";
import { createWorker, type Worker, type WorkerOptions } from "./worker.js";

/** Options of `createRuntime` (CONTRACT section 9). */
export interface RuntimeOptions {
  db: Database;
  /** The chat model; default: `createChatModel(config)` when a run first needs it. */
  model?: BaseChatModel;
  /** Tools; default: `builtinTools` on the configured workspace, with attachments in `db` and `config.image`. */
  tools?: readonly Tool[];
  /** Default: the built-in defaults (the runtime never reads the environment itself). */
  config?: DevmindConfig;
  /** Structured log of runs and workers (claimed, finished, recovered, lease lost, database away). Default: silent. */
  logger?: Logger;
  /** Hides secrets in stored events and run errors. Default: `createRedactor(configSecrets(config))`. */
  redactor?: Redactor;
}

/** A live event of a run, as `subscribe` delivers it (model.delta included). */
export type LiveEvent = { type: string; [field: string]: unknown };

/** `runtime.runs` (CONTRACT section 9). */
export interface RunsApi {
  /**
   * Queues a run. With `executeHere: true` the run is created already claimed by this runtime
   * (status running, in the creating transaction), so a worker of another process sharing the
   * database cannot take it: call `execute(run_id)` next to run it here. A run queued behind
   * another run of its thread (multitask "enqueue") stays pending and unreserved.
   */
  create(options: { threadId?: string; input: RunInput; limits?: RunLimits; multitask?: "reject" | "enqueue"; executeHere?: boolean }): Promise<RunRecord>;
  execute(runId: string): Promise<RunRecord>;
  decide(runId: string, body: unknown, audit: { principal: string; reason?: string }): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord>;
  list(options?: { status?: RunStatus; threadId?: string; limit?: number; before?: string }): Promise<RunRecord[]>;
  cancel(runId: string): Promise<RunRecord>;
  wait(runId: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<RunRecord>;
  events(runId: string, options?: { after?: number; follow?: boolean; signal?: AbortSignal }): AsyncIterable<RunEvent>;
  /** Live events of runs executing in this process, `model.delta` included; returns an unsubscribe. */
  subscribe(runId: string, listener: (event: LiveEvent) => void): () => void;
  /** The approval requests a waiting run has open (with the decisions made so far). */
  pendingApprovals(runId: string): Promise<ActionRequest[]>;
}

/** The runtime: runs on one database, executed in this process or by workers anywhere. */
export interface Runtime {
  runs: RunsApi;
  /** Threads (the HTTP API's /threads): records, state and history from the checkpoints. */
  threads: ThreadsApi;
  worker(options?: WorkerOptions): Worker;
  /**
   * The database as this process sees it, for `/health`: `down` when it does not answer within
   * `timeoutMs`, `degraded` when it answers slowly (over `slowMs`), refuses a small real write,
   * or a worker of this process is waiting out a fault; `ok` otherwise.
   */
  health(options?: { timeoutMs?: number; slowMs?: number }): Promise<RuntimeHealth>;
  close(): Promise<void>;
}

/** What `runtime.health()` reports. */
export interface RuntimeHealth {
  status: "ok" | "degraded" | "down";
  database: { reachable: boolean; writable: boolean | null; latency_ms: number | null; error: { code: string; message: string } | null };
  workers: DatabaseHealthReport[];
}

const WAITING: readonly RunStatus[] = ["interrupted", "success", "error", "timeout", "cancelled"];
const TERMINAL: readonly RunStatus[] = ["success", "error", "timeout", "cancelled"];

/**
 * Creates the runtime over a migrated database: the run queue, approvals with audit, the tool
 * ledger, events, and workers. Runs execute the devmind agent graph on the database's
 * checkpointer, fenced by their lease.
 *
 * @example
 *   const runtime = createRuntime({ db, config: loadConfig() });
 *   const run = await runtime.runs.create({ input: { messages: ["write hello.txt"] } });
 *   const done = await runtime.runs.execute(run.run_id); // "interrupted": approve, then execute again
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const config = options.config ?? loadConfig({});
  const db = options.db;
  const logger = options.logger ?? silentLogger;
  const redactor = options.redactor ?? createRedactor(configSecrets(config));
  const runs = new RunStore(db, redactor);
  const events = new EventStore(db, redactor);
  const decisions = new DecisionStore(db);
  const ledger = new ToolLedger(db);
  const listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  // model.delta also goes to other processes (a server streaming a run a worker executes)
  const deltas = new LiveDeltaPublisher(db);
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // runs created with executeHere: claimed at creation, waiting for execute() in this process
  const reserved = new Map<string, ClaimedRun>();
  let built: Promise<{ graph: AgentGraph; registry: ToolRegistry }> | undefined;

  const build = (): Promise<{ graph: AgentGraph; registry: ToolRegistry }> => {
    built ??= (async () => {
      const workspace = await ensureWorkspace(config.workspace);
      const limits = limitsFromConfig(config);
      const tools = options.tools ?? builtinTools({ workspace, attachments: new AttachmentStore(db), image: config.image });
      const registry = new ToolRegistry([...tools], {
        workspace,
        defaultTimeoutMs: limits.toolTimeoutMs,
        maxOutputChars: limits.maxToolOutputChars,
        requireApproval: config.requireApproval,
        autoApprove: config.autoApprove,
      });
      const model = options.model ?? createChatModel(config);
      const graph = buildAgentGraph({ model, tools: registry, checkpointer: new PostgresCheckpointSaver(db), limits });
      return { graph, registry };
    })();
    built.catch(() => (built = undefined));
    return built;
  };

  const live = (runId: string, raw: LiveEvent): void => {
    // live events reach terminals and other processes before (or instead of) the store: redact them the same way
    const event: LiveEvent =
      raw.type === "model.delta" ? { ...raw, text: redactor.text(String(raw["text"] ?? "")) } : (JSON.parse(redactor.json(raw)) as LiveEvent);
    if (event.type === "model.delta") deltas.publish(runId, Number(event["round"] ?? 0), String(event["text"]), String(event["message_id"] ?? ""), Number(event["offset"] ?? 0));
    for (const listener of listeners.get(runId) ?? []) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own
      }
    }
  };

  const executorDeps = (drainSignal?: AbortSignal): ExecutorDeps => ({
    runs,
    events,
    decisions,
    ledger,
    graph: async () => (await build()).graph,
    leaseMs: config.worker.leaseMs,
    cancelPollMs: RUNTIME_DEFAULTS.cancelPollMs,
    recursionLimit: RUNTIME_DEFAULTS.recursionLimit,
    live,
    ...(drainSignal === undefined ? {} : { drainSignal }),
  });

  const pendingApprovals = async (runId: string): Promise<ActionRequest[]> => {
    const run = await runs.get(runId);
    if (run.status !== "interrupted" && run.status !== "pending") return [];
    const { graph } = await build();
    const state = await graph.getState({ configurable: { thread_id: run.thread_id } });
    if ((state.values as { run_id?: unknown }).run_id !== runId) return [];
    return state.tasks.flatMap((task) => task.interrupts.flatMap((item) => (item.value as { actionRequests?: ActionRequest[] } | undefined)?.actionRequests ?? []));
  };

  const threads = createThreadsApi(db, async () => (await build()).graph);
  // the database as runs executed in this process (`runs.execute`) saw it
  const executionHealth = new DatabaseHealth(logger.child({ component: "runtime" }));

  const runsApi: RunsApi = {
    async create(request) {
      const { executeHere, ...create } = request;
      const { run, claimed } =
        executeHere === true ? await runs.createClaimed({ ...create, claimFor: { owner, leaseMs: config.worker.leaseMs } }) : { run: await runs.create(create), claimed: null };
      if (claimed !== null) reserved.set(run.run_id, claimed);
      await threads.touch(run.thread_id);
      await events.append(run.run_id, [{ type: "run.created", data: {} }]);
      if (claimed === null) await notify(db, RUNS_CHANNEL, run.run_id);
      return run;
    },
    async execute(runId) {
      const key = runId.toLowerCase();
      const reservation = reserved.get(key);
      reserved.delete(key);
      const claimed = reservation ?? (await runs.claim(runId, { owner, leaseMs: config.worker.leaseMs, from: ["pending", "interrupted"] }));
      const after = await executeWithRecovery(executorDeps(), claimed, owner, {
        trigger: "manual",
        health: executionHealth,
        leaseMs: config.worker.leaseMs,
        maxWaitMs: RUNTIME_DEFAULTS.executeFaultWaitMs,
      });
      // null: the lease moved while the database was away; whoever holds it now continues the run
      return after ?? runs.get(runId);
    },
    async decide(runId, body, audit) {
      const run = await runs.get(runId);
      if (run.status !== "interrupted") throw new RunConflictError(`run ${runId} is not waiting for approval (status ${run.status})`, { status: run.status });
      const requests = await pendingApprovals(runId);
      if (requests.length === 0) throw new RunConflictError(`run ${runId} has no approval waiting`);
      const { registry } = await build();
      const already = await decisions.list(runId);
      const planned = planDecisions(body, requests, already, registry, audit);
      const stored = await decisions.record(runId, planned);
      await events.append(
        runId,
        stored.map((d) => ({ type: "approval.decided", data: { tool_call_id: d.tool_call_id, decision: d.decision, by: d.principal, reason: d.reason } })),
      );
      const decidedIds = new Set([...already, ...stored].map((d) => d.tool_call_id));
      if (requests.every((r) => decidedIds.has(r.tool_call_id)) && (await runs.readyToResume(runId))) await notify(db, RUNS_CHANNEL, runId);
      return runs.get(runId);
    },
    get: (runId) => runs.get(runId),
    list: (filter = {}) => runs.list(filter),
    async cancel(runId) {
      const run = await runs.requestCancel(runId);
      await events.append(runId, [{ type: "run.cancel_requested", data: {} }]);
      if (run.status === "cancelled") await events.append(runId, [{ type: "run.cancelled", data: {} }]);
      return run;
    },
    async wait(runId, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? config.limits.runTimeoutMs);
      for (;;) {
        // a database away for a moment does not end the wait (bounded by its deadline)
        const run = await retryDatabaseFaults(() => runs.get(runId), { maxMs: Math.max(0, deadline - Date.now()), signal: waitOptions.signal });
        if (WAITING.includes(run.status) || Date.now() >= deadline || waitOptions.signal?.aborted === true) return run;
        await new Promise((resolve) => setTimeout(resolve, Math.min(RUNTIME_DEFAULTS.waitPollMs, Math.max(1, deadline - Date.now()))));
      }
    },
    events(runId, eventOptions = {}) {
      if (eventOptions.follow !== true) {
        return (async function* () {
          let after = eventOptions.after ?? 0;
          for (;;) {
            const page = await events.read(runId, { after });
            if (page.length === 0) return;
            yield* page;
            after = page[page.length - 1]?.seq ?? after;
          }
        })();
      }
      return events.follow(runId, {
        ...(eventOptions.after === undefined ? {} : { after: eventOptions.after }),
        ...(eventOptions.signal === undefined ? {} : { signal: eventOptions.signal }),
        isDone: async () => TERMINAL.includes((await runs.get(runId)).status),
      });
    },
    subscribe(runId, listener) {
      const set = listeners.get(runId) ?? new Set();
      set.add(listener);
      listeners.set(runId, set);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(runId);
      };
    },
    pendingApprovals,
  };

  const workers = new Set<Worker>();
  return {
    runs: runsApi,
    threads,
    worker(workerOptions = {}) {
      const worker = createWorker({ db, runs, maxAttempts: config.worker.maxAttempts, leaseMs: config.worker.leaseMs, concurrency: workerOptions.concurrency ?? config.worker.concurrency, executorDeps, owner: `${owner}:worker`, logger: logger.child({ component: "worker" }) });
      workers.add(worker);
      return worker;
    },
    health: (healthOptions = {}) => checkHealth({ runs, workers: [...workers], execution: executionHealth, prober: `${owner}:health`, ...healthOptions }),
    async close() {
      await Promise.all([...workers].map((worker) => worker.stop()));
      workers.clear();
      // reserved runs never executed go back to the queue instead of waiting for their lease to lapse
      const unexecuted = [...reserved.values()];
      reserved.clear();
      await Promise.all(unexecuted.map(({ run, epoch }) => runs.release(run.run_id, epoch).catch(() => false)));
    },
  };
}
