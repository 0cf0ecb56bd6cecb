-- Scheduled runs (src/runtime/cron-store.ts): one row per cron. Every worker looks for due crons
-- (`next_run_at <= now()`, enabled, of a graph it loaded) with FOR UPDATE SKIP LOCKED and, in the
-- same transaction, creates the tick's run and moves `next_run_at` to the first tick after now:
-- one run per due tick across any number of workers, and a cron that missed ticks while no
-- worker ran fires once, not a burst. `thread_id` null: each tick runs on a new thread.
-- `next_run_at` null: the cron has no tick left (past `end_time`).
-- Applied with search_path set to the devmind schema.
CREATE TABLE crons (
  cron_id      uuid        PRIMARY KEY,
  assistant_id text        NOT NULL,
  graph_id     text        NOT NULL,
  thread_id    text,
  schedule     text        NOT NULL,
  timezone     text,
  -- the run create of every tick: input, config, context, multitask_strategy
  payload      jsonb       NOT NULL,
  metadata     jsonb       NOT NULL DEFAULT '{}'::jsonb,
  user_id      text,
  enabled      boolean     NOT NULL DEFAULT true,
  end_time     timestamptz,
  next_run_at  timestamptz,
  last_run_at  timestamptz,
  last_run_id  uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- the scheduler's due scan
CREATE INDEX crons_due ON crons (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;
-- search by assistant or thread, newest first
CREATE INDEX crons_by_assistant ON crons (assistant_id, created_at DESC);
CREATE INDEX crons_by_thread ON crons (thread_id, created_at DESC) WHERE thread_id IS NOT NULL;
