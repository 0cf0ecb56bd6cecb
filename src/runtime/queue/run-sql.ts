import { quoteIdentifier } from "../../db/identifiers.js";
import { statement } from "../../db/statement.js";
import type { Statement } from "../../db/types.js";
import { RUN_CANCELS_CHANNEL, RUNS_CHANNEL } from "../../constants.js";
import { RUN_ENDS_CHANNEL, RUN_EVENTS_CHANNEL } from "../events/event-sql.js";
import type { DevmindErrorCode } from "../../errors.js";

/** The error code `requeueExpired` gives a run whose lease expired on its last attempt (a constant, spelled into its SQL). */
const MAX_ATTEMPTS_CODE: DevmindErrorCode = "MAX_ATTEMPTS";

/** A timestamptz as ISO-8601 UTC text with milliseconds, the format of `Date.toISOString()`. */
function iso(expression: string): string {
  return `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The columns `runFromRow` reads, from the runs row aliased `a`. */
function runColumns(a: string): string {
  return `${a}.run_id::text AS run_id, ${a}.thread_id, ${a}.status, ${a}.stop_reason, ${a}.answer,
    ${a}.model_rounds, ${a}.tool_calls, ${a}.input_tokens, ${a}.output_tokens, ${a}.attempt,
    ${iso(`${a}.created_at`)} AS created_at, ${iso(`${a}.updated_at`)} AS updated_at, ${iso(`${a}.finished_at`)} AS finished_at,
    ${a}.error_code, ${a}.error_message, ${a}.input, ${a}.limits,
    ${a}.lease_owner, ${a}.lease_epoch, ${iso(`${a}.lease_expires_at`)} AS lease_expires_at,
    ${a}.cancel_requested_at IS NOT NULL AS cancel_requested, ${a}.active_ms,
    ${a}.graph_id, ${a}.assistant_id, ${a}.config, ${a}.context, ${a}.interrupts,
    ${a}.metadata, ${iso(`${a}.not_before`)} AS not_before, ${a}.interrupt_before, ${a}.interrupt_after, ${a}.checkpoint_id,
    ${a}.stream_mode, ${a}.error_name, ${a}.waiting, ${a}.resumes_run::text AS resumes_run, ${a}.unknown_outcomes, ${a}.trace_parent`;
}

/** `now() + $n milliseconds`. */
function leaseUntil(param: string): string {
  return `now() + ${param}::integer * interval '1 millisecond'`;
}

/**
 * Assignments storing a worker's counts from parameters `$first .. $first+4` (model rounds, tool
 * calls, input tokens, output tokens, active-ms delta); null parameters keep the stored values.
 */
function countsSet(first: number): string {
  return `model_rounds = COALESCE($${first}::integer, r.model_rounds),
    tool_calls = COALESCE($${first + 1}::integer, r.tool_calls),
    input_tokens = COALESCE($${first + 2}::bigint, r.input_tokens),
    output_tokens = COALESCE($${first + 3}::bigint, r.output_tokens),
    active_ms = r.active_ms + COALESCE($${first + 4}::bigint, 0)`;
}

/**
 * The CTE `queued` over `changed` (a run that just stopped): announces the next run queued on its
 * thread (multitask enqueue) to the workers of every process, since no slot looks again after a
 * run unless it knows of more work. Selected first, notified after: one notification at most.
 */
function queuedWake(runs: string): string {
  return `queued AS (
         SELECT pg_notify('${RUNS_CHANNEL}', n.run_id::text) AS woken FROM (
           SELECT q.run_id FROM ${runs} q, changed c
            WHERE q.thread_id = c.thread_id AND q.status = 'pending' AND q.run_id <> c.run_id::uuid
            ORDER BY q.created_at, q.run_id LIMIT 1) n
       )`;
}

/** `$1 run id, $2 epoch`: the fence every worker write of a run checks. */
const FENCE = `r.run_id = $1::uuid AND r.lease_epoch = $2::bigint AND r.status = 'running'`;

/** Optional filters of `list`, each a `$n` parameter when present. */
export interface RunListShape {
  status: boolean;
  waiting: boolean;
  thread: boolean;
  before: boolean;
  metadata: boolean;
  /** Only runs of threads whose metadata contains an AccessFilter. */
  threadAccess: boolean;
}

/**
 * Every statement of the run store for one schema (a validated identifier). Runs are the queue:
 * `claimNext` and `claim` take leases, and the fenced statements (`heartbeat`, `release`,
 * `endAtInterrupt`, `finish`) change a run only while `(lease_epoch, status = 'running')` still match.
 */
export function runSql(schema: string) {
  const s = quoteIdentifier(schema);
  const runs = `${s}.runs`;
  const listCache = new Map<string, Statement>();
  // a run may start when no other run of its thread is active and none is queued ahead of it
  const blockedBy = (o: string, p: string) =>
    `${o}.thread_id = ${p}.thread_id AND ${o}.run_id <> ${p}.run_id
       AND (${o}.status = 'running'
            OR (${p}.status = 'pending' AND ${o}.status = 'pending' AND (${o}.created_at, ${o}.run_id) < (${p}.created_at, ${p}.run_id)))`;
  return {
    /** $1 lock key: serialises creates on one thread until the transaction ends. */
    lockThread: statement("runs_lock_thread", `SELECT pg_advisory_xact_lock(hashtext($1::text))::text AS locked`),

    /**
     * $1 run id, $2 thread, $3 input json, $4 limits json, $5 enqueue, $6 graph id, $7 assistant id,
     * $8 config json, $9 context json (or null), $10 metadata json, $11 delay ms (or null), $12
     * interrupt_before text[], $13 interrupt_after text[], $14 checkpoint id, $15 stream modes text[],
     * $16 the waiting run it resumes (or null), $17 the W3C traceparent of the request creating it
     * (or null; a resume keeps the waiting run's, so the thread's runs stay one trace). Inserts a pending run unless the thread has a
     * pending or running run and $5 is false; the thread's waiting run (if any) no longer waits
     * (this run answers it, or starts the thread anew with input). With $16 the run continues the
     * waiting run's tool ledger, and is inserted only while $16 is still the run the thread waits
     * on (`resumed` false otherwise: another caller resumed it first). Always one row: the run's
     * columns (null when not inserted), the thread's oldest active run (`active_run_id`,
     * `active_status`), if any, and `resumed`. Run it after `lockThread` in the same transaction,
     * so its snapshot sees every earlier create.
     */
    create: statement(
      "runs_create",
      `WITH active AS (
         SELECT a.run_id, a.status FROM ${runs} a
          WHERE a.thread_id = $2::text AND a.status IN ('pending', 'running')
          ORDER BY a.created_at, a.run_id LIMIT 1
       ), resumed AS (
         SELECT w.run_id, COALESCE(w.ledger_run, w.run_id) AS ledger_run, w.trace_parent FROM ${runs} w
          WHERE w.run_id = $16::uuid AND w.thread_id = $2::text AND w.waiting
       ), inserted AS (
         INSERT INTO ${runs} AS r (run_id, thread_id, status, input, limits, created_at, updated_at, graph_id, assistant_id, config, context,
                                   metadata, not_before, interrupt_before, interrupt_after, checkpoint_id, stream_mode, resumes_run, ledger_run, trace_parent)
         SELECT $1::uuid, $2::text, 'pending', $3::jsonb, $4::jsonb, t.at, t.at, $6::text, $7::text, $8::jsonb, $9::jsonb,
                $10::jsonb, t.at + $11::integer * interval '1 millisecond', $12::text[], $13::text[], $14::text, $15::text[],
                $16::uuid, (SELECT ledger_run FROM resumed), COALESCE((SELECT trace_parent FROM resumed), $17::text)
           FROM (SELECT clock_timestamp() AS at) t
          WHERE ($5::boolean OR NOT EXISTS (SELECT 1 FROM active))
            AND ($16::uuid IS NULL OR EXISTS (SELECT 1 FROM resumed))
         RETURNING ${runColumns("r")}
       ), answered AS (
         UPDATE ${runs} AS w SET waiting = false, updated_at = now()
          WHERE w.thread_id = $2::text AND w.waiting AND EXISTS (SELECT 1 FROM inserted)
         RETURNING w.run_id
       )
       SELECT i.*, act.run_id::text AS active_run_id, act.status AS active_status,
              ($16::uuid IS NULL OR EXISTS (SELECT 1 FROM resumed)) AS resumable, (SELECT count(*) FROM answered)::integer AS answered
         FROM (SELECT 1) one LEFT JOIN inserted i ON true LEFT JOIN active act ON true`,
    ),

    /** $1 run id. */
    get: statement("runs_get", `SELECT ${runColumns("r")} FROM ${runs} r WHERE r.run_id = $1::uuid`),

    /** $1 run id: the checkpoint a run's interrupts were read at (null: none stored). */
    interruptCheckpoint: statement(
      "runs_interrupt_checkpoint",
      `SELECT r.interrupt_checkpoint FROM ${runs} r WHERE r.run_id = $1::uuid`,
    ),

    /** $1 limit, $2 access filter json of their threads (`{}`: any): waiting runs (their threads wait on them), most recently stopped first, with their decided tool calls and answered interrupts (open approvals and interrupts in one query). */
    listInterrupted: statement(
      "runs_list_interrupted",
      `SELECT ${runColumns("r")},
         ARRAY(SELECT d.tool_call_id FROM ${s}.run_decisions d WHERE d.run_id = r.run_id ORDER BY d.tool_call_id) AS decided_tool_calls,
         ARRAY(SELECT DISTINCT i FROM ${s}.run_resumes u, unnest(u.interrupt_ids) AS i WHERE u.run_id = r.run_id AND u.consumed_at IS NULL ORDER BY i) AS answered_interrupts
       FROM ${runs} r WHERE r.waiting
         AND ($2::jsonb = '{}'::jsonb OR EXISTS (SELECT 1 FROM ${s}.threads t WHERE t.thread_id = r.thread_id AND t.metadata @> $2::jsonb))
       ORDER BY r.updated_at DESC, r.run_id LIMIT $1::integer`,
    ),

    /** $1 run id: whether a cancel was requested. */
    isCancelRequested: statement("runs_cancel_requested", `SELECT r.cancel_requested_at IS NOT NULL AS requested FROM ${runs} r WHERE r.run_id = $1::uuid`),

    /**
     * A keyset page, newest first by (created_at, run_id). Parameters in order:
     * [status] [thread] [metadata] [before run id] [thread access filter] limit.
     */
    list(shape: RunListShape): Statement {
      const key = JSON.stringify(shape);
      const cached = listCache.get(key);
      if (cached !== undefined) return cached;
      const where: string[] = [];
      let n = 0;
      const next = (): string => `$${(n += 1)}`;
      if (shape.status) where.push(`r.status = ${next()}::text`);
      if (shape.waiting) where.push(`r.waiting`);
      if (shape.thread) where.push(`r.thread_id = ${next()}::text`);
      if (shape.metadata) where.push(`r.metadata @> ${next()}::jsonb`);
      if (shape.before) where.push(`(r.created_at, r.run_id) < (SELECT c.created_at, c.run_id FROM ${runs} c WHERE c.run_id = ${next()}::uuid)`);
      if (shape.threadAccess) where.push(`EXISTS (SELECT 1 FROM ${s}.threads t WHERE t.thread_id = r.thread_id AND t.metadata @> ${next()}::jsonb)`);
      const limit = next();
      const built = statement(
        "runs_list",
        `SELECT ${runColumns("r")} FROM ${runs} r
          ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY r.created_at DESC, r.run_id DESC
          LIMIT ${limit}::integer`,
      );
      listCache.set(key, built);
      return built;
    },

    /**
     * $1 run id: deletes the run (its events, decisions, ledger and resumes cascade) unless it is
     * running, or its thread waits on it, or a later run continues its ledger. Returns `deleted`,
     * and the status it has when it was not deleted.
     */
    delete: statement(
      "runs_delete",
      `WITH gone AS (
         DELETE FROM ${runs} r WHERE r.run_id = $1::uuid AND r.status <> 'running' AND NOT r.waiting
            AND NOT EXISTS (SELECT 1 FROM ${runs} l WHERE l.ledger_run = r.run_id AND l.run_id <> r.run_id AND l.status IN ('pending', 'running'))
         RETURNING r.run_id
       )
       SELECT EXISTS (SELECT 1 FROM gone) AS deleted, (SELECT c.status FROM ${runs} c WHERE c.run_id = $1::uuid) AS status`,
    ),

    /** $1 run id: whether the run exists (a `list` cursor check). */
    exists: statement("runs_exists", `SELECT 1 AS found FROM ${runs} r WHERE r.run_id = $1::uuid`),

    /**
     * $1 owner, $2 lease ms, $3 graph ids. Claims the oldest pending run of one of these graphs
     * that may start (no active run on its thread, none queued ahead of it); skips rows other
     * claimers hold. Also returns `no_open_resumes`: no open resume is stored for the run (nor
     * for the waiting run it resumes), so its executor need not read them; and `more_pending`:
     * another run of these graphs was pending and due as the claim saw it (the claimer looks
     * again after this run; runs announced later wake it by NOTIFY). A concurrent claim on the
     * same thread can still make this fail with 23505 (the one-active-per-thread index).
     */
    claimNext: statement(
      "runs_claim_next",
      `UPDATE ${runs} AS r
          SET status = 'running', lease_owner = $1::text, lease_epoch = r.lease_epoch + 1,
              lease_expires_at = ${leaseUntil("$2")}, attempt = r.attempt + 1, updated_at = now()
        WHERE r.run_id = (
                SELECT p.run_id FROM ${runs} p
                 WHERE p.status = 'pending' AND p.graph_id = ANY($3::text[]) AND (p.not_before IS NULL OR p.not_before <= now())
                   AND NOT EXISTS (SELECT 1 FROM ${runs} o WHERE ${blockedBy("o", "p")})
                 ORDER BY p.created_at, p.run_id
                 LIMIT 1
                   FOR UPDATE SKIP LOCKED)
          AND r.status = 'pending'
       RETURNING ${runColumns("r")},
         NOT EXISTS (SELECT 1 FROM ${s}.run_resumes u WHERE u.run_id IN (r.run_id, r.resumes_run) AND u.consumed_at IS NULL) AS no_open_resumes,
         EXISTS (SELECT 1 FROM ${runs} q WHERE q.status = 'pending' AND q.run_id <> r.run_id AND q.graph_id = ANY($3::text[])
                    AND (q.not_before IS NULL OR q.not_before <= now())) AS more_pending`,
    ),

    /**
     * $1 run id, $2 owner, $3 lease ms, $4 graph ids the claimer runs (null: any). Claims this
     * run if it is pending, its graph is one of $4 and
     * nothing on its thread is ahead of it. Always one row: the run's columns (null when not
     * claimed), `current_status` and `current_graph` (null: no such run) and the blocking run
     * (`blocker_id`, `blocker_status`), if any.
     */
    claim: statement(
      "runs_claim",
      `WITH cur AS (
         SELECT c.run_id, c.thread_id, c.status, c.created_at, c.graph_id FROM ${runs} c WHERE c.run_id = $1::uuid
       ), blocker AS (
         SELECT o.run_id, o.status FROM ${runs} o, cur WHERE ${blockedBy("o", "cur")}
          ORDER BY o.created_at, o.run_id LIMIT 1
       ), claimed AS (
         UPDATE ${runs} AS r
            SET status = 'running', lease_owner = $2::text, lease_epoch = r.lease_epoch + 1,
                lease_expires_at = ${leaseUntil("$3")}, attempt = r.attempt + 1, updated_at = now()
          WHERE r.run_id = $1::uuid
            AND r.status = 'pending'
            AND ($4::text[] IS NULL OR r.graph_id = ANY($4::text[]))
            AND NOT EXISTS (SELECT 1 FROM blocker)
         RETURNING ${runColumns("r")}
       )
       SELECT cl.*, cur.status AS current_status, cur.graph_id AS current_graph, b.run_id::text AS blocker_id, b.status AS blocker_status
         FROM (SELECT 1) one LEFT JOIN claimed cl ON true LEFT JOIN cur ON true LEFT JOIN blocker b ON true`,
    ),

    /**
     * $1 owner: runs this owner claimed without learning it (the claim committed, its answer was
     * lost with the connection) go back to the queue, and the attempt the claim counted is given
     * back, since nothing of it ran. Only for an owner that holds no run at that moment.
     */
    releaseLostClaims: statement(
      "runs_release_lost_claims",
      `UPDATE ${runs} AS r
          SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, attempt = GREATEST(0, r.attempt - 1), updated_at = now()
        WHERE r.lease_owner = $1::text AND r.status = 'running'
       RETURNING r.run_id::text AS run_id, pg_notify('${RUNS_CHANNEL}', r.run_id::text)::text AS woken`,
    ),

    /** $1 run id, $2 epoch, $3 lease ms: extends a held lease. */
    heartbeat: statement(
      "runs_heartbeat",
      `UPDATE ${runs} AS r SET lease_expires_at = ${leaseUntil("$3")} WHERE ${FENCE} RETURNING r.run_id, r.cancel_requested_at IS NOT NULL AS cancel_requested`,
    ),

    /** $1 run id, $2 epoch, $3..$7 counts or nulls: back to pending, lease cleared, attempt kept. */
    release: statement(
      "runs_release",
      `UPDATE ${runs} AS r
          SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(), ${countsSet(3)}
        WHERE ${FENCE} RETURNING r.run_id`,
    ),

    /**
     * $1 run id, $2 epoch, $3..$7 counts, $8 interrupts json (`[]`: a breakpoint), $9 checkpoint
     * id: the run ends at an interrupt — success, stop reason `interrupt`, its thread waits on it
     * (`waiting`), lease cleared; the resumes it ran with are used up. Returns the run's columns.
     */
    endAtInterrupt: statement(
      "runs_end_at_interrupt",
      `WITH changed AS (
         UPDATE ${runs} AS r
            SET status = 'success', stop_reason = 'interrupt', waiting = true, answer = NULL, error_code = NULL, error_message = NULL,
                lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now(), ${countsSet(3)},
                interrupts = $8::jsonb, interrupt_checkpoint = $9::text
          WHERE ${FENCE} RETURNING ${runColumns("r")}, r.resumes_run AS resumed_id
       ), used AS (
         UPDATE ${s}.run_resumes AS u SET consumed_at = clock_timestamp()
           FROM changed c WHERE u.run_id IN (c.run_id::uuid, c.resumed_id) AND u.consumed_at IS NULL
         RETURNING u.run_id
       ), ${queuedWake(runs)}
       SELECT c.*, (SELECT count(*) FROM used)::integer AS used, (SELECT count(*) FROM queued)::integer AS queued FROM changed c`,
    ),

    /**
     * $1 run id, $2 epoch, $3 status, $4 stop reason, $5 answer, $6 error code, $7 error message,
     * $8..$12 counts, $13 the error's class name: the run ends. Returns the ended run's columns (no row: the fence did not hold).
     */
    finish: statement(
      "runs_finish",
      `WITH changed AS (
         UPDATE ${runs} AS r
            SET status = $3::text, stop_reason = $4::text, answer = $5::text, error_code = $6::text, error_message = $7::text, error_name = $13::text,
                lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now(), ${countsSet(8)},
                interrupts = NULL, interrupt_checkpoint = NULL
          WHERE ${FENCE} RETURNING ${runColumns("r")}, r.resumes_run AS resumed_id
       ), used AS (
         UPDATE ${s}.run_resumes AS u SET consumed_at = clock_timestamp()
           FROM changed c WHERE u.run_id IN (c.run_id::uuid, c.resumed_id) AND u.consumed_at IS NULL
         RETURNING u.run_id
       ), ${queuedWake(runs)}
       SELECT c.*, (SELECT count(*) FROM used)::integer AS used, (SELECT count(*) FROM queued)::integer AS queued FROM changed c`,
    ),

    /**
     * $1 max attempts. Every running run whose lease lapsed: interrupted if a cancel was requested,
     * else error / max_attempts once `attempt >= $1`, else back to pending. Returns (run_id, status).
     * A run ended here gets its final event in the same statement: $2 the `run.cancelled` event,
     * $3 the `run.failed` one, as JSON `{type, ...fields}` built in code (so they are typed), its
     * `message` replaced by the run's error message,
     * since no worker is left to write it; $4 run ids left out (the caller executes them); every changed run is announced on RUNS_CHANNEL (so idle
     * workers in every process claim a re-queued run, or the run queued behind an ended one, at
     * once) and an ended one on RUN_EVENTS_CHANNEL (followers) and RUN_ENDS_CHANNEL (waiters).
     */
    requeueExpired: statement(
      "runs_requeue_expired",
      `WITH expired AS (
         SELECT e.run_id FROM ${runs} e
          WHERE e.status = 'running' AND e.lease_expires_at < now() AND e.run_id <> ALL($4::uuid[])
            FOR UPDATE SKIP LOCKED
       ), changed AS (
         UPDATE ${runs} AS r
            SET status = CASE WHEN r.cancel_requested_at IS NOT NULL THEN 'interrupted'
                              WHEN r.attempt >= $1::integer THEN 'error' ELSE 'pending' END,
                stop_reason = CASE WHEN r.cancel_requested_at IS NOT NULL THEN 'cancelled'
                                   WHEN r.attempt >= $1::integer THEN 'max_attempts' ELSE r.stop_reason END,
                error_code = CASE WHEN r.cancel_requested_at IS NULL AND r.attempt >= $1::integer THEN '${MAX_ATTEMPTS_CODE}' ELSE r.error_code END,
                error_message = CASE WHEN r.cancel_requested_at IS NULL AND r.attempt >= $1::integer
                                     THEN 'the run''s lease expired on attempt ' || r.attempt || ' of ' || $1::integer
                                          || ' (DEVMIND_MAX_ATTEMPTS): its worker died or stalled every time'
                                     ELSE r.error_message END,
                finished_at = CASE WHEN r.cancel_requested_at IS NOT NULL OR r.attempt >= $1::integer THEN now() ELSE NULL END,
                lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
           FROM expired
          WHERE r.run_id = expired.run_id
         RETURNING r.run_id, r.status, r.error_message
       ), logged AS (
         INSERT INTO ${s}.run_events (run_id, seq, type, data)
         SELECT c.run_id, COALESCE((SELECT max(e.seq) FROM ${s}.run_events e WHERE e.run_id = c.run_id), 0) + 1,
                ended.event ->> 'type',
                CASE WHEN c.status = 'interrupted' THEN ended.event - 'type'
                     ELSE (ended.event - 'type') || jsonb_build_object('message', c.error_message) END
           FROM changed c
          CROSS JOIN LATERAL (SELECT CASE WHEN c.status = 'interrupted' THEN $2::jsonb ELSE $3::jsonb END AS event) AS ended
          WHERE c.status <> 'pending'
         RETURNING run_id
       )
       SELECT c.run_id::text AS run_id, c.status,
              pg_notify('${RUNS_CHANNEL}', c.run_id::text)::text AS woken,
              CASE WHEN c.status <> 'pending' THEN pg_notify('${RUN_EVENTS_CHANNEL}', c.run_id::text)::text END AS announced,
              CASE WHEN c.status <> 'pending' THEN pg_notify('${RUN_ENDS_CHANNEL}', c.run_id::text)::text END AS ended
         FROM changed c ORDER BY c.run_id::text`,
    ),

    /**
     * Milliseconds until the earliest lease of a running run lapses (0 when one already has), on
     * the database clock; null when nothing is running. Reads the partial index on leases.
     */
    nextLeaseExpiry: statement(
      "runs_next_lease_expiry",
      `SELECT (CASE WHEN min(r.lease_expires_at) IS NULL THEN NULL
                    ELSE GREATEST(0, ceil(extract(epoch FROM min(r.lease_expires_at) - now()) * 1000)) END)::float8 AS ms
         FROM ${runs} r WHERE r.status = 'running'`,
    ),

    /**
     * $1 prober, $2 payload: one small real write (a new row version), to learn whether the
     * database stores data again after it refused to (disk full, read-only, permission revoked).
     */
    probeWrite: statement(
      "health_probe_write",
      `INSERT INTO ${s}.health_probes (prober, probed_at, payload) VALUES ($1::text, now(), $2::text)
       ON CONFLICT (prober) DO UPDATE SET probed_at = excluded.probed_at, payload = excluded.payload
       RETURNING prober`,
    ),

    /**
     * $1 run id. Pending: interrupted (cancelled) now. Running without a request yet: the request
     * is recorded for its worker and announced on RUN_CANCELS_CHANNEL (on commit). Always one row: the run's columns (null when nothing changed)
     * and `current_status` / `current_cancel_requested` as read before (null status: no such run).
     */
    requestCancel: statement(
      "runs_request_cancel",
      `WITH cur AS (
         SELECT c.status, c.cancel_requested_at IS NOT NULL AS cancel_requested FROM ${runs} c WHERE c.run_id = $1::uuid
       ), changed AS (
         UPDATE ${runs} AS r
            SET status = CASE WHEN r.status = 'pending' THEN 'interrupted' ELSE r.status END,
                stop_reason = CASE WHEN r.status = 'pending' THEN 'cancelled' ELSE r.stop_reason END,
                finished_at = CASE WHEN r.status = 'pending' THEN now() ELSE r.finished_at END,
                cancel_requested_at = COALESCE(r.cancel_requested_at, now()),
                updated_at = now()
          WHERE r.run_id = $1::uuid
            AND (r.status = 'pending' OR (r.status = 'running' AND r.cancel_requested_at IS NULL))
         RETURNING ${runColumns("r")}
       )
       SELECT ch.*, cur.status AS current_status, cur.cancel_requested AS current_cancel_requested,
              CASE WHEN ch.status = 'running' THEN pg_notify('${RUN_CANCELS_CHANNEL}', ch.run_id::text)::text END AS cancel_announced
         FROM (SELECT 1) one LEFT JOIN changed ch ON true LEFT JOIN cur ON true`,
    ),
  } as const;
}

/** The statements of `runSql`, for one schema. */
export type RunSql = ReturnType<typeof runSql>;
