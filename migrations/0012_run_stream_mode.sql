-- What a LangGraph run was created with, for what its stream shows later (src/server/run-stream.ts):
-- `stream_mode` the stream modes the run was created with as the client named them (LangGraph's
-- `stream_mode`, e.g. {values,custom}): joining its stream without naming modes streams these, as
-- the official server does (NULL: a run created before this column, or not through the LangGraph
-- API: `values`). `error_name` the class name of the exception a failed graph threw (e.g.
-- CustomError), which the stream's final `error` part names as the official server does.
-- Applied with search_path set to the devmind schema.
ALTER TABLE runs ADD COLUMN stream_mode text[];
ALTER TABLE runs ADD COLUMN error_name text;
