-- The key of each answer given to a waiting run (decisions on its approvals, or a resume value),
-- kept across the retries of one logical answer (issue 37: in a failover the client often never
-- hears whether its COMMIT happened). A repeat with the key and the same request is the first
-- answer's own success (the run it created, `next_run_id`); with another request, a conflict.
-- Written in the answer's transaction. Applied with search_path set to the devmind schema.
CREATE TABLE decision_keys (
  run_id         uuid        NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  decision_key   text        COLLATE "C" NOT NULL,
  -- sha256 of the canonical JSON of the request (body, principal, reason)
  request_digest text        NOT NULL,
  principal      text        NOT NULL,
  -- the run the answer created to resume the thread (null: the run still waits for more)
  next_run_id    uuid,
  decided_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, decision_key)
);
