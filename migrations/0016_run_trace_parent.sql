-- The W3C traceparent of the HTTP request that created a run (or of the waiting run a resume
-- continues), so whichever process executes the run, whenever, continues that trace.
-- Applied with search_path set to the devmind schema.
ALTER TABLE runs ADD COLUMN trace_parent text;
