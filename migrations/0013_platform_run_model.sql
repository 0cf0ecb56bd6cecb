-- LangGraph Platform's run model (CONTRACT section 3): a run ends when its graph interrupts. It is
-- `success` with stop_reason `interrupt`, and `waiting` while its thread waits on it; a resume is a
-- new run (`resumes_run`) created by the decision or the resume value that completes the answer.
-- A cancelled run is `interrupted` (the Platform's word; there is no `cancelled` status).
-- `ledger_run`: the run whose tool ledger this run continues (the first run of a chain of resumes),
-- so a call that finished before an interrupt is never run again by the run that resumes it.
-- Applied with search_path set to the devmind schema.
ALTER TABLE runs ADD COLUMN waiting boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN resumes_run uuid;
ALTER TABLE runs ADD COLUMN ledger_run uuid;

ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs DROP CONSTRAINT runs_stop_reason_check;
DROP INDEX runs_one_active_per_thread;
DROP INDEX runs_interrupted;

-- a run that waited for approval or a resume value: it ended at its interrupt and its thread waits
-- on it (its decisions and resumes so far stay on it: the next run continues with them)
UPDATE runs SET status = 'success', stop_reason = 'interrupt', waiting = true,
                finished_at = COALESCE(finished_at, updated_at)
 WHERE status = 'interrupted';
UPDATE runs SET status = 'interrupted' WHERE status = 'cancelled';

ALTER TABLE runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('pending', 'running', 'success', 'error', 'timeout', 'interrupted'));
ALTER TABLE runs ADD CONSTRAINT runs_stop_reason_check
  CHECK (stop_reason IS NULL OR stop_reason IN ('completed', 'max_model_rounds', 'max_tool_calls', 'token_budget',
    'deadline', 'no_progress', 'model_failed', 'model_timeout', 'model_truncated', 'max_attempts', 'cancelled',
    'internal_error', 'recursion_limit', 'interrupt'));
ALTER TABLE runs ADD CONSTRAINT runs_waiting_ended CHECK (NOT waiting OR status = 'success');

-- at most one run per thread is running, and at most one is what the thread waits on
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';
CREATE UNIQUE INDEX runs_one_waiting_per_thread ON runs (thread_id) WHERE waiting;
-- open approvals and interrupts: one query over the waiting runs
CREATE INDEX runs_waiting ON runs (updated_at DESC, run_id) WHERE waiting;
