import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import { configSecrets, loadConfig, type DevmindConfig } from "../config.js";
import { RUNTIME_DEFAULTS } from "../constants.js";
import type { Database } from "../db/types.js";
import { silentLogger, type Logger } from "../logger.js";
import { createRedactor, type Redactor } from "../secret-redaction.js";
import { LiveDeltaRedaction } from "./events/live-delta-redaction.js";
import { PostgresStore } from "../store/postgres-store.js";
import type { ActionRequest } from "../vocabulary/hitl.js";
import type { Tool } from "../tools/define-tool.js";
import { AttachmentStore, type StoredAttachment } from "./attachments/attachment-store.js";
import { DecisionStore, type DecisionRecord } from "./interrupts/decision-store.js";
import { EventStore, type StoredRunEvent } from "./events/event-store.js";
import type { RunEventData } from "./events/run-events.js";
import type { ExecutorDeps } from "./execution/executor.js";
import type { RunObserver } from "./execution/run-observer.js";
export type { AttemptObserver, ObservedCall, RunObserver } from "./execution/run-observer.js";
import { DatabaseHealth, type DatabaseHealthReport } from "./execution/fault-recovery.js";
import { LiveDeltaPublisher } from "./events/live-deltas.js";
import { LiveMessagePublisher } from "./events/live-messages.js";
import type { LiveSignal, LiveSignalOptions } from "./events/live-follow.js";
import type { OrphanDeps } from "./queue/orphan-runs.js";
import type { ClaimedRun, RunInput, RunLimits, RunRecord, RunStatus } from "./queue/run-record.js";
import { RunStore, type RequeueResult } from "./queue/run-store.js";
import type { AccessFilter } from "../vocabulary/access-filter.js";
import { createThreadsApi, type ThreadsApi } from "./threads/threads-api.js";
import { ToolLedger } from "./ledger/tool-ledger.js";
import { createCronsApi, type CronsApi } from "./crons/crons-api.js";
import { startCronScheduler } from "./crons/cron-scheduler.js";
import { CronStore } from "./crons/cron-store.js";
import { checkHealth } from "./execution/health.js";
import { observeWriteFaults, WriteFaults } from "./execution/write-faults.js";
import { StorageNotices } from "./execution/storage-notices.js";
import { RunCompletions, startRunCompletions, type RunCompletionRecord } from "./completions/run-completions.js";
import { checkWebhookUrl, webhookPolicy } from "../webhooks/webhook-targets.js";
import { storeOptionsFromConfig } from "./runtime-store.js";
import type { Embeddings } from "@langchain/core/embeddings";
import { createWorker, type Worker, type WorkerOptions } from "./queue/worker.js";
import { GraphRegistry } from "../graphs/graph-registry.js";
import { replacedWords, type GraphEntry } from "../graphs/graph-kinds.js";
import { GRAPHS_DEFAULTS } from "../constants.js";
import { builtinAgent } from "../graphs/builtin-agent.js";
import { plainJson } from "./events/plain-json.js";
import type { ResumeBody } from "./interrupts/resume-plan.js";
import { ResumeStore, type ResumeRecord } from "./interrupts/resume-store.js";
import type { RunGraphConfig } from "./queue/run-record.js";
import type { InterruptedRun } from "./queue/run-store.js";
import { drawGraph, type GraphDrawing, type GraphSchemas } from "../graphs/graph-introspection.js";
import { GraphSchemaReader } from "../graphs/graph-schema-reader.js";
import type { StateReadableGraph } from "./threads/thread-state.js";
import { AssistantStore, type AssistantsApi } from "./assistants/assistant-store.js";
export { argsDigest } from "./interrupts/digest.js";
import { Purger, type TruncateFlags } from "./threads/purge.js";
import { RunCancelWatch } from "./queue/run-cancel-watch.js";
import { RunEndWatcher, type EndedRun } from "./queue/run-end-wait.js";
export type { EndedRun } from "./queue/run-end-wait.js";
import { createRunsApi, type NextRunOptions } from "./runs-api.js";
export type { NextRunOptions } from "./runs-api.js";
export { FINAL_EVENT_TYPES, FINAL_STATUSES, isFinalStatus } from "./queue/status.js";

// types of what the Runtime API returns, so its users (the CLI, the server) import them from here
export type { StoredAttachment } from "./attachments/attachment-store.js";
export type { DecisionRecord } from "./interrupts/decision-store.js";
export type { ForeignRunEvent, RunEvent, RunEventEnvelope, StoredRunEvent } from "./events/event-store.js";
export { isRunEvent } from "./events/event-store.js";
export { isKnownRunEvent } from "./events/run-events.js";
export type { LiveMessageChunk, LiveSignal, LiveSignalOptions, ModelDelta } from "./events/live-follow.js";
export type { RequeueResult } from "./queue/run-store.js";
export type { ThreadRecord } from "./threads/thread-store.js";
export type { StateOptions } from "./threads/thread-state.js";
export type { Worker, WorkerOptions } from "./queue/worker.js";
export type { InterruptedRun } from "./queue/run-store.js";
/**
 * Who answers a waiting run (decisions or a resume value), why, and the decision key kept across
 * the retries of this one answer (issue 37; e.g. the HTTP `Idempotency-Key`).
 */
export interface AnswerAudit {
  principal: string;
  reason?: string;
  key?: string;
}

/** Whether an interrupt value has LangChain's HITL shape (decided with `runs.decide`). */
export { isHitlRequest } from "./interrupts/hitl-decisions.js";
/** A value as the JSON LangGraph clients read (messages as dicts); the HTTP API and webhooks send it. */
export { plainJson } from "./events/plain-json.js";
export { interruptsOf } from "./execution/graph-state.js";
export type { AssistantFields, AssistantRecord, AssistantSearchOptions, AssistantsApi, AssistantVersion } from "./assistants/assistant-store.js";
export type { GraphDrawing, GraphSchemas } from "../graphs/graph-introspection.js";
export type { CronCreateOptions, CronRecord, CronSearchOptions, CronsApi, CronUpdateOptions } from "./crons/crons-api.js";
export type { RunCompletionRecord } from "./completions/run-completions.js";
export type { TruncateFlags } from "./threads/purge.js";

/** Options of `createRuntime` (CONTRACT section 9). */
export interface RuntimeOptions {
  db: Database;
  /** The chat model; default: `createChatModel(config)` when a run first needs it. */
  model?: BaseChatModel;
  /**
   * Without `model`: what the built-in agent's graph is built with when the configured model
   * cannot be built (given the error), so reading its threads needs no model; runs of it are not
   * `ready` (`graphs.ready`). Default: none (the build fails with the error).
   */
  modelStandIn?: (error: unknown) => Promise<BaseChatModel>;
  /** Tools; default: `builtinTools` on the configured workspace, with attachments in `db` and `config.image`. */
  tools?: readonly Tool[];
  /** Default: the built-in defaults (the runtime never reads the environment itself). */
  config?: DevmindConfig;
  /** Structured log of runs and workers (claimed, finished, recovered, lease lost, database away). Default: silent. */
  logger?: Logger;
  /** Hides secrets in stored events and run errors. Default: `createRedactor(configSecrets(config))`. */
  redactor?: Redactor;
  /**
   * The graphs this runtime runs, by id (CONTRACT section 10): compiled graphs, StateGraphs,
   * promises of either, or factories `(config) => graph`. The built-in agent is `agent` unless
   * an entry replaces it or `agent: false` omits it. Workers of this runtime claim only runs of
   * these graphs. Default: the agent alone.
   */
  graphs?: Readonly<Record<string, GraphEntry | false>>;
  /**
   * The embeddings of the store's semantic index when `config.store.index` is set. Default: an
   * OpenAI-compatible embeddings model named by `config.store.index.embed`, with the OpenAI key
   * and base URL of the config.
   */
  embeddings?: Embeddings;
  /** The W3C traceparent of the request now creating a run (the server's request context), stored with the run. Default: none. */
  traceParent?: () => string | undefined;
  /** Watches every attempt executed here and the leases workers take back (metrics, traces; `src/operations`). Default: none. */
  observer?: RunObserver;
}

/**
 * A live event of a run, as `subscribe` delivers it: any member of the union (CONTRACT section 6
 * and 10), `model.delta` and `graph.stopped` included; no envelope. Produced in this process, so
 * never of a foreign type.
 */
export type LiveEvent = RunEventData;

/** `runtime.runs` (CONTRACT section 9). */
export interface RunsApi {
  /**
   * Queues a run. With `executeHere: true` the run is created already claimed by this runtime
   * (status running, in the creating transaction), so a worker of another process sharing the
   * database cannot take it: call `execute(run_id)` next to run it here. A run queued behind
   * another run of its thread (multitask "enqueue") stays pending and unreserved.
   */
  create(options: {
    threadId?: string;
    /**
     * The assistant to run: its id, or a loaded graph's id (that graph's default assistant;
     * default `agent`). GRAPH_NOT_FOUND for a graph id this runtime has not loaded,
     * ASSISTANT_NOT_FOUND for an unknown assistant. The assistant's config and context are the
     * run's defaults: `config` is merged over them (`configurable` key by key), an object
     * `context` likewise.
     */
    assistantId?: string;
    /**
     * `{ messages }` for the agent, or null: no input, the run continues the thread from its
     * checkpoint (after a breakpoint; from `checkpointId`: LangGraph's Regenerate); any JSON value
     * for another graph.
     */
    input: RunInput | unknown;
    /** The graph's config: `configurable`, `recursion_limit`, `tags` (not for the agent: use `limits`). */
    config?: RunGraphConfig;
    /** The graph's context (`runtime.context` in nodes); not for the agent. */
    context?: unknown;
    limits?: RunLimits;
    multitask?: "reject" | "enqueue";
    executeHere?: boolean;
    /** The run's own metadata, stored and filterable (`list({ metadata })`). */
    metadata?: Record<string, unknown>;
    /** Seconds before a worker may claim the run (LangGraph's `after_seconds`). */
    afterSeconds?: number;
    /** Static breakpoints (node names or `*`): the run ends before / after them, and a later run with input null continues. */
    interruptBefore?: string[];
    interruptAfter?: string[];
    /** Start from this checkpoint of the thread (time travel: the thread forks there; the checkpoint's branch is left as it was). */
    checkpointId?: string;
    /** The LangGraph stream modes the run is created with (`stream_mode`): a stream joined without modes sends these. */
    streamMode?: string[];
    /**
     * Called with the run (JSON, as the LangGraph API shows it, with the thread's `values`) once
     * it ends: success, error, timeout or cancelled. Delivered by the workers after the final
     * status is stored, retried with backoff (DEVMIND_WEBHOOK_*), never blocking the run. The
     * target must pass DEVMIND_WEBHOOK_ALLOW (default loopback only): RUN_INPUT_INVALID otherwise.
     */
    webhook?: string | null;
    /**
     * Delete the run's thread once the run ended (success, error, timeout, cancelled) and its
     * webhook was delivered (LangGraph's `on_completion: "delete"` of a stateless run), by the workers.
     */
    deleteThread?: boolean;
    /**
     * With `deleteThread`: the workers leave the thread alone this long (or until
     * `releaseCompletion`), so a caller still reading it (`runs.wait`, a stream) finishes first.
     */
    completionHoldMs?: number;
    /**
     * A LangGraph `Command`'s `update` / `goto` the run starts with (no interrupt to answer:
     * resumes go through `resume` / `decide`), audited as a resume given by `by`.
     */
    command?: { update?: unknown; goto?: unknown; by: string };
    /**
     * The thread (`threadId`) must exist already, and `access` (the caller's AccessFilter) let
     * the caller see it: THREAD_NOT_FOUND otherwise, and nothing is created. Checked in the
     * creating transaction (the server's run on a named thread), not by a read before it.
     */
    threadMustExist?: { access?: AccessFilter | undefined };
  }): Promise<RunRecord>;
  execute(runId: string): Promise<RunRecord>;
  /**
   * Records decisions on the approval a waiting run stopped at (CONTRACT section 5), audited.
   * Once every request has a decision, the run that resumes its thread is created (CONTRACT
   * section 3: a resume is a new run, `resumes_run` naming this one) in the same transaction and
   * returned — queued for workers, or claimed for `execute` here with `next.executeHere`; until
   * then the waiting run is returned. `next`: what the new run starts with (default: the waiting
   * run's config, context, limits, metadata and stream modes).
   * `audit.key`: the decision key (issue 37), the same on every retry of this one answer: a repeat
   * whose first try committed (its answer lost in a failover) returns what that try did; the same
   * key with another request is RUN_CONFLICT. Without one, a key is made per call, and the call
   * itself retries a lost connection with it (for `RUNTIME_DEFAULTS.answerFaultWaitMs` at most).
   */
  decide(runId: string, body: unknown, audit: AnswerAudit, next?: NextRunOptions): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord>;
  /** Runs newest first; `waiting: true` only the run a thread waits on (ended at an interrupt, not resumed yet). */
  list(options?: { status?: RunStatus; threadId?: string; limit?: number; before?: string; metadata?: Record<string, unknown>; waiting?: boolean }): Promise<RunRecord[]>;
  cancel(runId: string): Promise<RunRecord>;
  /**
   * Deletes a run that is not running and that its thread does not wait on (cancel or resume it first: RunConflictError),
   * with its events, decisions and ledger rows. Its checkpoints stay in the thread's history.
   */
  delete(runId: string): Promise<void>;
  /**
   * Rolls a stopped run back (LangGraph's rollback): its checkpoints are removed, so the thread's
   * state is what it was before the run, and the run is deleted. RunConflictError unless the run
   * is terminal (cancel it and wait first). The run's events, approval decisions and tool ledger
   * go with it; what its tools did outside the thread is not undone.
   */
  rollback(runId: string): Promise<void>;
  wait(runId: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<RunRecord>;
  /**
   * `wait`, with the graph's state at the run's end when this process executed it (read then by
   * its executor: no read here). `known`: the run as the caller created or read it after
   * `listenEnds()` resolved true — the wait starts from it instead of reading the run.
   */
  waitEnd(runId: string, options?: { timeoutMs?: number; signal?: AbortSignal; known?: RunRecord }): Promise<EndedRun>;
  /** Starts this process's one LISTEN for run ends (shared by every wait); true once it is in effect. */
  listenEnds(): Promise<boolean>;
  /**
   * The run's stored events in seq order (with `follow`, then new ones until the run is terminal).
   * Known types are `RunEvent`s; a type a newer version wrote is a `ForeignRunEvent` (tell them
   * apart with `isRunEvent` before reading fields).
   */
  events(runId: string, options?: { after?: number; follow?: boolean; signal?: AbortSignal }): AsyncIterable<StoredRunEvent>;
  /** Live events of runs executing in this process, `model.delta` included; returns an unsubscribe. */
  subscribe(runId: string, listener: (event: LiveEvent) => void): () => void;
  /**
   * Live events of every run executing in this process (`runs.execute` and this runtime's
   * workers), `model.delta` included, with the run's id; returns an unsubscribe. For logs of what
   * a process does (`devmind worker`); one run's events are `subscribe`'s.
   */
  subscribeAll(listener: (runId: string, event: LiveEvent) => void): () => void;
  /**
   * Live signals of run `runId` from every process sharing the database (PGlite: this process):
   * its `model.delta` token deltas and `events.stored` when its events were stored (read them
   * with `events(runId, { after })`), and with `messages: true` the `message.chunk`s chat models
   * stream in its graph (LangGraph's `messages` stream mode). Resolves once listening; await the
   * returned function to stop. Best effort (a notification connection that broke missed what was
   * sent meanwhile): keep a bounded poll as fallback. `options` picks the signals.
   *
   * @example
   *   const stop = await runtime.runs.live(runId, (signal) => { if (signal.type === "model.delta") write(signal.text); });
   */
  live(runId: string, listener: (signal: LiveSignal) => void, options?: LiveSignalOptions): Promise<() => Promise<void>>;
  /** Every decision recorded on the run (CONTRACT section 5: who, when, why, args digest), oldest first. */
  decisions(runId: string): Promise<DecisionRecord[]>;
  /**
   * Makes a run left `running` by a process that died resumable here, then returns it (`pending`,
   * or ended by the reaper: cancelled when a cancel was requested, error after max_attempts).
   * Embedded database: at once (its lock proves nobody else runs it). PostgreSQL: after its lease
   * lapses, waiting at most TAKEOVER_DEFAULTS.maxLeaseWaitMs (`onWait` is told the lease's expiry
   * when it waits); a lease that keeps being renewed is a live holder: RunConflictError (details
   * `owner`, `leaseExpiresAt`). A run in any other status is returned unchanged.
   */
  takeOver(runId: string, options?: { onWait?: (leaseExpiresAt: string) => void }): Promise<RunRecord>;
  /**
   * Embedded database only (a no-op on PostgreSQL, where their holders may be alive): hands every
   * run left `running` by a dead process to the reaper at once — back to pending, or ended as
   * `takeOver` says. Returns the run ids per outcome.
   */
  recoverOrphans(): Promise<RequeueResult>;
  /**
   * After `cancel` of a running run: waits at most `timeoutMs` until it stops — its worker stops
   * it at the next check; a dead worker's run is ended (cancelled) as the reaper would once its
   * lease lapsed, at once on the embedded database. Returns the run as it then is (`running` when
   * the time ran out).
   */
  waitStopped(runId: string, options: { timeoutMs: number }): Promise<RunRecord>;
  /** The approval requests a waiting run has open (read from the run as it paused; no graph is built). */
  pendingApprovals(runId: string): Promise<ActionRequest[]>;
  /** The seq of the run's last stored event (0 when none): where a follower starts so it shows only what comes next. */
  lastEventSeq(runId: string): Promise<number>;
  /**
   * Resumes the thread of a waiting run of any graph with a value (`{ value }` when one interrupt
   * waits, `{ values: { interruptId: value } }`, or `{ command: { resume, update, goto } }`),
   * audited like a decision: who, when, why and the digest of the value, stored on the waiting
   * run. Once every waiting interrupt has a value, the run that resumes the thread is created and
   * returned (as `decide` does); until then the waiting run. A HITL-shaped interrupt's value is
   * validated as decisions. `audit.key`: the decision key, as for `decide`.
   */
  resume(runId: string, body: ResumeBody, audit: AnswerAudit, next?: NextRunOptions): Promise<RunRecord>;
  /** Every resume of a run, oldest first (the audit trail). */
  resumes(runId: string): Promise<ResumeRecord[]>;
  /**
   * Waiting runs (their threads wait on them) with their interrupts, most recently stopped first, in one query; each with
   * the tool calls already decided and the interrupts already answered (what no longer waits).
   */
  /** `threadAccess`: only runs of threads the caller may see (AccessFilter). */
  interrupted(options?: { limit?: number; threadAccess?: AccessFilter | undefined }): Promise<InterruptedRun[]>;
  /** Where the run's webhook and after-run cleanup stand; null when it asked for neither (or its thread is gone). */
  completion(runId: string): Promise<RunCompletionRecord | null>;
  /** Ends a run's `completionHoldMs` at once: its thread may be deleted as soon as the run ended. */
  releaseCompletion(runId: string): Promise<void>;
}

/** The runtime: runs on one database, executed in this process or by workers anywhere. */
export interface Runtime {
  runs: RunsApi;
  /** The graphs this runtime runs (ids in registration order; `agent` first when built in). */
  graphs: GraphsApi;
  /** Assistants (the HTTP API's /assistants): each loaded graph's default one, and those created. */
  assistants: AssistantsApi;
  /** Threads (the HTTP API's /threads): records, state and history from the checkpoints. */
  threads: ThreadsApi;
  /** Files runs sent to the user (`send_file`, `gen_image`), served by `GET /files/{id}`. */
  files: FilesApi;
  /** The long-term memory store on the runtime's database (the HTTP API's /store). */
  store: PostgresStore;
  /** Scheduled runs (the HTTP API's /runs/crons): every worker of the runtime schedules them. */
  crons: CronsApi;
  worker(options?: WorkerOptions): Worker;
  /**
   * The database as this process sees it, for `/health`: `down` when it does not answer within
   * `timeoutMs`, `degraded` when it answers slowly (over `slowMs`), refuses a small real write,
   * or a worker of this process is waiting out a fault; `ok` otherwise.
   */
  health(options?: { timeoutMs?: number; slowMs?: number }): Promise<RuntimeHealth>;
  /**
   * Deletes every run, thread, assistant (but the graphs' defaults), checkpoint or store item, as
   * `flags` names (TruncateFlags): the official server's `POST /internal/truncate`, which the HTTP
   * API serves only with DEVMIND_ALLOW_TRUNCATE. Active runs are cancelled and waited for first;
   * RunConflictError, with nothing deleted, when one does not stop.
   */
  truncate(flags: TruncateFlags): Promise<void>;
  /**
   * Deletes the threads of an assistant (its uuid): those whose metadata names it
   * (`assistant_id`) and those with a run of it, each after its active runs stopped (as
   * `threads.delete` does it); returns their ids. `DELETE /assistants/{id}?delete_threads=true`.
   */
  deleteAssistantThreads(assistantId: string): Promise<string[]>;
  /**
   * `value` with the configured secrets hidden, as every stored event and run record has them:
   * for what a command shows people that does not come from those (a thread's values).
   */
  redact<T>(value: T): T;
  close(): Promise<void>;
}

/** `runtime.graphs`: the graphs this runtime runs, and what a client may read of them. */
export interface GraphsApi {
  ids(): string[];
  has(id: string): boolean;
  /** What the graph is (its default assistant's description), when it says. */
  description(id: string): string | null;
  /** Whether the graph's nodes report their steps (model rounds, tool calls): a timeline shows its runs by those, not node by node. */
  reportsSteps(id: string): boolean;
  /** Whether the graph counts its runs' model rounds, tool calls and tokens (`GraphRunHooks.counters`): only then are they worth showing. */
  reportsCounters(id: string): boolean;
  /** Whether the graph says its runs' answer (`GraphRunHooks.outcome`): a person is shown that answer rather than the final values. */
  reportsAnswer(id: string): boolean;
  /**
   * Resolves when a run of the graph can execute in this process (`GraphRunHooks.ready`); throws
   * what it lacks otherwise (the agent: the ConfigError saying which model setting is missing).
   * GRAPH_NOT_FOUND for an unknown id.
   */
  ready(id: string): Promise<void>;
  /** The graph's nodes and edges (LangGraph's drawable graph as JSON); GRAPH_NOT_FOUND for an unknown id. */
  drawing(id: string, options?: { xray?: boolean | number }): Promise<GraphDrawing>;
  /**
   * The graph's input, output, state and config JSON schemas (`GraphSchemaReader`): from the
   * compiled graph when it tells the types (StateSchema, Zod), else from its TypeScript source
   * through LangGraph's static extractor when the project has it, else the channel names.
   */
  schemas(id: string): Promise<GraphSchemas>;
  /**
   * The graph's subgraphs by namespace (LangGraph's `getSubgraphsAsync`: those under `namespace`
   * when given, nested ones too with `recurse`), each with its schemas.
   */
  subgraphs(id: string, options?: { namespace?: string; recurse?: boolean }): Promise<Record<string, GraphSchemas>>;
  /**
   * Reads the TypeScript sources of every graph whose types are not known at runtime in one
   * batch of LangGraph's static extractor, so the first `schemas` / `subgraphs` call does not wait
   * for it (`serve` starts it in the background). Never throws: a graph that cannot be resolved
   * is logged (`graph.failed`) and its routes answer 422 with the cause, as a throwing factory's.
   */
  warmSchemas(): Promise<void>;
  /**
   * The stream transformers the graph was compiled with (`compile({transformers})`, LangGraph's
   * `streamTransformers`): the protocol projection runs them over each run's events to send their
   * final values. None for a factory graph (it is built per run) or an unknown id.
   */
  streamTransformers(id: string): Promise<readonly unknown[]>;
  /**
   * Puts `graphs` (as `createRuntime({ graphs })` takes them) in place of the project's graphs,
   * as `devmind dev` does after an edit: new runs, state reads and drawings use them at once, and
   * every run the workers of this runtime execute of a graph is handed over (`Worker.handOver`):
   * it stops at its next step boundary and continues from that checkpoint on the new code at
   * once, its event `run.resumed {reason: "reload"}` (or ends GRAPH_NODE_GONE when its node is
   * gone). Throws GraphDefinitionError, changing nothing, for an entry that is not a graph.
   * Returns the ids of the runs handed over.
   */
  replace(graphs: Readonly<Record<string, GraphEntry | false>>): string[];
}

/** `runtime.files`: attachments stored by runs' tools. */
export interface FilesApi {
  /** The attachment with its bytes, or undefined for an unknown or malformed id. */
  get(id: string): Promise<StoredAttachment | undefined>;
}

/** What `runtime.health()` reports. */
export interface RuntimeHealth {
  status: "ok" | "degraded" | "down";
  /** `writable` is false, and `error` the failure, while the probe fails for want of storage or a write of this process did within RUNTIME_DEFAULTS.healthWriteFailureMs (`last_write_failure_at` says when). */
  database: { reachable: boolean; writable: boolean | null; latency_ms: number | null; error: { code: string; message: string } | null; last_write_failure_at?: string };
  workers: DatabaseHealthReport[];
}


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
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // writes refused for want of storage are remembered for /health (a full disk may still take the
  // probe's small write), and told to the deployment's other processes, whose /health reports them too
  const storageNotices = new StorageNotices(options.db, owner);
  const writeFaults = new WriteFaults((state, error) => storageNotices.announce(state, error));
  storageNotices.attach(writeFaults);
  const db = observeWriteFaults(options.db, writeFaults);
  const logger = options.logger ?? silentLogger;
  const redactor = options.redactor ?? createRedactor(configSecrets(config));
  // a run's input is checked by its graph's hooks (the registry below) before anything is stored
  const runs = new RunStore(db, redactor, (graphId) => graphs.hooks(graphId), options.traceParent);
  const events = new EventStore(db, redactor);
  const decisions = new DecisionStore(db);
  const ledger = new ToolLedger(db);
  const resumes = new ResumeStore(db);
  const checkpointer = new PostgresCheckpointSaver(db);
  const listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  const everyRun = new Set<(runId: string, event: LiveEvent) => void>();
  const orphans: OrphanDeps = { db, runs, maxAttempts: config.worker.maxAttempts };
  const runEnds = new RunEndWatcher(db);
  const cancels = new RunCancelWatch(db);
  // model.delta also goes to other processes (a server streaming a run a worker executes)
  const deltas = new LiveDeltaPublisher(db);
  // the message chunks chat models stream in running graphs, for LangGraph streams in any process
  const liveMessages = new LiveMessagePublisher(db);
  // runs created with executeHere: claimed at creation, waiting for execute() in this process
  const reserved = new Map<string, ClaimedRun>();
  // the long-term memory store every user graph gets as `config.store` (and the HTTP API's /store)
  const store = new PostgresStore(db, storeOptionsFromConfig(config, options.embeddings, logger.child({ component: "store" })));
  const completions = new RunCompletions(db);
  const policy = webhookPolicy(config.webhooks.allow);
  const agent = builtinAgent({ config, checkpointer, model: options.model, modelStandIn: options.modelStandIn, tools: options.tools, attachments: new AttachmentStore(db) });
  const graphLog = logger.child({ component: "graphs" });
  const graphs = new GraphRegistry(options.graphs, {
    checkpointer,
    store,
    agent,
    onReplaced: (id, replaced) =>
      graphLog.warn({ event: "graph.persistence_replaced", graph: id, ...replaced }, `graph ${id} was compiled with its own ${replacedWords(replaced)}: devmind keeps its runs in its database instead`),
  });
  const schemaReader = new GraphSchemaReader((id) => graphs.compiled(id), (id) => graphs.source(id));
  const assistants = new AssistantStore(db, graphs, config.graphDefaults);

  const dispatch = (runId: string, event: LiveEvent): void => {
    if (event.type === "model.delta") deltas.publish(runId, event.round, event.text, event.message_id, event.offset);
    for (const listener of listeners.get(runId) ?? []) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own
      }
    }
    for (const listener of everyRun) {
      try {
        listener(runId, event);
      } catch {
        // a listener's failure is its own
      }
    }
  };
  const streams = new LiveDeltaRedaction(redactor);
  const live = (runId: string, raw: LiveEvent): void => {
    // live events reach terminals and other processes before (or instead of) the store: redact them the same way;
    // deltas as one text, so a secret split across two of them is hidden too (a tail that could begin one waits)
    if (raw.type === "model.delta") {
      for (const shown of streams.push(runId, raw)) dispatch(runId, shown);
      return;
    }
    for (const rest of streams.flush(runId, { end: raw.type !== "model.failed" })) dispatch(runId, rest);
    // nobody in this process listens to it: no redacted copy to make (the store redacts its own)
    if (!listeners.has(runId) && everyRun.size === 0) return;
    // the JSON round trip keeps the event's shape (redaction rewrites string values only)
    dispatch(runId, JSON.parse(redactor.json(raw)) as LiveEvent);
  };

  const executorDeps = (drainSignal?: AbortSignal): ExecutorDeps => ({
    runs,
    events,
    decisions,
    ledger,
    resumes,
    graphs,
    leaseMs: config.worker.leaseMs,
    runTimeoutMs: config.limits.runTimeoutMs,
    cancelPollMs: RUNTIME_DEFAULTS.cancelPollMs,
    cancels,
    live,
    ended: (ended) => runEnds.publish(ended),
    liveMessages,
    ...(drainSignal === undefined ? {} : { drainSignal }),
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });

  // a thread's checkpoints are read with the graph of its latest run (the agent for a thread without runs)
  // (a thread without runs: the graph its metadata names, as LangGraph clients create threads with graph_id)
  const threads = createThreadsApi(db, async (threadId, taggedGraph, run) => {
    // a reader of one run's checkpoints (a run's stream) names the run's graph: no lookup
    if (run !== undefined && graphs.has(run.graphId)) return (await graphs.compiled(run.graphId, { configurable: { ...(run.configurable ?? {}), thread_id: threadId } })) as unknown as StateReadableGraph;
    const [latest] = await runs.list({ threadId, limit: 1 }).catch(() => []);
    const tagged = latest === undefined ? await taggedGraph() : undefined;
    const graphId = latest !== undefined && graphs.has(latest.graph_id) ? latest.graph_id : tagged !== undefined && graphs.has(tagged) ? tagged : GRAPHS_DEFAULTS.defaultGraphId;
    const config = latest === undefined ? {} : { configurable: { ...(latest.config.configurable ?? {}), thread_id: threadId } };
    return (await graphs.compiled(graphs.has(graphId) ? graphId : (graphs.ids()[0] ?? graphId), config)) as unknown as StateReadableGraph;
  }, logger.child({ component: "threads" }));
  // the database as runs executed in this process (`runs.execute`) saw it
  const executionHealth = new DatabaseHealth(logger.child({ component: "runtime" }));

  const runsApi = createRunsApi({ db, config, runs, events, decisions, resumes, checkpointer, completions, threads, graphs, assistants, policy, owner, reserved, listeners, everyRun, executorDeps, liveMessages, executionHealth, orphans, runEnds });
  const attachments = new AttachmentStore(db);
  const cronStore = new CronStore(db);

  const workers = new Set<Worker>();
  const purger = new Purger(db, runsApi, () => graphs.ids());
  return {
    runs: runsApi,
    assistants,
    graphs: {
      ids: () => graphs.ids(),
      has: (id) => graphs.has(id),
      description: (id) => graphs.hooks(id).description ?? null,
      reportsSteps: (id) => graphs.hooks(id).reportsSteps === true,
      reportsCounters: (id) => graphs.hooks(id).counters !== undefined,
      reportsAnswer: (id) => graphs.hooks(id).outcome !== undefined,
      ready: async (id) => {
        graphs.check(id);
        await graphs.hooks(id).ready?.();
      },
      drawing: async (id, drawOptions = {}) => drawGraph(await graphs.compiled(id), drawOptions),
      schemas: (id) => schemaReader.schemas(id),
      subgraphs: (id, subgraphOptions = {}) => schemaReader.subgraphs(id, subgraphOptions),
      // a factory is called per run (it may connect to things): its schemas are read when asked for
      warmSchemas: async () => {
        for (const { id, error } of await schemaReader.warm(graphs.ids().filter((id) => !graphs.isFactory(id)))) {
          const cause = error instanceof Error ? error.message : String(error);
          graphLog.error({ event: "graph.failed", graph: id, code: (error as { code?: unknown }).code ?? "GRAPH_LOAD_FAILED", error: cause }, `graph ${id} cannot run (its routes answer 422 with this cause): ${cause}`);
        }
      },
      streamTransformers: async (id) => {
        if (!graphs.has(id) || graphs.isFactory(id)) return [];
        const compiled = (await graphs.compiled(id)) as { streamTransformers?: unknown };
        return Array.isArray(compiled.streamTransformers) ? compiled.streamTransformers : [];
      },
      replace: (replacement) => {
        graphs.replace(replacement);
        schemaReader.forget();
        return [...workers].flatMap((worker) => worker.handOver());
      },
    },
    threads,
    files: { get: (id) => attachments.get(id) },
    store,
    crons: createCronsApi(cronStore, graphs, (webhook) => checkWebhookUrl(policy, webhook)),
    worker(workerOptions = {}) {
      // each worker schedules crons and delivers what ended runs asked for (webhooks, thread deletion)
      const startScheduler = () => {
        const scheduler = startCronScheduler({
          db,
          crons: cronStore,
          runs,
          events,
          completions,
          graphIds: graphs.ids(),
          touchThread: (threadId, metadata) => threads.touch(threadId, undefined, metadata),
          logger: logger.child({ component: "crons" }),
        });
        const delivery = startRunCompletions({
          db,
          completions,
          getRun: (runId) => runs.get(runId),
          threadValues: async (threadId) => plainJson((await threads.state(threadId)).values ?? null),
          deleteThread: (threadId) => threads.delete(threadId),
          policy,
          settings: config.webhooks,
          logger: logger.child({ component: "webhooks" }),
        });
        return { stop: async () => void (await Promise.all([scheduler.stop(), delivery.stop()])) };
      };
      const worker = createWorker({
        db,
        runs,
        graphIds: () => graphs.ids(),
        maxAttempts: config.worker.maxAttempts,
        leaseMs: config.worker.leaseMs,
        concurrency: workerOptions.concurrency ?? config.worker.concurrency,
        executorDeps,
        owner: `${owner}:worker`,
        processId: owner,
        logger: logger.child({ component: "worker" }),
        startScheduler,
        runEnds,
        observer: options.observer,
      });
      workers.add(worker);
      return worker;
    },
    redact: <T>(value: T): T => (value === undefined ? value : (JSON.parse(redactor.json(value)) as T)),
    async health(healthOptions = {}) {
      // from the first look on, this process hears what the deployment's others see
      await storageNotices.listen();
      return checkHealth({ runs, workers: [...workers], execution: executionHealth, prober: `${owner}:health`, writeFaults, ...healthOptions });
    },
    truncate: (flags) => purger.truncate(flags),
    deleteAssistantThreads: (assistantId) => purger.assistantThreads(assistantId, (threadId) => threads.delete(threadId)),
    async close() {
      await store.stop();
      await threads.stopSweeper();
      await Promise.all([...workers].map((worker) => worker.stop()));
      workers.clear();
      // reserved runs never executed go back to the queue instead of waiting for their lease to lapse
      const unexecuted = [...reserved.values()];
      reserved.clear();
      await Promise.all(unexecuted.map(({ run, epoch }) => runs.release(run.run_id, epoch).catch(() => false)));
      await runEnds.close();
      await cancels.close();
      await storageNotices.close();
    },
  };
}
