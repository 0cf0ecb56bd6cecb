import { Hono, type Context } from "hono";
import { authorize, refuseForgedMetadata } from "../custom-auth/authorize.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import { z } from "zod";
import { CRON_DEFAULTS, WEBHOOK_DEFAULTS } from "../../constants.js";
import type { CronRecord } from "../../runtime/runtime.js";
import type { AuthVariables } from "../auth.js";
import type { AppDeps } from "../app.js";
import { readBody } from "../validation.js";
import { graphOfAssistant } from "../assistants.js";

const metadata = z.record(z.string(), z.unknown());
const graphConfig = z.record(z.string(), z.unknown());
const SORT_BY = ["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"] as const;
const SELECT_FIELDS = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "end_time",
  "schedule",
  "created_at",
  "updated_at",
  "user_id",
  "payload",
  "next_run_date",
  "metadata",
  "now",
  "timezone",
  "enabled",
  "on_run_completed",
] as const;

/**
 * `POST /runs/crons` and `POST /threads/{id}/runs/crons` (the SDK's `client.crons.create` /
 * `createForThread`). Strict: LangGraph options devmind does not implement (`interrupt_before`,
 * `stream_mode`, `durability`, ...) are refused with 422 naming them, never accepted and ignored.
 * `webhook` is called when each tick's run ends (422 for a target outside DEVMIND_WEBHOOK_ALLOW);
 * `on_run_completed` "delete" deletes a stateless tick's thread after its run ("keep" is the default).
 */
const CronCreateBody = z
  .object({
    assistant_id: z.string().min(1).max(256),
    schedule: z.string().min(1).max(CRON_DEFAULTS.maxScheduleChars),
    input: z.unknown().optional(),
    config: graphConfig.nullish(),
    context: z.unknown().optional(),
    metadata: metadata.nullish(),
    multitask_strategy: z.enum(["reject", "enqueue"]).nullish(),
    enabled: z.boolean().nullish(),
    timezone: z.string().max(CRON_DEFAULTS.maxTimezoneChars).nullish(),
    end_time: z.string().max(64).nullish(),
    webhook: z.string().max(WEBHOOK_DEFAULTS.maxUrlChars).nullish(),
    on_run_completed: z.enum(["keep", "delete"]).nullish(),
  })
  .strict();

/** `PATCH /runs/crons/{id}` (`client.crons.update`): absent fields stay; `metadata` is merged. */
const CronPatchBody = z
  .object({
    schedule: z.string().min(1).max(CRON_DEFAULTS.maxScheduleChars).optional(),
    timezone: z.string().max(CRON_DEFAULTS.maxTimezoneChars).nullish(),
    end_time: z.string().max(64).nullish(),
    input: z.unknown().optional(),
    config: graphConfig.optional(),
    context: z.unknown().optional(),
    metadata: metadata.optional(),
    enabled: z.boolean().optional(),
    webhook: z.string().max(WEBHOOK_DEFAULTS.maxUrlChars).nullish(),
    on_run_completed: z.enum(["keep", "delete"]).optional(),
  })
  .strict();

const filters = {
  assistant_id: z.string().min(1).max(256).nullish(),
  thread_id: z.string().min(1).max(256).nullish(),
  metadata: metadata.nullish(),
};
/** `POST /runs/crons/search` (`client.crons.search`). */
const CronSearchBody = z
  .object({
    ...filters,
    enabled: z.boolean().nullish(),
    limit: z.number().int().min(1).max(CRON_DEFAULTS.maxSearchLimit).nullish(),
    offset: z.number().int().min(0).max(1_000_000).nullish(),
    sort_by: z.enum(SORT_BY).nullish(),
    sort_order: z.enum(["asc", "desc"]).nullish(),
    select: z.array(z.enum(SELECT_FIELDS)).max(SELECT_FIELDS.length).nullish(),
  })
  .strict();
/** `POST /runs/crons/count` (`client.crons.count`). */
const CronCountBody = z.object(filters).strict();

/** A cron as LangGraph's API returns it (the SDK's `Cron`), with devmind's `last_run_date` / `last_run_id`. */
function cronWire(cron: CronRecord, select?: readonly string[] | null): Record<string, unknown> {
  const wire: Record<string, unknown> = { ...cron, now: new Date().toISOString() };
  if (select === undefined || select === null || select.length === 0) return wire;
  return Object.fromEntries(select.map((field) => [field, wire[field] ?? null]));
}

/**
 * LangGraph Platform's cron routes as the SDK's `client.crons` calls them, over
 * `runtime.crons`. Validation errors are 422 (`REQUEST_INVALID` for the body's shape,
 * `RUN_INPUT_INVALID` naming the field for schedules, time zones, end times and payloads); an
 * unknown assistant or cron is 404.
 */
export function cronRoutes(deps: AppDeps): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  const { runtime } = deps;

  /** The graph an assistant id names: a loaded graph's id, or its default assistant's uuid. */
  const graphOf = (assistantId: string): string => graphOfAssistant(runtime, assistantId);

  const create = async (body: z.infer<typeof CronCreateBody>, threadId: string | undefined) =>
    runtime.crons.create({
      assistantId: graphOf(body.assistant_id),
      ...(threadId === undefined ? {} : { threadId }),
      schedule: body.schedule,
      timezone: body.timezone ?? null,
      endTime: body.end_time ?? null,
      input: body.input ?? null,
      ...(body.config === undefined || body.config === null ? {} : { config: body.config }),
      ...(body.context === undefined || body.context === null ? {} : { context: body.context }),
      ...(body.metadata === undefined || body.metadata === null ? {} : { metadata: body.metadata }),
      ...(body.multitask_strategy === undefined || body.multitask_strategy === null ? {} : { multitask: body.multitask_strategy }),
      ...(body.enabled === undefined || body.enabled === null ? {} : { enabled: body.enabled }),
      ...(body.webhook === undefined || body.webhook === null ? {} : { webhook: body.webhook }),
      ...(body.on_run_completed === undefined || body.on_run_completed === null ? {} : { onRunCompleted: body.on_run_completed }),
    });

  /**
   * A cron body as the auth handler leaves it (`crons:create` may add owner metadata; a body
   * naming someone else in a filtered key is 403), with the user in its runs' configurable.
   */
  const authorizedCreate = async (c: Context<{ Variables: AuthVariables }>, read: z.infer<typeof CronCreateBody>, threadId: string | undefined): Promise<z.infer<typeof CronCreateBody>> => {
    if (c.get("authHandler") === undefined) return read;
    const value = { schedule: read.schedule, thread_id: threadId, payload: { input: read.input, config: read.config, context: read.context }, metadata: { ...(read.metadata ?? {}) } as Record<string, unknown>, end_time: read.end_time ?? undefined, user_id: c.get("principal") };
    const { filter } = await authorize(c, "crons:create", value);
    refuseForgedMetadata(value.metadata, filter);
    const config = (read.config ?? {}) as Record<string, unknown>;
    const auth = c.get("auth");
    const configurable = { ...((config["configurable"] as Record<string, unknown> | undefined) ?? {}), ...(auth === undefined ? {} : { langgraph_auth_user: JSON.parse(JSON.stringify(auth.user)) as unknown, langgraph_auth_user_id: auth.user.identity, langgraph_auth_permissions: [...auth.scopes] }) };
    return { ...read, metadata: value.metadata, config: { ...config, configurable } as typeof read.config };
  };

  app.post("/runs/crons", async (c) => c.json(cronWire(await create(await authorizedCreate(c, await readBody(c, CronCreateBody), undefined), undefined))));

  app.post("/threads/:id/runs/crons", async (c) => {
    const threadId = c.req.param("id");
    const body = await readBody(c, CronCreateBody);
    // the thread must exist and be the caller's, as for a run on it (THREAD_NOT_FOUND, 404)
    await visibleThread(c, runtime, "update", threadId);
    return c.json(cronWire(await create(await authorizedCreate(c, body, threadId), threadId)));
  });

  app.post("/runs/crons/search", async (c) => {
    const body = await readBody(c, CronSearchBody);
    const { filter } = await authorize(c, "crons:search", { assistant_id: body.assistant_id ?? undefined, thread_id: body.thread_id ?? undefined, limit: body.limit ?? undefined, offset: body.offset ?? undefined });
    const crons = await runtime.crons.search({
      access: filter,
      assistantId: body.assistant_id ?? undefined,
      threadId: body.thread_id ?? undefined,
      enabled: body.enabled ?? undefined,
      metadata: body.metadata ?? undefined,
      limit: body.limit ?? undefined,
      offset: body.offset ?? undefined,
      sortBy: body.sort_by ?? undefined,
      sortOrder: body.sort_order ?? undefined,
    });
    return c.json(crons.map((cron) => cronWire(cron, body.select)));
  });

  app.post("/runs/crons/count", async (c) => {
    const body = await readBody(c, CronCountBody);
    const { filter } = await authorize(c, "crons:search", { assistant_id: body.assistant_id ?? undefined, thread_id: body.thread_id ?? undefined });
    return c.json(await runtime.crons.count({ assistantId: body.assistant_id ?? undefined, threadId: body.thread_id ?? undefined, metadata: body.metadata ?? undefined, access: filter }));
  });

  app.get("/runs/crons/:cron_id", async (c) => {
    const { filter } = await authorize(c, "crons:read", { cron_id: c.req.param("cron_id") });
    return c.json(cronWire(await runtime.crons.get(c.req.param("cron_id"), filter)));
  });

  app.patch("/runs/crons/:cron_id", async (c) => {
    const body = await readBody(c, CronPatchBody);
    const { filter, value } = await authorize(c, "crons:update", { cron_id: c.req.param("cron_id"), schedule: body.schedule ?? undefined, payload: { input: body.input, config: body.config, context: body.context }, metadata: body.metadata === undefined ? undefined : ({ ...body.metadata } as Record<string, unknown>) });
    refuseForgedMetadata(value.metadata, filter);
    if (value.metadata !== undefined) body.metadata = value.metadata;
    const updated = await runtime.crons.update(c.req.param("cron_id"), {
      ...(body.schedule === undefined ? {} : { schedule: body.schedule }),
      ...(body.timezone === undefined ? {} : { timezone: body.timezone }),
      ...(body.end_time === undefined ? {} : { endTime: body.end_time }),
      ...(body.input === undefined ? {} : { input: body.input }),
      ...(body.config === undefined ? {} : { config: body.config }),
      ...(body.context === undefined ? {} : { context: body.context }),
      ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
      ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
      ...(body.on_run_completed === undefined ? {} : { onRunCompleted: body.on_run_completed }),
    }, filter);
    return c.json(cronWire(updated));
  });

  app.delete("/runs/crons/:cron_id", async (c) => {
    const { filter } = await authorize(c, "crons:delete", { cron_id: c.req.param("cron_id") });
    await runtime.crons.delete(c.req.param("cron_id"), filter);
    return c.body(null, 204);
  });
  return app;
}
