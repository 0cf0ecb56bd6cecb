-- Long-term memory store (LangGraph's BaseStore, src/store/postgres-store.ts): one row per item,
-- addressed by its namespace path (labels joined with '.', which labels may not contain) and key.
-- `ttl_minutes` is kept so a read can push `expires_at` forward again (refresh on read); an item
-- past `expires_at` is invisible at once and deleted by the sweep. Vectors for semantic search
-- live in `store_vectors`, created by the store when an index is configured and the pgvector
-- extension loads (its column type needs the extension and the configured dimensions).
-- Applied with search_path set to the devmind schema.
CREATE TABLE store_items (
  ns_path     text             COLLATE "C" NOT NULL CHECK (ns_path <> ''),
  key         text             COLLATE "C" NOT NULL,
  value       jsonb            NOT NULL,
  created_at  timestamptz      NOT NULL DEFAULT now(),
  updated_at  timestamptz      NOT NULL DEFAULT now(),
  ttl_minutes double precision CHECK (ttl_minutes > 0),
  expires_at  timestamptz,
  PRIMARY KEY (ns_path, key)
);

-- the sweep and the expiry test of every read
CREATE INDEX store_items_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;
-- unfiltered search pages, newest first
CREATE INDEX store_items_by_updated ON store_items (updated_at DESC);
