import type { LiveMessageSink } from "./events/live-messages.js";
import { randomUUID } from "node:crypto";
/**
 * The runs API of the runtime (`runtime.runs`): create, execute, decide, resume, cancel, wait,
 * events, live listeners and takeover. createRuntime (runtime.ts) builds the stores and wires them
 * in; this module only says what each call does with them.
 */
import { PostgresCheckpointSaver } from "../checkpoint/postgres-saver.js";
import type { DevmindConfig } from "../config.js";
import { RUNS_CHANNEL, RUNTIME_DEFAULTS } from "../constants.js";
import { notify } from "../db/channels.js";
import type { Database, Queryable } from "../db/types.js";
import { RunConflictError, RunNotFoundError } from "../errors.js";
import type { ActionRequest } from "../vocabulary/hitl.js";
import { decisionsResume, planDecisions } from "./interrupts/decide.js";
import { DecisionStore, type DecisionRecord, type NewDecision } from "./interrupts/decision-store.js";
import { EventStore, type NewRunEvent } from "./events/event-store.js";
import type { ExecutorDeps } from "./execution/executor.js";
import { DatabaseHealth, executeWithRecovery } from "./execution/fault-recovery.js";
import { listenRun } from "./events/live-follow.js";
import { waitForRunEnd, type RunEndWatcher } from "./queue/run-end-wait.js";
import { recoverEmbeddedOrphans, takeOverRunning, waitStopped, type OrphanDeps } from "./queue/orphan-runs.js";
import type { ClaimedRun, RunRecord, RunStatus } from "./queue/run-record.js";
import { RunStore, type CreateRunOptions } from "./queue/run-store.js";
import { retryDatabaseFaults } from "./execution/backoff.js";
import type { ThreadsApi } from "./threads/threads-api.js";
import { RunCompletions } from "./completions/run-completions.js";
import { checkWebhookUrl, webhookPolicy } from "../webhooks/webhook-targets.js";
import { GraphRegistry } from "../graphs/graph-registry.js";
import { GRAPHS_DEFAULTS } from "../constants.js";
import type { HitlRequest } from "../vocabulary/hitl.js";
import { isHitlRequest, planHitlResume } from "./interrupts/hitl-decisions.js";
import { hitlResumeValue, planResume } from "./interrupts/resume-plan.js";
import { ResumeStore, type ResumeCommand } from "./interrupts/resume-store.js";
import { argsDigest } from "./interrupts/digest.js";
import { answerDigest, checkDecisionKey, DecisionKeys, DecisionKeyTaken, type KeyedAnswer } from "./interrupts/decision-keys.js";
import { AssistantStore } from "./assistants/assistant-store.js";
import { mergeAssistantConfig, mergeAssistantContext } from "./assistants/assistant-merge.js";
import { FINAL_STATUSES } from "./queue/status.js";
import type { RunGraphConfig } from "./queue/run-record.js";
import type { AnswerAudit, LiveEvent, RunsApi } from "./runtime.js";

const ASSISTANT_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TERMINAL: readonly RunStatus[] = FINAL_STATUSES;

/** A run's create request (`runtime.runs.create`). */
type CreateRunRequest = Parameters<RunsApi["create"]>[0];

/**
 * What the run a resume creates starts with, besides the waiting run's thread, graph and
 * assistant: the server passes its request's fields; absent ones are the waiting run's own.
 */
export type NextRunOptions = Partial<
  Pick<CreateRunRequest, "config" | "context" | "limits" | "metadata" | "streamMode" | "interruptBefore" | "interruptAfter" | "afterSeconds" | "webhook" | "executeHere">
>;

/** The stores and process state the runs API works on; createRuntime owns and wires them. */
export interface RunsApiDeps {
  db: Database;
  config: DevmindConfig;
  runs: RunStore;
  events: EventStore;
  decisions: DecisionStore;
  resumes: ResumeStore;
  checkpointer: PostgresCheckpointSaver;
  completions: RunCompletions;
  threads: ThreadsApi;
  graphs: GraphRegistry;
  assistants: AssistantStore;
  policy: ReturnType<typeof webhookPolicy>;
  /** This process's lease owner. */
  owner: string;
  /** Runs created with executeHere: claimed at creation, waiting for execute() in this process. */
  reserved: Map<string, ClaimedRun>;
  /** Live listeners of one run, and of every run, in this process. */
  listeners: Map<string, Set<(event: LiveEvent) => void>>;
  everyRun: Set<(runId: string, event: LiveEvent) => void>;
  executorDeps: (drainSignal?: AbortSignal) => ExecutorDeps;
  /** Where this process's runs publish their message chunks (a late listener here gets those sent so far). */
  liveMessages: LiveMessageSink;
  /** The database as runs executed in this process (`runs.execute`) saw it. */
  executionHealth: DatabaseHealth;
  orphans: OrphanDeps;
  /** The process's one LISTEN for run ends, shared by every wait. */
  runEnds: RunEndWatcher;
}

/**
 * Creates the runs API over the runtime's stores. Every write that must be atomic (a run and its
 * run.created event, decisions and their resume) commits in one transaction here.
 */
export function createRunsApi(deps: RunsApiDeps): RunsApi {
  const { db, config, runs, events, decisions, resumes, checkpointer, completions, threads, graphs, assistants, policy, owner, reserved, listeners, everyRun, executorDeps, liveMessages, executionHealth, orphans, runEnds } = deps;
  const keys = new DecisionKeys(db);
  const pendingApprovals = async (runId: string): Promise<ActionRequest[]> => {
    const run = await runs.get(runId);
    return (run.interrupts ?? []).flatMap((item) => (isHitlRequest(item.value) ? (item.value.actionRequests as ActionRequest[]) : []));
  };

  /** The interrupts of an interrupted run that no open resume answers yet. */
  const waitingInterrupts = async (run: RunRecord) => {
    const answered = new Set((await resumes.open(run.run_id)).flatMap((resume) => resume.interrupt_ids));
    return (run.interrupts ?? []).filter((item) => !answered.has(item.id));
  };

  /**
   * Creates, in `tx` (under its thread's lock), the run that resumes `waiting` (CONTRACT section 3:
   * a resume is a new run), with its `run.created` event and `carried`: the `resume.given` it
   * resumes with (the decisions' own events stay on the waiting run, where they were made). RunConflictError when
   * the thread no longer waits on `waiting` (another caller resumed it, or a newer run started).
   */
  const createResumeRun = async (tx: Queryable, waiting: RunRecord, next: NextRunOptions, carried: readonly NewRunEvent[]): Promise<{ run: RunRecord; claimed: boolean }> => {
    const webhook = next.webhook === undefined || next.webhook === null ? null : checkWebhookUrl(policy, next.webhook);
    const lease = next.executeHere === true ? { claimFor: { owner, leaseMs: config.worker.leaseMs } } : {};
    const created = await runs.createWithin(
      tx,
      {
        threadId: waiting.thread_id,
        graphId: waiting.graph_id,
        assistantId: waiting.assistant_id,
        input: null,
        config: mergeRunConfig(waiting.config, next.config),
        context: next.context ?? waiting.context ?? undefined,
        limits: { ...waiting.limits, ...(next.limits ?? {}) },
        metadata: next.metadata ?? waiting.metadata,
        streamMode: next.streamMode ?? waiting.stream_mode ?? undefined,
        interruptBefore: next.interruptBefore ?? waiting.interrupt_before ?? undefined,
        interruptAfter: next.interruptAfter ?? waiting.interrupt_after ?? undefined,
        afterSeconds: next.afterSeconds,
        resumesRun: waiting.run_id,
        ...lease,
      },
      async (inner, runId) => {
        await events.append(runId, [{ type: "run.created" }, ...carried], undefined, { tx: inner });
        await completions.insert(inner, runId, { webhook, deleteThread: false });
      },
    );
    if ("conflict" in created) {
      const { threadId, activeRunId, activeStatus, notWaiting } = created.conflict;
      throw notWaiting !== undefined
        ? new RunConflictError(`run ${waiting.run_id} is no longer what thread ${threadId} waits on (it was resumed, or a newer run started): there is nothing to resume`, { runId: waiting.run_id, threadId })
        : new RunConflictError(`thread ${threadId} already has an active run ${String(activeRunId)} (${String(activeStatus)}); wait for it or cancel it`, { threadId, activeRunId, activeStatus });
    }
    const claimed = created.run.status === "running" && created.run.lease?.owner === owner;
    if (claimed) reserved.set(created.run.run_id, { run: created.run, epoch: created.run.lease?.epoch ?? 0 });
    return { run: created.run, claimed };
  };

  /** Announces a run a resume created to the workers (unless this process holds it), and returns it. */
  const announced = async (outcome: { run: RunRecord; claimed: boolean } | null, waitingId: string): Promise<RunRecord> => {
    if (outcome === null) return runs.get(waitingId);
    await threads.touch(outcome.run.thread_id, outcome.run.graph_id);
    if (!outcome.claimed) await notify(db, RUNS_CHANNEL, outcome.run.run_id);
    return outcome.run;
  };

  /**
   * Stores a planned resume on the waiting run (audited, with its `resume.given` event); once
   * every waiting interrupt has its value (or the resume is a Command's update / goto), creates
   * the run that resumes the thread in the same transaction and returns it; else the waiting run.
   */
  const recordResume = async (run: RunRecord, planned: { interruptIds: string[]; command: ResumeCommand }, waiting: number, audit: AnswerAudit, next: NextRunOptions, keyed: Keyed) => {
    const complete = planned.interruptIds.length >= waiting || planned.command.update !== undefined || planned.command.goto !== undefined;
    const given: NewRunEvent = { type: "resume.given", interrupt_ids: planned.interruptIds, by: audit.principal, reason: audit.reason ?? null, value_digest: argsDigest(planned.command) };
    const outcome = await db.transaction(async (tx) => {
      const stored = await resumes.record(run.run_id, { ...planned, principal: audit.principal, reason: audit.reason ?? null }, { tx });
      if (stored === null) throw new RunConflictError(`run ${run.run_id} is not what its thread waits on (it was resumed, or a newer run started)`, { runId: run.run_id });
      await events.append(run.run_id, [given], undefined, { tx });
      const created = complete ? await createResumeRun(tx, run, next, [given]) : null;
      await keys.store(tx, run.run_id, keyed.key, keyed.digest, audit.principal, created?.run.run_id ?? null);
      return created;
    });
    return announced(outcome, run.run_id);
  };

  /** What a repeated answer replies (its first try committed): the run that try created, else the waiting run. */
  const repeatedAnswer = async (runId: string, answer: KeyedAnswer, next: NextRunOptions): Promise<RunRecord> => {
    if (answer.nextRunId === null) return runs.get(runId);
    const run = await runs.get(answer.nextRunId);
    // created claimed for execute() here by the try whose answer was lost: the claim is this process's own
    const claimed = next.executeHere === true && run.status === "running" && run.lease?.owner === owner && !reserved.has(run.run_id);
    if (claimed) reserved.set(run.run_id, { run, epoch: run.lease?.epoch ?? 0 });
    return announced({ run, claimed: reserved.has(run.run_id) }, runId);
  };

  /**
   * Runs `once` (one try of an answer to a waiting run, storing `keyed` in its transaction), and
   * while it fails on a database fault, tries again with the same key — first asking whether an
   * earlier try committed (its answer lost): then that try's outcome is the reply. A key the
   * caller gave is looked up before the first try too (the caller may be retrying).
   */
  const keyedAnswer = async (runId: string, keyed: Keyed, givenKey: boolean, next: NextRunOptions, once: () => Promise<RunRecord>): Promise<RunRecord> => {
    let repeat = givenKey;
    return retryDatabaseFaults(
      async () => {
        const stored = repeat ? await keys.find(runId, keyed.key, keyed.digest) : null;
        if (stored !== null) return repeatedAnswer(runId, stored, next);
        try {
          return await once();
        } catch (error) {
          if (!(error instanceof DecisionKeyTaken)) throw error;
          const taken = await keys.find(runId, keyed.key, keyed.digest);
          if (taken === null) throw error;
          return repeatedAnswer(runId, taken, next);
        }
      },
      { maxMs: RUNTIME_DEFAULTS.answerFaultWaitMs, only: "unreachable", onFault: () => (repeat = true) },
    );
  };

  /** A key and digest for one answer: the caller's key (checked) or a new one. */
  const keyFor = (kind: "decide" | "resume", body: unknown, audit: AnswerAudit): Keyed => ({
    key: audit.key === undefined ? randomUUID() : checkDecisionKey(audit.key),
    digest: answerDigest(kind, body, audit),
  });

  /** One try of `decide` (see RunsApi.decide), its key stored with the decisions. */
  const decideOnce = async (runId: string, body: unknown, audit: AnswerAudit, next: NextRunOptions, keyed: Keyed): Promise<RunRecord> => {
    const run = await runs.get(runId);
    if (!run.waiting) throw notWaiting(run);
    // the first waiting interrupt in LangChain's HITL shape, whichever graph raised it
    const waiting = await waitingInterrupts(run);
    const target = waiting.find((item) => isHitlRequest(item.value));
    if (target === undefined) throw new RunConflictError(`run ${runId} has no approval waiting`);
    const request = target.value as HitlRequest;
    const already = await decisions.list(runId);
    let planned: NewDecision[];
    let resume: (decided: DecisionRecord[]) => unknown;
    if (request.actionRequests.every((action) => typeof action.tool_call_id === "string")) {
      // requests that name their calls (the agent's): decided together or a subset at a time
      const requests = request.actionRequests as ActionRequest[];
      const editCheck = await graphs.hooks(run.graph_id).editCheck?.();
      planned = planDecisions(body, requests, already, editCheck, audit);
      resume = (decided) => {
        const byCall = new Map(decided.map((record) => [record.tool_call_id, record]));
        return requests.every((item) => byCall.has(item.tool_call_id)) ? decisionsResume(requests, byCall) : undefined;
      };
    } else {
      // LangChain's middleware (createAgent): one decision per action request, in order, all at once
      const value = planHitlResume(body, request);
      const reason = (body as { reason?: unknown } | null)?.reason;
      planned = value.decisions.map((decision, index) => {
        const action = request.actionRequests[index] as HitlRequest["actionRequests"][number];
        const edited = (decision as { editedAction?: { args?: object } }).editedAction;
        const message = (decision as { message?: string }).message ?? (typeof reason === "string" ? reason : audit.reason);
        return {
          toolCallId: action.tool_call_id ?? `${target.id}#${index}`,
          tool: action.name,
          decision: decision["type"] as NewDecision["decision"],
          args: (edited?.args ?? action.args ?? {}) as object,
          principal: audit.principal,
          ...(message === undefined ? {} : { reason: message }),
        };
      });
      resume = () => value;
    }
    // the decisions and their approval.decided events (on the waiting run) and — once every
    // request is decided — the resume and the run that continues the thread commit together,
    // with the decision key
    const outcome = await db
      .transaction(async (tx) => {
        const recorded = await decisions.record(runId, planned, { tx });
        const decided: NewRunEvent[] = recorded.map((d): NewRunEvent => ({ type: "approval.decided", tool_call_id: d.tool_call_id, decision: d.decision, by: d.principal, reason: d.reason }));
        const value = resume([...already, ...recorded]);
        let created: { run: RunRecord; claimed: boolean } | null = null;
        if (value === undefined) {
          await events.append(runId, decided, undefined, { tx });
        } else {
          const command: ResumeCommand = { values: { [target.id]: value } };
          const stored = await resumes.record(runId, { interruptIds: [target.id], command, principal: audit.principal, reason: audit.reason ?? null }, { tx });
          if (stored === null) throw notWaiting(run);
          const given: NewRunEvent = { type: "resume.given", interrupt_ids: [target.id], by: audit.principal, reason: audit.reason ?? null, value_digest: argsDigest(command) };
          await events.append(runId, [...decided, given], undefined, { tx });
          created = waiting.length <= 1 ? await createResumeRun(tx, run, next, [given]) : null;
        }
        await keys.store(tx, runId, keyed.key, keyed.digest, audit.principal, created?.run.run_id ?? null);
        return created;
      })
      .catch(async (error: unknown) => {
        if ((error as { code?: unknown } | null)?.code !== "23505") throw error;
        // a concurrent try with this very key decided first: its outcome is the reply
        if ((await keys.find(runId, keyed.key, keyed.digest)) !== null) throw new DecisionKeyTaken(keyed.key);
        throw (await decisions.conflictOf(runId, planned.map((d) => d.toolCallId))) ?? error;
      });
    return announced(outcome, runId);
  };

  const runsApi: RunsApi = {
    async create(request) {
      const { executeHere, assistantId: requested, webhook: requestedWebhook, deleteThread, completionHoldMs, command, threadMustExist, ...given } = request;
      const webhook = requestedWebhook === undefined || requestedWebhook === null ? null : checkWebhookUrl(policy, requestedWebhook);
      const named = requested ?? GRAPHS_DEFAULTS.defaultGraphId;
      if (!ASSISTANT_UUID.test(named)) graphs.check(named);
      const threadId = given.threadId ?? randomUUID();
      let graphId = "";
      // the assistant is read in the creating transaction: its config and context are the run's
      // defaults, and the read costs no transaction of its own
      const resolve = async (tx: Queryable): Promise<CreateRunOptions> => {
        const assistant = await assistants.get(named, undefined, tx);
        graphId = assistant.graph_id;
        const mergedConfig = mergeAssistantConfig(assistant.config, given.config);
        const mergedContext = mergeAssistantContext(assistant.context, given.context);
        return { ...given, ...(mergedConfig === undefined ? {} : { config: mergedConfig }), ...(mergedContext === undefined ? {} : { context: mergedContext }), threadId, graphId, assistantId: assistant.assistant_id };
      };
      // the run, its run.created event, its thread's row and the workers' wake-up commit together
      // (one transaction for what were three)
      const created = async (tx: Queryable, runId: string): Promise<void> => {
        // sent together (one round trip on PostgreSQL): none needs another's result, and any
        // failing (a missing thread) rolls all of them back with the run
        await Promise.all([
          events.append(runId, [{ type: "run.created" }], undefined, { tx }),
          // a thread the caller named must exist (and be visible to it): checked as it is touched
          threadMustExist !== undefined ? threads.touchExisting(threadId, graphId, threadMustExist.access, tx) : threads.touch(threadId, graphId, undefined, tx),
          // delivered at commit; a run this process claims at creation needs no worker
          executeHere !== true ? notify(tx, RUNS_CHANNEL, runId) : undefined,
          completions.insert(tx, runId, { webhook, deleteThread: deleteThread === true, holdMs: completionHoldMs }),
        ]);
        if (command !== undefined) {
          // a Command's update / goto the run starts with (LangGraph's `command` with no interrupt waiting)
          const given = { values: {}, ...(command.update === undefined ? {} : { update: command.update }), ...(command.goto === undefined ? {} : { goto: command.goto }) };
          if ((await resumes.record(runId, { interruptIds: [], command: given, principal: command.by }, { tx })) === null) throw new RunConflictError(`run ${runId} could not take its command`, { runId });
          await events.append(runId, [{ type: "resume.given", interrupt_ids: [], by: command.by, reason: null, value_digest: argsDigest(given) }], undefined, { tx });
        }
      };
      await assistants.ready();
      // the id is chosen here, once: a try after a database fault first looks for the run an earlier
      // try made (its commit's answer lost), and that run is the answer (issue 37)
      const runId = randomUUID();
      let faulted = false;
      const once = async (): Promise<RunRecord> => {
        const made = faulted ? await runs.get(runId).catch((error: unknown) => (error instanceof RunNotFoundError ? null : Promise.reject(error))) : null;
        if (made !== null) {
          const ours = executeHere === true && made.status === "running" && made.lease?.owner === owner;
          if (ours && !reserved.has(made.run_id)) reserved.set(made.run_id, { run: made, epoch: made.lease?.epoch ?? 0 });
          if (executeHere === true && !ours) await notify(db, RUNS_CHANNEL, made.run_id);
          return made;
        }
        const withId = async (tx: Queryable): Promise<CreateRunOptions> => ({ ...(await resolve(tx)), runId });
        const { run, claimed } =
          executeHere === true
            ? await runs.createClaimed(withId, { owner, leaseMs: config.worker.leaseMs }, created)
            : { run: await runs.create(withId, created), claimed: null };
        if (claimed !== null) reserved.set(run.run_id, claimed);
        // created to execute here but queued behind another run of its thread: a worker continues it
        if (executeHere === true && claimed === null) await notify(db, RUNS_CHANNEL, run.run_id);
        return run;
      };
      return retryDatabaseFaults(once, { maxMs: RUNTIME_DEFAULTS.answerFaultWaitMs, only: "unreachable", onFault: () => (faulted = true) });
    },
    delete: (runId) => runs.delete(runId),
    async rollback(runId) {
      const run = await runs.get(runId);
      if (!TERMINAL.includes(run.status)) throw new RunConflictError(`run ${runId} is ${run.status}; cancel it and wait until it stopped before rolling it back`, { runId, status: run.status });
      await checkpointer.deleteRunCheckpoints(run.thread_id, run.run_id);
      await runs.delete(run.run_id);
    },
    async execute(runId) {
      const key = runId.toLowerCase();
      const reservation = reserved.get(key);
      reserved.delete(key);
      // a run of a graph not loaded here is not claimed (GraphNotFoundError)
      const claimed = reservation ?? (await runs.claim(runId, { owner, leaseMs: config.worker.leaseMs, graphs: graphs.ids() }));
      const after = await executeWithRecovery(executorDeps(), claimed, owner, {
        trigger: "manual",
        health: executionHealth,
        leaseMs: config.worker.leaseMs,
        maxWaitMs: RUNTIME_DEFAULTS.executeFaultWaitMs,
      });
      // null: the lease moved while the database was away; whoever holds it now continues the run
      return after ?? runs.get(runId);
    },
    async decide(runId, body, audit, next = {}) {
      const keyed = keyFor("decide", body, audit);
      return keyedAnswer(runId, keyed, audit.key !== undefined, next, () => decideOnce(runId, body, audit, next, keyed));
    },
    get: (runId) => runs.get(runId),
    list: (filter = {}) => runs.list(filter),
    async cancel(runId) {
      // a retry after a database fault finds the run cancelled — by its own first try, whose answer
      // was lost, or by another caller: either way what the caller asked holds (checked, not repeated)
      let faulted = false;
      return retryDatabaseFaults(
        async () => {
          try {
            // the status change and its events commit together: never an interrupted run without run.cancelled
            return await events.writeWith(runId, async (tx) => {
              const run = await runs.requestCancel(runId, { tx });
              const stored: NewRunEvent[] = [{ type: "run.cancel_requested" }];
              if (run.status === "interrupted") stored.push({ type: "run.cancelled" });
              return { value: run, events: stored };
            });
          } catch (error) {
            if (!faulted || !(error instanceof RunConflictError)) throw error;
            const run = await runs.get(runId);
            if ((run.status === "running" && run.cancel_requested) || (run.status === "interrupted" && run.stop_reason === "cancelled")) return run;
            throw error;
          }
        },
        { maxMs: RUNTIME_DEFAULTS.answerFaultWaitMs, only: "unreachable", onFault: () => (faulted = true) },
      );
    },
    async wait(runId, waitOptions = {}) {
      return (await runsApi.waitEnd(runId, waitOptions)).run;
    },
    async waitEnd(runId, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? config.limits.runTimeoutMs);
      return waitForRunEnd(
        {
          watcher: runEnds,
          // a database away for a moment does not end the wait (bounded by its deadline)
          get: (id) => retryDatabaseFaults(() => runs.get(id), { maxMs: Math.max(0, deadline - Date.now()), signal: waitOptions.signal }),
          subscribe: (id, listener) => runsApi.subscribe(id, listener),
        },
        runId,
        { deadline, signal: waitOptions.signal, known: waitOptions.known, isEnded: (run) => TERMINAL.includes(run.status) },
      );
    },
    listenEnds: () => runEnds.ready(),
    events(runId, eventOptions = {}) {
      if (eventOptions.follow !== true) {
        return (async function* () {
          // read without a limit: every stored event after `after` in one statement
          yield* await events.read(runId, { after: eventOptions.after ?? 0 });
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
    subscribeAll(listener) {
      everyRun.add(listener);
      return () => void everyRun.delete(listener);
    },
    live: (runId, listener, liveOptions) => listenRun(db, runId, listener, liveOptions, (key) => liveMessages.sentSoFar?.(key) ?? []),
    decisions: (runId) => decisions.list(runId),
    takeOver: async (runId, takeOverOptions = {}) => takeOverRunning(orphans, await runs.get(runId), takeOverOptions),
    recoverOrphans: () => recoverEmbeddedOrphans(orphans),
    waitStopped: (runId, waitOptions) => waitStopped(orphans, runId, waitOptions),
    pendingApprovals,
    lastEventSeq: (runId) => events.lastSeq(runId),
    async resume(runId, body, audit, next = {}) {
      const keyed = keyFor("resume", body, audit);
      return keyedAnswer(runId, keyed, audit.key !== undefined, next, async () => {
        const run = await runs.get(runId);
        if (!run.waiting) throw notWaiting(run);
        const waiting = await waitingInterrupts(run);
        // a value for one waiting HITL request (and nothing else) is its decisions: audited per decision
        const decisionsValue = hitlResumeValue(body, waiting);
        if (decisionsValue !== undefined) return decideOnce(runId, decisionsValue, audit, next, keyed);
        return recordResume(run, planResume(body, waiting), waiting.length, audit, next, keyed);
      });
    },
    resumes: (runId) => resumes.list(runId),
    interrupted: (listOptions = {}) => runs.listInterrupted(listOptions.limit, listOptions.threadAccess),
    completion: (runId) => completions.get(runId),
    releaseCompletion: (runId) => completions.release(runId),
  };
  return runsApi;
}

/** The decision key of one answer, and the digest of its request (compared between its tries). */
interface Keyed {
  key: string;
  digest: string;
}

/** Why a run cannot be decided or resumed: its thread does not wait on it. */
function notWaiting(run: RunRecord): RunConflictError {
  const why =
    run.stop_reason === "interrupt"
      ? `run ${run.run_id} ended at an interrupt, but its thread no longer waits on it (it was resumed, or a newer run started)`
      : `run ${run.run_id} is not waiting for approval or a resume (status ${run.status}): there is nothing to resume`;
  return new RunConflictError(why, { runId: run.run_id, status: run.status });
}

/** The waiting run's config with a resume request's on top (its `configurable` merged key by key). */
function mergeRunConfig(base: RunGraphConfig, given: RunGraphConfig | undefined): RunGraphConfig {
  if (given === undefined) return base;
  const configurable = base.configurable === undefined && given.configurable === undefined ? {} : { configurable: { ...(base.configurable ?? {}), ...(given.configurable ?? {}) } };
  return { ...base, ...given, ...configurable };
}
