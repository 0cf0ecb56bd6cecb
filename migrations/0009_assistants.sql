-- Assistants (LangGraph Platform's /assistants): a graph with its own config, context and
-- metadata, versioned; every loaded graph has a default assistant (id the uuid5 of the graph id),
-- written here the first time a runtime that loaded the graph serves assistants.
-- Also the run options of the LangGraph API: run metadata and `after_seconds`.
-- Applied with search_path set to the devmind schema.

CREATE TABLE assistants (
  assistant_id uuid        PRIMARY KEY,
  graph_id     text        COLLATE "C" NOT NULL,
  name         text        NOT NULL,
  description  text,
  -- the graph config its runs start from: {configurable?, recursion_limit?, tags?}
  config       jsonb       NOT NULL DEFAULT '{}',
  context      jsonb       NOT NULL DEFAULT '{}',
  metadata     jsonb       NOT NULL DEFAULT '{}',
  -- the version the assistant currently is (set by update, or set back by setLatest)
  version      integer     NOT NULL DEFAULT 1,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX assistants_by_created ON assistants (created_at DESC, assistant_id);
CREATE INDEX assistants_by_graph ON assistants (graph_id, created_at DESC);

-- every version an assistant had, newest the highest number
CREATE TABLE assistant_versions (
  assistant_id uuid        NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version      integer     NOT NULL,
  graph_id     text        COLLATE "C" NOT NULL,
  name         text        NOT NULL,
  description  text,
  config       jsonb       NOT NULL,
  context      jsonb       NOT NULL,
  metadata     jsonb       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (assistant_id, version)
);

-- a run's own metadata (LangGraph's run `metadata`), filterable with @>
ALTER TABLE runs ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
-- `after_seconds`: no worker claims the run before this time
ALTER TABLE runs ADD COLUMN not_before timestamptz;
-- LangGraph's static breakpoints: nodes the run stops before / after ('*': every node)
ALTER TABLE runs ADD COLUMN interrupt_before text[];
ALTER TABLE runs ADD COLUMN interrupt_after text[];
-- time travel: the checkpoint of the thread the run starts from (forking the thread there)
ALTER TABLE runs ADD COLUMN checkpoint_id text;
