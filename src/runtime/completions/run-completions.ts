import { RUN_COMPLETIONS_CHANNEL } from "../events/event-sql.js";
import { WEBHOOK_DEFAULTS } from "../../constants.js";
import { databaseFaultOf } from "../../db/database-faults.js";
import type { Database, Queryable } from "../../db/types.js";
import { hasErrorCode } from "../../errors.js";
import { assistantIdFor } from "../../graphs/assistant-id.js";
import type { Logger } from "../../logger.js";
import { runCompletionSql } from "./run-completion-sql.js";
import type { RunRecord } from "../queue/run-record.js";
import { postWebhook } from "../../webhooks/webhook-delivery.js";
import type { WebhookPolicy } from "../../webhooks/webhook-targets.js";

/** What a run asked to happen once it ends. */
export interface RunCompletionRequest {
  /** POST the ended run here (checked against the allow-list when the run was created). */
  webhook?: string | null | undefined;
  /** Delete the run's thread after the webhook (a stateless cron tick with on_run_completed "delete", a stateless run with on_completion "delete"). */
  deleteThread?: boolean | undefined;
  /** Handle nothing before this many milliseconds have passed (or `release`): a reader of the thread finishes first. */
  holdMs?: number | undefined;
}

/** A run's completion row as stored: the webhook's progress and whether all is done. */
export interface RunCompletionRecord {
  run_id: string;
  webhook: string | null;
  delete_thread: boolean;
  /** POSTs made so far. */
  attempts: number;
  /** null while the webhook is still to be delivered (or there is none). */
  outcome: "delivered" | "failed" | "refused" | null;
  last_error: string | null;
  delivered: boolean;
  done: boolean;
}

/** Retry and timing of webhook deliveries (DEVMIND_WEBHOOK_*). */
export interface WebhookSettings {
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  pollMs?: number | undefined;
}

/** What the completion loop of a worker needs. */
export interface RunCompletionDeps {
  db: Database;
  completions: RunCompletions;
  getRun: (runId: string) => Promise<RunRecord>;
  /** The thread's state values as JSON (the webhook body's `values`); null when unreadable. */
  threadValues: (threadId: string) => Promise<unknown>;
  deleteThread: (threadId: string) => Promise<void>;
  policy: WebhookPolicy;
  settings: WebhookSettings;
  logger: Logger;
}


/**
 * The webhook body: the run as LangGraph's API returns it, plus what the official server adds
 * when it calls a webhook (`run_started_at`, `run_ended_at`, `webhook_sent_at`, the thread's
 * `values`, and `error` as the failure's message).
 */
export function webhookPayload(run: RunRecord, values: unknown, sentAt: Date): Record<string, unknown> {
  const { input: _input, lease: _lease, limits: _limits, error, ...rest } = run;
  return {
    ...rest,
    assistant_id: assistantIdFor(run.graph_id),
    metadata: {},
    kwargs: {},
    multitask_strategy: null,
    status: run.status,
    devmind_status: run.status,
    run_started_at: run.created_at,
    run_ended_at: run.finished_at ?? run.updated_at,
    webhook_sent_at: sentAt.toISOString(),
    values: values ?? null,
    ...(error === null ? {} : { error: error.message, error_code: error.code }),
  };
}

/** Wait before attempt `attempt + 1`: the base doubled per attempt made, capped, with ±20 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number): number {
  const plain = Math.min(WEBHOOK_DEFAULTS.retryMaxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(plain * (0.8 + Math.random() * 0.4));
}

/** Storage of `run_completions`: written with the run, read by the completion loop. */
export class RunCompletions {
  private readonly sql: ReturnType<typeof runCompletionSql>;

  constructor(private readonly db: Database) {
    this.sql = runCompletionSql(db.schema);
  }

  /** Records what the run asked for, in the run's creating transaction; nothing when it asked for nothing. */
  async insert(tx: Queryable, runId: string, request: RunCompletionRequest): Promise<void> {
    const webhook = request.webhook ?? null;
    if (webhook === null && request.deleteThread !== true) return;
    await tx.query(this.sql.insert, [runId, webhook, request.deleteThread === true, request.holdMs ?? 0]);
  }

  /** Ends the hold of a run's row (`holdMs`): it is handled as soon as the run ended. */
  async release(runId: string): Promise<void> {
    await this.db.query(this.sql.release, [runId]);
  }

  /** The run's completion row, or null when it asked for nothing (or was deleted with its thread). */
  async get(runId: string): Promise<RunCompletionRecord | null> {
    const row = (await this.db.query<RunCompletionRecord>(this.sql.get, [runId])).rows[0];
    return row === undefined ? null : { ...row, attempts: Number(row.attempts) };
  }

  /** Claims up to `limit` due rows of ended runs for `holdMs`. */
  claim(limit: number, holdMs: number) {
    return this.db.query<{ run_id: string; thread_id: string; webhook: string | null; delete_thread: boolean; attempts: number; outcome: string | null }>(this.sql.claim, [limit, holdMs]);
  }

  settle(runId: string, outcome: "delivered" | "failed" | "refused", error: string | null) {
    return this.db.query(this.sql.settle, [runId, outcome, error === null ? null : error.slice(0, WEBHOOK_DEFAULTS.maxErrorChars)]);
  }

  retryLater(runId: string, error: string, delayMs: number) {
    return this.db.query(this.sql.retryLater, [runId, error.slice(0, WEBHOOK_DEFAULTS.maxErrorChars), delayMs]);
  }

  done(runId: string) {
    return this.db.query(this.sql.done, [runId]);
  }
}

/**
 * One pass: for each ended run whose completion is due, POSTs its webhook once (settling it when
 * delivered, refused, or out of attempts; else scheduling the next attempt), then — once the
 * webhook is settled — deletes the thread when asked and marks the row done. Returns the rows handled.
 */
export async function runCompletionPass(deps: RunCompletionDeps): Promise<number> {
  const { completions, settings, logger } = deps;
  const holdMs = settings.timeoutMs + WEBHOOK_DEFAULTS.pollMs * 4;
  const { rows } = await completions.claim(WEBHOOK_DEFAULTS.claimBatch, holdMs);
  for (const row of rows) {
    let settled = row.webhook === null || row.outcome !== null;
    if (!settled) {
      const run = await deps.getRun(row.run_id).catch((error: unknown) => {
        // deleted with its thread since the claim: its row went with it
        if (hasErrorCode(error, "RUN_NOT_FOUND")) return null;
        throw error;
      });
      if (run === null) continue;
      const values = await deps.threadValues(row.thread_id).catch(() => null);
      const body = JSON.stringify(webhookPayload(run, values, new Date()));
      const attempt = await postWebhook(deps.policy, row.webhook!, body, settings.timeoutMs);
      const attempts = Number(row.attempts);
      if (attempt.ok) {
        await completions.settle(row.run_id, "delivered", null);
        logger.info({ event: "webhook.delivered", run_id: row.run_id, attempts, status: attempt.status }, "run webhook delivered");
        settled = true;
      } else if (!attempt.retry || attempts >= settings.maxAttempts) {
        const outcome = attempt.refused === true ? "refused" : "failed";
        await completions.settle(row.run_id, outcome, attempt.error);
        logger.warn({ event: "webhook.failed", run_id: row.run_id, attempts, outcome, error: attempt.error }, "run webhook given up");
        settled = true;
      } else {
        const delay = retryDelayMs(attempts, settings.retryBaseMs);
        await completions.retryLater(row.run_id, attempt.error, delay);
        logger.info({ event: "webhook.retry", run_id: row.run_id, attempts, delay_ms: delay, error: attempt.error }, "run webhook will be retried");
      }
    }
    if (!settled) continue;
    if (row.delete_thread) {
      try {
        // the run's row, and this one with it, go with the thread
        await deps.deleteThread(row.thread_id);
        logger.info({ event: "run.thread_deleted", run_id: row.run_id, thread_id: row.thread_id }, "thread deleted after its run (on_run_completed delete)");
        continue;
      } catch (error) {
        if (!hasErrorCode(error, "THREAD_NOT_FOUND")) {
          // e.g. another run was queued on the thread meanwhile: keep the thread
          logger.warn({ event: "run.thread_delete_failed", run_id: row.run_id, thread_id: row.thread_id, error: error instanceof Error ? error.message : String(error) }, "thread kept after its run");
        }
      }
    }
    await completions.done(row.run_id);
  }
  return rows.length;
}

/** A worker's completion loop (`stop` ends it after the pass under way). */
export interface RunCompletionLoop {
  stop(): Promise<void>;
}

/**
 * Starts the completion loop of a worker: a pass at once, then one every `settings.pollMs`
 * (a full batch is followed by another pass at once). Database faults are logged once per outage
 * and the next pass tries again; the rows stay until handled.
 */
export function startRunCompletions(deps: RunCompletionDeps): RunCompletionLoop {
  let stopping = false;
  let wake: (() => void) | undefined;
  const pollMs = deps.settings.pollMs ?? WEBHOOK_DEFAULTS.pollMs;
  let faulted = false;
  // a run's end (or a held row's release) notifies: woken then, else looking every idlePollMs (a
  // lost notification, a retry coming due); right after rows were handled, every pollMs
  let woken = false;
  const poke = (): void => {
    woken = true;
    wake?.();
  };
  let unlisten: (() => Promise<void>) | null = null;
  const loop = (async () => {
    unlisten = await deps.db.listen(RUN_COMPLETIONS_CHANNEL, poke).catch(() => null);
    let busy = true;
    while (!stopping) {
      let handled = 0;
      woken = false;
      try {
        if (unlisten === null) unlisten = await deps.db.listen(RUN_COMPLETIONS_CHANNEL, poke).catch(() => null);
        handled = await runCompletionPass(deps);
        faulted = false;
      } catch (error) {
        const kind = databaseFaultOf(error);
        const message = error instanceof Error ? error.message : String(error);
        if (kind === null) deps.logger.error({ event: "run_completions.error", error: message }, "run completion pass failed");
        else if (!faulted) deps.logger.warn({ event: "run_completions.database_fault", kind, error: message }, "run completions wait for the database");
        faulted = kind !== null;
      }
      if (stopping) break;
      if (handled >= WEBHOOK_DEFAULTS.claimBatch || woken) continue;
      // a retry is scheduled pollMs-precise only while rows keep coming; idle, the poll is slow
      const idle = !busy && handled === 0 && unlisten !== null;
      busy = handled > 0;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idle ? Math.max(pollMs, WEBHOOK_DEFAULTS.idlePollMs) : pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await (unlisten as (() => Promise<void>) | null)?.().catch(() => undefined);
    },
  };
}
