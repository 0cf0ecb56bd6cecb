-- What happens after a run ends (src/runtime/run-completions.ts): one row per run that asked for
-- it, written in the transaction that created the run. Once the run is terminal, a worker claims
-- the row (FOR UPDATE SKIP LOCKED, then `locked_until` while it works outside the transaction),
-- POSTs the run to `webhook` with bounded retries (`attempts`, `next_attempt_at`), then deletes the
-- run's thread when `delete_thread` (a stateless cron's tick with on_run_completed "delete").
-- A worker that dies mid-delivery leaves the row to be claimed again after `locked_until`
-- (at-least-once delivery). `done_at` is set when nothing is left to do; rows of deleted runs go
-- with them.
-- Applied with search_path set to the devmind schema.
CREATE TABLE run_completions (
  run_id          uuid        PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  webhook         text,
  delete_thread   boolean     NOT NULL DEFAULT false,
  attempts        integer     NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until    timestamptz,
  delivered_at    timestamptz,
  -- the webhook's outcome: 'delivered', 'failed' (gave up), 'refused' (target not allowed at delivery)
  outcome         text        CHECK (outcome IS NULL OR outcome IN ('delivered', 'failed', 'refused')),
  last_error      text,
  done_at         timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (webhook IS NOT NULL OR delete_thread)
);

-- the delivery scan: open rows by due time
CREATE INDEX run_completions_open ON run_completions (next_attempt_at) WHERE done_at IS NULL;
