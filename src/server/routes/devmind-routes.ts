import { Hono } from "hono";
import { runListAccess, visibleRun } from "../custom-auth/run-access.js";
import { visibleThread } from "../custom-auth/thread-access.js";
import { RUNTIME_DEFAULTS, SERVER_DEFAULTS } from "../../constants.js";
import { isRunStatus } from "../../runtime/queue/run-record.js";
import type { AppDeps } from "../app.js";
import type { AuthVariables } from "../auth.js";
import { httpError } from "../http-errors.js";
import { hasErrorCode } from "../../errors.js";
import type { StreamPart } from "../run-stream.js";
import { sseResponse } from "../sse.js";
import { parseDecisions } from "../../vocabulary/decisions.js";
import { intQuery, readJson } from "../validation.js";
import { argsDigest, isHitlRequest } from "../../runtime/runtime.js";
import { runWire } from "../wire.js";

type Env = { Variables: AuthVariables };

/** MIME types a browser may show inline; anything else downloads (an HTML or SVG file never runs on this origin). */
const INLINE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"]);

/** `Content-Disposition` with an ASCII fallback name and the exact UTF-8 name (RFC 6266 / 5987). */
function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, "_").slice(0, 200) || "file";
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * devmind's own routes (CONTRACT section 8), used by the web page and scripts:
 *
 * - `GET /health` -> `{ok, status: "ok" | "degraded" | "down", database: "ok" | "slow" |
 *   "refusing_writes" | "unreachable", latency_ms, workers: [{state, since, last_error}]}` after one
 *   small real write: 200 when ok or degraded (slow, refusing writes, a worker waiting out a
 *   fault), 503 with `Retry-After` when down. Refusing writes: the probe was refused, or a write of
 *   this process was, for want of storage, within the last minute (a full disk may still take the
 *   probe's small write): `write_error {code, message}` and `last_write_failure_at` say so.
 * - `GET /runs?status=S&limit=N&before=RUN_ID` -> full run records, newest first (keyset page:
 *   `before` is the last run id of the previous page).
 * - `GET /runs/{id}` -> the full run record (CONTRACT section 3, with `input`, `limits`, `lease`)
 *   plus `assistant_id`.
 * - `GET /runs/{id}/events?after=SEQ&follow=1` -> SSE: each run event (CONTRACT section 6) as
 *   `event: <type>`, `data: <event JSON>`, `id: <seq>`; `model.delta {run_id, round, text}` live, without
 *   an id. Resumes after `Last-Event-ID` (or `after`). With follow (default) it ends when the run is
 *   terminal; `follow=0` sends the stored events and ends.
 * - `POST /runs/{id}/decisions {decisions: [...], reason?}` (CONTRACT section 5) -> the run record;
 *   the decisions are recorded with the caller's key name as principal, and once every waiting
 *   call is decided the run continues on a worker.
 * - `POST /runs/{id}/cancel` -> the run record (cancel requested, or cancelled if not running).
 * - `GET /approvals?status=pending&limit=N` -> `{approvals: [{run_id, thread_id, graph_id,
 *   created_at, updated_at, requests: [{name, args, description, tool_call_id, risk}],
 *   interrupts: [{id, value, ns}]}]}`: per interrupted run (newest paused first) the calls still
 *   waiting for a decision (HITL-shaped interrupts) and the other interrupts still waiting for a
 *   value (resumed with `command.resume` or `devmind resume`), from one query.
 * - `GET /graphs` -> `[{graph_id, reports_steps, reports_counters, reports_answer}]`: how the CLI
 *   shows each graph's runs (node timeline or model steps, counters, answer) when it goes through
 *   this server (a CLI command beside a `serve` / `dev` holding the embedded database).
 * - `GET /files/{id}` -> the attachment's bytes with its Content-Type, a Content-Disposition
 *   (inline for images and plain text, else attachment), `X-Content-Type-Options: nosniff` and a
 *   sandboxing CSP; 404 for an unknown id.
 */
export function devmindRoutes(deps: AppDeps): Hono<Env> {
  const { runtime } = deps;
  const app = new Hono<Env>();

  app.get("/health", async (c) => {
    const health = await runtime.health();
    const database = !health.database.reachable
      ? "unreachable"
      : health.database.writable === false
        ? "refusing_writes"
        : (health.database.latency_ms ?? 0) > RUNTIME_DEFAULTS.healthSlowMs
          ? "slow"
          : "ok";
    const refused = health.database.writable === false && health.database.error !== null ? { write_error: health.database.error, ...(health.database.last_write_failure_at === undefined ? {} : { last_write_failure_at: health.database.last_write_failure_at }) } : {};
    const body = { ok: health.status === "ok", status: health.status, database, latency_ms: health.database.latency_ms, ...refused, workers: health.workers };
    if (health.status !== "down") return c.json(body);
    c.header("Retry-After", String(SERVER_DEFAULTS.retryAfterSeconds));
    return c.json({ ...body, error: "DATABASE_UNREACHABLE", message: "the database did not answer" }, 503);
  });

  app.get("/runs", async (c) => {
    const status = c.req.query("status");
    if (status !== undefined && !isRunStatus(status)) throw httpError("REQUEST_INVALID", `unknown run status ${JSON.stringify(status.slice(0, 50))}`);
    const limit = intQuery(c.req.query("limit"), "limit", 50, 500) || 50;
    const before = c.req.query("before");
    const threadAccess = await runListAccess(c, "read");
    const runs = await runtime.runs.list({ status, limit, ...(before === undefined ? {} : { before }), ...(threadAccess === undefined ? {} : { threadAccess }) });
    return c.json(runs);
  });

  app.get("/runs/:id", async (c) => {
    const run = await visibleRun(c, runtime, "read", c.req.param("id"));
    return c.json(run);
  });

  app.get("/runs/:id/events", async (c) => {
    const run = await visibleRun(c, runtime, "read", c.req.param("id"));
    const header = c.req.header("last-event-id");
    const after = header !== undefined && /^\d{1,10}$/.test(header.trim()) ? Number(header.trim()) : intQuery(c.req.query("after"), "after", 0, 2_147_483_647);
    const follow = c.req.query("follow") !== "0" && c.req.query("follow") !== "false";
    return sseResponse(c, (signal) => eventParts(deps, run.run_id, after, follow, signal), { shutdown: deps.shutdown, heartbeatMs: deps.heartbeatMs });
  });

  app.post("/runs/:id/decisions", async (c) => {
    const body = parseDecisions(await readJson(c));
    await visibleRun(c, runtime, "update", c.req.param("id"));
    // a client's retry of one answer sends the same Idempotency-Key: a repeat whose first try
    // committed (its answer lost) gets that try's outcome, not RUN_CONFLICT (issue 37)
    const key = c.req.header("idempotency-key");
    const run = await runtime.runs.decide(c.req.param("id"), { decisions: body.decisions }, { principal: c.get("principal"), ...(body.reason === undefined ? {} : { reason: body.reason }), ...(key === undefined ? {} : { key }) });
    return c.json(runWire(run));
  });

  app.post("/runs/:id/cancel", async (c) => {
    await visibleRun(c, runtime, "update", c.req.param("id"));
    return c.json(runWire(await runtime.runs.cancel(c.req.param("id"))));
  });

  app.get("/graphs", (c) =>
    c.json(
      runtime.graphs.ids().map((id) => ({ graph_id: id, reports_steps: runtime.graphs.reportsSteps(id), reports_counters: runtime.graphs.reportsCounters(id), reports_answer: runtime.graphs.reportsAnswer(id) })),
    ),
  );

  app.get("/approvals", async (c) => {
    const status = c.req.query("status") ?? "pending";
    if (status !== "pending") throw httpError("REQUEST_INVALID", 'status must be "pending"');
    const limit = intQuery(c.req.query("limit"), "limit", 50, 500) || 50;
    // one query: every interrupted run with its stored interrupts and what was already answered
    const approvals = [];
    const threadAccess = await runListAccess(c, "read");
    for (const run of await runtime.runs.interrupted({ limit, threadAccess })) {
      const decided = new Set(run.decided_tool_calls);
      const answered = new Set(run.answered_interrupts);
      const open = (run.interrupts ?? []).filter((item) => !answered.has(item.id));
      // each with the digest of its arguments: a decision that sends it back holds only for exactly these
      const requests = open
        .flatMap((item) => (isHitlRequest(item.value) ? item.value.actionRequests : []))
        .filter((request) => request.tool_call_id === undefined || !decided.has(request.tool_call_id))
        .map((request) => ({ ...request, args_digest: argsDigest((request.args ?? {}) as object) }));
      const others = open.filter((item) => !isHitlRequest(item.value));
      if (requests.length === 0 && others.length === 0) continue;
      approvals.push({ run_id: run.run_id, thread_id: run.thread_id, graph_id: run.graph_id, created_at: run.created_at, updated_at: run.updated_at, requests, interrupts: others });
    }
    return c.json({ approvals });
  });

  app.get("/files/:id", async (c) => {
    const file = await runtime.files.get(c.req.param("id"));
    if (file === undefined) throw httpError("NOT_FOUND", "no such file");
    // with an auth handler a file is its thread's: another user's (or a thread-less one) is not found
    if (c.get("authHandler") !== undefined) {
      const threadId = file.info.thread_id;
      if (threadId === null) throw httpError("NOT_FOUND", "no such file");
      await visibleThread(c, runtime, "read", threadId).catch((error: unknown) => {
        throw hasErrorCode(error, "THREAD_NOT_FOUND") ? httpError("NOT_FOUND", "no such file") : error;
      });
    }
    const type = file.info.mime_type.toLowerCase();
    return c.body(new Uint8Array(file.bytes), 200, {
      "content-type": type,
      "content-length": String(file.bytes.length),
      "content-disposition": contentDisposition(INLINE_TYPES.has(type) ? "inline" : "attachment", file.info.name),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "cache-control": "private, max-age=3600",
    });
  });
  return app;
}

/** The run's events after `after` (then, following, new ones and live deltas) as SSE parts. */
async function* eventParts(deps: AppDeps, runId: string, after: number, follow: boolean, signal: AbortSignal): AsyncGenerator<StreamPart> {
  const { runtime } = deps;
  if (!follow) {
    for await (const event of runtime.runs.events(runId, { after })) yield { event: event.type, data: event, id: String(event.seq) };
    return;
  }
  const queue: StreamPart[] = [];
  const waiter: { wake: (() => void) | null } = { wake: null };
  let finished = false;
  let failure: unknown;
  const push = (part: StreamPart): void => {
    queue.push(part);
    waiter.wake?.();
  };
  const unlisten = await runtime.runs.live(runId, (signal) => signal.type === "model.delta" && push({ event: "model.delta", data: signal }), { events: false }).catch(() => null);
  const pump = (async () => {
    try {
      for await (const event of runtime.runs.events(runId, { after, follow: true, signal })) push({ event: event.type, data: event, id: String(event.seq) });
    } catch (error) {
      failure = error;
    } finally {
      finished = true;
      waiter.wake?.();
    }
  })();
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift() as StreamPart;
      if (failure !== undefined) throw failure;
      if (finished || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, RUNTIME_DEFAULTS.idlePollMs);
        function done(): void {
          clearTimeout(timer);
          waiter.wake = null;
          resolve();
        }
        waiter.wake = done;
        if (queue.length > 0 || finished) done();
      });
    }
  } finally {
    await unlisten?.().catch(() => undefined);
    await pump.catch(() => undefined);
  }
}
