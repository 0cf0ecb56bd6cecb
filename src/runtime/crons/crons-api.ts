import { GRAPHS_DEFAULTS } from "../../constants.js";
import type { AccessFilter } from "../../vocabulary/access-filter.js";
import { DevmindError } from "../../errors.js";
import { checkCronSchedule, checkEndTime } from "./cron-schedule.js";
import type { CronPayload, CronRecord, CronSearchOptions, CronStore } from "./cron-store.js";
import type { CronSortBy } from "./cron-sql.js";
import { checkRunGraphConfig } from "../queue/run-config.js";
import { serializeRunInput } from "../queue/run-input.js";
import type { GraphRunHooks } from "../../graphs/run-hooks.js";
import { checkThreadId, runInputError, serializeJson } from "../queue/run-record.js";

export type { CronPayload, CronRecord, CronSearchOptions } from "./cron-store.js";
export type { CronSortBy } from "./cron-sql.js";

/** What `runtime.crons.create` takes: a schedule and the run create of every tick. */
export interface CronCreateOptions {
  /** The graph every tick runs (default `agent`); GRAPH_NOT_FOUND unless this runtime loaded it. */
  assistantId?: string | undefined;
  /** Every tick runs on this thread; absent: each tick runs on a new thread (a stateless cron). */
  threadId?: string | undefined;
  /** Standard 5-field cron expression (`minute hour day-of-month month day-of-week`). */
  schedule: string;
  /** IANA time zone the schedule is read in; default UTC. */
  timezone?: string | null | undefined;
  /** No tick after this time (ISO-8601 or a Date). */
  endTime?: string | Date | null | undefined;
  /** The run input of every tick (`{ messages }` for the agent; any JSON for another graph). */
  input: unknown;
  /** The graph's config of every tick (`configurable`, `recursion_limit`, `tags`). */
  config?: Record<string, unknown> | undefined;
  /** The graph's context of every tick. */
  context?: unknown;
  /** Free metadata, searchable by containment. */
  metadata?: Record<string, unknown> | undefined;
  /** When a tick's thread has an active run: "reject" (default) skips the tick, "enqueue" queues behind it. */
  multitask?: "reject" | "enqueue" | undefined;
  /** Default true; a disabled cron keeps its schedule and creates no runs. */
  enabled?: boolean | undefined;
  /** Every tick's run calls this URL when it ends (see `runs.create`'s `webhook`); checked against DEVMIND_WEBHOOK_ALLOW. */
  webhook?: string | null | undefined;
  /**
   * Stateless crons only: "delete" deletes each tick's thread (and its run) once the run ended
   * and its webhook, if any, was settled; "keep" (default) keeps them.
   */
  onRunCompleted?: "keep" | "delete" | null | undefined;
}

/** What `runtime.crons.update` changes; absent fields stay (`null` clears `timezone` and `endTime`). */
export interface CronUpdateOptions {
  schedule?: string | undefined;
  timezone?: string | null | undefined;
  endTime?: string | Date | null | undefined;
  input?: unknown;
  config?: Record<string, unknown> | undefined;
  context?: unknown;
  /** Merged into the stored metadata. */
  metadata?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
  /** `null` removes the webhook. */
  webhook?: string | null | undefined;
  onRunCompleted?: "keep" | "delete" | undefined;
}

/**
 * `runtime.crons`: scheduled runs. Each due tick becomes an ordinary run of the cron's graph,
 * created by whichever worker (of any process, with that graph loaded) claims the tick first;
 * its `run.created` event carries `cron_id`. Ticks missed while no worker ran fire once when a
 * worker is back, not once per missed tick. Shapes map to the LangGraph SDK's `client.crons`.
 *
 * @example
 *   const cron = await runtime.crons.create({ schedule: "0 9 * * 1-5", timezone: "Europe/Paris", input: { messages: ["summarise the inbox"] } });
 *   await runtime.crons.update(cron.cron_id, { enabled: false });
 */
export interface CronsApi {
  /** Stores a cron; RUN_INPUT_INVALID naming the field for a bad schedule, time zone, end time or payload. */
  create(options: CronCreateOptions): Promise<CronRecord>;
  /** The cron; NOT_FOUND for an unknown id. */
  /** `access`: the caller's filter (AccessFilter): a cron it hides is NOT_FOUND. */
  get(cronId: string, access?: AccessFilter): Promise<CronRecord>;
  /** One page of crons matching the filters (default 10, newest first). */
  search(options?: CronSearchOptions): Promise<CronRecord[]>;
  count(options?: Pick<CronSearchOptions, "assistantId" | "threadId" | "enabled" | "metadata" | "access">): Promise<number>;
  /** Changes a cron; a new schedule, time zone, end time or re-enabling computes the next tick from now. */
  update(cronId: string, options: CronUpdateOptions, access?: AccessFilter): Promise<CronRecord>;
  /** Deletes the cron; the runs it created stay. NOT_FOUND for an unknown id. */
  delete(cronId: string, access?: AccessFilter): Promise<void>;
}

/** The graphs a runtime loaded, as the crons API checks them. */
export interface CronGraphs {
  check(graphId: string): void;
  hooks(graphId: string): Pick<GraphRunHooks, "checkInput">;
}

/** Checks a webhook URL against the runtime's allow-list (RUN_INPUT_INVALID otherwise). */
export type WebhookCheck = (webhook: string) => string;

/** `on_run_completed` of a cron: "delete" only for a stateless cron (a thread's cron keeps its thread). */
function checkOnRunCompleted(value: unknown, threadId: string | null): "keep" | "delete" | undefined {
  if (value === undefined || value === null) return undefined;
  if (value !== "keep" && value !== "delete") throw runInputError('on_run_completed must be "keep" or "delete"', { field: "on_run_completed" });
  if (value === "delete" && threadId !== null) throw runInputError('on_run_completed "delete" is for stateless crons only (a thread\'s cron keeps its thread)', { field: "on_run_completed" });
  return value;
}

/** Checks a tick's run create as `runs.create` would, so every stored cron makes valid runs. */
function checkPayload(graphs: CronGraphs, graphId: string, payload: CronPayload): CronPayload {
  try {
    graphs.hooks(graphId).checkInput?.(payload.input, { config: payload.config, context: payload.context });
    serializeRunInput(payload.input);
  } catch (error) {
    // every refusal names its field
    if (error instanceof DevmindError && error.details["field"] === undefined) throw runInputError(error.message, { field: "input" });
    throw error;
  }
  const config = checkRunGraphConfig(payload.config);
  if (payload.context !== undefined && payload.context !== null) serializeJson(payload.context, "context");
  const multitask = payload.multitask_strategy ?? "reject";
  if (multitask !== "reject" && multitask !== "enqueue") throw runInputError(`multitask must be "reject" or "enqueue", got ${JSON.stringify(multitask)}`, { field: "multitask" });
  return {
    input: payload.input ?? null,
    ...(Object.keys(config).length > 0 ? { config: config as Record<string, unknown> } : {}),
    ...(payload.context === undefined || payload.context === null ? {} : { context: payload.context }),
    multitask_strategy: multitask,
    ...(payload.webhook === undefined || payload.webhook === null ? {} : { webhook: payload.webhook }),
    ...(payload.on_run_completed === undefined ? {} : { on_run_completed: payload.on_run_completed }),
  };
}

function checkMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === undefined || metadata === null) return {};
  if (typeof metadata !== "object" || Array.isArray(metadata)) throw runInputError("metadata must be an object", { field: "metadata" });
  serializeJson(metadata, "metadata");
  return metadata as Record<string, unknown>;
}

function checkEnabled(enabled: unknown): boolean {
  if (enabled === undefined) return true;
  if (typeof enabled !== "boolean") throw runInputError("enabled must be a boolean", { field: "enabled" });
  return enabled;
}

/** Builds `runtime.crons` over the cron store and the runtime's graphs. */
export function createCronsApi(crons: CronStore, graphs: CronGraphs, checkWebhook: WebhookCheck): CronsApi {
  const webhookOf = (webhook: unknown): string | null => (webhook === undefined || webhook === null ? null : checkWebhook(webhook as string));
  return {
    async create(options) {
      const graphId = options.assistantId ?? GRAPHS_DEFAULTS.defaultGraphId;
      graphs.check(graphId);
      const schedule = checkCronSchedule(options.schedule, options.timezone);
      const endTime = checkEndTime(options.endTime);
      const threadId = options.threadId === undefined || options.threadId === null ? null : checkThreadId(options.threadId);
      const webhook = webhookOf(options.webhook);
      const onRunCompleted = checkOnRunCompleted(options.onRunCompleted, threadId);
      const payload = checkPayload(graphs, graphId, {
        input: options.input,
        ...(webhook === null ? {} : { webhook }),
        ...(onRunCompleted === undefined ? {} : { on_run_completed: onRunCompleted }),
        ...(options.config === undefined ? {} : { config: options.config }),
        ...(options.context === undefined ? {} : { context: options.context }),
        ...(options.multitask === undefined ? {} : { multitask_strategy: options.multitask }),
      });
      return crons.create({ assistantId: graphId, graphId, threadId, schedule, payload, metadata: checkMetadata(options.metadata), enabled: checkEnabled(options.enabled), endTime });
    },
    get: (cronId, access) => crons.get(cronId, access),
    search: (options = {}) => crons.search(options),
    count: (options = {}) => crons.count(options),
    update(cronId, options, access) {
      // checked before the row is locked where possible; the payload needs the stored graph
      const schedulePatch = options.schedule;
      const endTime = options.endTime === undefined ? undefined : checkEndTime(options.endTime);
      const metadata = options.metadata === undefined ? undefined : checkMetadata(options.metadata);
      if (options.enabled !== undefined) checkEnabled(options.enabled);
      const webhook = options.webhook === undefined ? undefined : webhookOf(options.webhook);
      return crons.update(cronId, (current) => {
        const onRunCompleted = options.onRunCompleted === undefined ? undefined : checkOnRunCompleted(options.onRunCompleted, current.thread_id);
        // `webhook: null` removes it; absent keeps the stored one
        const { webhook: storedWebhook, ...kept } = current.payload;
        const nextWebhook = webhook === undefined ? (storedWebhook ?? null) : webhook;
        const schedule = checkCronSchedule(schedulePatch ?? current.schedule, options.timezone === undefined ? current.timezone : options.timezone);
        const payload = checkPayload(graphs, current.assistant_id, {
          ...kept,
          ...(nextWebhook === null ? {} : { webhook: nextWebhook }),
          ...(onRunCompleted === undefined ? {} : { on_run_completed: onRunCompleted }),
          ...(options.input === undefined ? {} : { input: options.input }),
          ...(options.config === undefined ? {} : { config: options.config }),
          ...(options.context === undefined ? {} : { context: options.context }),
        });
        return {
          schedule,
          payload,
          metadata: metadata === undefined ? current.metadata : { ...current.metadata, ...metadata },
          enabled: options.enabled ?? current.enabled,
          endTime: endTime === undefined ? (current.end_time === null ? null : new Date(current.end_time)) : endTime,
        };
      }, access);
    },
    delete: (cronId, access) => crons.delete(cronId, access),
  };
}

/** The sort keys `search` accepts (the SDK's CronSortBy). */
export const CRON_SORT_KEYS: readonly CronSortBy[] = ["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"];
