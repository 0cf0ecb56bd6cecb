-- Ambiguous commits and crash detection (issue 37).
-- `batch_key`: every row of one stored batch of a run's events carries the batch's key, kept
-- across the batch's retries; a retry whose first try committed (its answer lost in a failover)
-- finds the key and stores nothing again.
-- `live_processes`: each live devmind process that executes runs on PostgreSQL holds a
-- session-level advisory lock (classid: the schema's namespace key, objid: `lock_key`) on a
-- connection of its own; the server releases it when the process dies, so a reaper that finds a
-- running run's owner here with its lock free recovers the run at once instead of at lease expiry.
-- Applied with search_path set to the devmind schema.
ALTER TABLE run_events ADD COLUMN batch_key uuid;
CREATE INDEX run_events_batch_key ON run_events (run_id, batch_key) WHERE batch_key IS NOT NULL;

CREATE TABLE live_processes (
  process_id text        COLLATE "C" PRIMARY KEY CHECK (length(process_id) BETWEEN 1 AND 200),
  lock_key   integer     NOT NULL UNIQUE CHECK (lock_key >= 0),
  started_at timestamptz NOT NULL DEFAULT now()
);
