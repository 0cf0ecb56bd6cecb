-- Threads of the HTTP API (LangGraph Platform's /threads): a conversation's metadata and times.
-- Its messages live in the checkpoints and its status is derived from its runs (src/runtime/thread-store.ts).
-- Applied with search_path set to the devmind schema.

CREATE TABLE threads (
  thread_id   text        COLLATE "C" PRIMARY KEY,
  metadata    jsonb       NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- the search page, newest first
CREATE INDEX threads_by_created ON threads (created_at DESC, thread_id DESC);
CREATE INDEX threads_by_updated ON threads (updated_at DESC, thread_id DESC);
-- metadata filters ({"graph_id": "agent"}, …) use containment
CREATE INDEX threads_metadata ON threads USING gin (metadata jsonb_path_ops);
