-- Runs, their events, approval decisions and the tool-call ledger (src/runtime).
-- Applied with search_path set to the devmind schema.

-- A run is one task on a thread, and the queue workers claim from.
CREATE TABLE runs (
  run_id              uuid        PRIMARY KEY,
  thread_id           text        COLLATE "C" NOT NULL,
  status              text        NOT NULL
    CHECK (status IN ('pending', 'running', 'interrupted', 'success', 'error', 'timeout', 'cancelled')),
  stop_reason         text
    CHECK (stop_reason IS NULL OR stop_reason IN ('completed', 'max_model_rounds', 'max_tool_calls', 'token_budget',
      'deadline', 'no_progress', 'model_failed', 'model_timeout', 'model_truncated', 'max_attempts', 'cancelled', 'internal_error')),
  -- what the run was asked: {messages: [...]} as LangChain message dicts
  input               jsonb       NOT NULL,
  -- partial AgentLimits overriding the defaults for this run
  limits              jsonb       NOT NULL DEFAULT '{}',
  answer              text,
  model_rounds        integer     NOT NULL DEFAULT 0,
  tool_calls          integer     NOT NULL DEFAULT 0,
  input_tokens        bigint      NOT NULL DEFAULT 0,
  output_tokens       bigint      NOT NULL DEFAULT 0,
  error_code          text,
  error_message       text,
  -- times the run was claimed; past DEVMIND_MAX_ATTEMPTS it ends as max_attempts
  attempt             integer     NOT NULL DEFAULT 0,
  -- the lease: who runs it, until when, and the fencing token every write of the run checks
  lease_owner         text,
  lease_epoch         bigint      NOT NULL DEFAULT 0,
  lease_expires_at    timestamptz,
  -- wall-clock time spent running, across attempts and resumes (approval waits excluded)
  active_ms           bigint      NOT NULL DEFAULT 0,
  cancel_requested_at timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  finished_at         timestamptz,
  CHECK ((status = 'running') = (lease_owner IS NOT NULL))
);

-- at most one run per thread is running or waiting for approval: enforced here, not by callers
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id) WHERE status IN ('running', 'interrupted');
-- the queue: oldest pending first; expired leases found by time
CREATE INDEX runs_pending ON runs (created_at, run_id) WHERE status = 'pending';
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX runs_by_thread ON runs (thread_id, created_at);
CREATE INDEX runs_by_status ON runs (status, created_at DESC, run_id DESC);
-- the unfiltered list, newest first
CREATE INDEX runs_by_created ON runs (created_at DESC, run_id DESC);

-- Run events (CONTRACT section 6), ordered per run by seq.
CREATE TABLE run_events (
  run_id  uuid        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq     integer     NOT NULL,
  type    text        NOT NULL,
  at      timestamptz NOT NULL DEFAULT now(),
  data    jsonb       NOT NULL DEFAULT '{}',
  PRIMARY KEY (run_id, seq)
);

-- Every human decision on a tool call, with who, when, why, and the digest of the exact
-- arguments that may run.
CREATE TABLE run_decisions (
  run_id       uuid        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  tool_call_id text        COLLATE "C" NOT NULL,
  tool         text        NOT NULL,
  decision     text        NOT NULL CHECK (decision IN ('approve', 'edit', 'reject')),
  args         jsonb,
  args_digest  text,
  principal    text        NOT NULL,
  reason       text,
  decided_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, tool_call_id)
);

-- The tool-call ledger: a row per call, started -> succeeded | failed. On re-entry a finished call
-- returns its stored result; a started one re-runs only if the tool is idempotent.
CREATE TABLE tool_ledger (
  run_id       uuid        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  tool_call_id text        COLLATE "C" NOT NULL,
  tool         text        NOT NULL,
  args_digest  text        NOT NULL,
  status       text        NOT NULL CHECK (status IN ('started', 'succeeded', 'failed')),
  result       jsonb,
  attempts     integer     NOT NULL DEFAULT 1,
  lease_epoch  bigint      NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  PRIMARY KEY (run_id, tool_call_id)
);
