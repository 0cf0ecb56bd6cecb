-- Runs of any LangGraph graph (CONTRACT section 10): which graph a run belongs to, the run's own
-- configurable / context, the interrupts a paused run waits on, and every resume with its audit.
-- Applied with search_path set to the devmind schema.

-- the graph (and its assistant) a run executes; runs from before this migration are the agent's
ALTER TABLE runs ADD COLUMN graph_id text COLLATE "C" NOT NULL DEFAULT 'agent';
ALTER TABLE runs ADD COLUMN assistant_id text COLLATE "C" NOT NULL DEFAULT 'agent';
-- the run's config for the graph: {configurable?, recursion_limit?, tags?} (JSON), and its context
ALTER TABLE runs ADD COLUMN config jsonb NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN context jsonb;
-- while interrupted: [{id, value, ns}] as the graph raised them, and the checkpoint they were read at
ALTER TABLE runs ADD COLUMN interrupts jsonb;
ALTER TABLE runs ADD COLUMN interrupt_checkpoint text;

-- LangGraph's recursion limit is a stop reason of its own
ALTER TABLE runs DROP CONSTRAINT runs_stop_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_stop_reason_check
  CHECK (stop_reason IS NULL OR stop_reason IN ('completed', 'max_model_rounds', 'max_tool_calls', 'token_budget',
    'deadline', 'no_progress', 'model_failed', 'model_timeout', 'model_truncated', 'max_attempts', 'cancelled',
    'internal_error', 'recursion_limit'));

-- workers claim only runs of the graphs they loaded
CREATE INDEX runs_pending_by_graph ON runs (graph_id, created_at, run_id) WHERE status = 'pending';
-- open approvals and interrupts: one query over the interrupted runs
CREATE INDEX runs_interrupted ON runs (updated_at DESC, run_id) WHERE status = 'interrupted';

-- Every resume of an interrupted run (a value for one or several interrupts, or a Command's
-- update / goto), with who, when, why and the digest of the exact value. `consumed_at` is set when
-- the run next pauses or ends: until then a run recovered after a crash resumes with it again.
CREATE TABLE run_resumes (
  run_id        uuid        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  resume_id     uuid        NOT NULL,
  interrupt_ids text[]      NOT NULL,
  -- {"values": {interrupt id: value}, "update"?: ..., "goto"?: ...}
  command       jsonb       NOT NULL,
  value_digest  text        NOT NULL,
  principal     text        NOT NULL,
  reason        text,
  decided_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  consumed_at   timestamptz,
  PRIMARY KEY (run_id, resume_id)
);
CREATE INDEX run_resumes_open ON run_resumes (run_id, decided_at) WHERE consumed_at IS NULL;
