-- The tool calls of a run whose outcome is unknown (TOOL_OUTCOME_UNKNOWN: a non-idempotent call
-- found in flight after its process died, or a side-effecting call a cancel aborted mid-flight):
-- [{tool_call_id, tool}] in the order they were found, written by the ledger's `complete` in the
-- same statement, so the run record, `devmind run`/`show`/`runs` and the web page show them.
-- Applied with search_path set to the devmind schema.
ALTER TABLE runs ADD COLUMN unknown_outcomes jsonb NOT NULL DEFAULT '[]'::jsonb;
