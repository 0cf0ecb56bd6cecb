-- Thread time-to-live (LangGraph's `ttl: {strategy: "delete", ttl: minutes}` on POST/PATCH /threads,
-- src/runtime/thread-store.ts): `ttl_minutes` as asked, `expires_at` the time the thread lapses,
-- moved forward whenever the thread is updated (a run created on it, a metadata patch, a state
-- update). `serve` and `worker` delete lapsed threads without an active run (with their runs and
-- checkpoints) every few minutes; NULL: the thread lives until deleted.
ALTER TABLE threads ADD COLUMN ttl_minutes double precision CHECK (ttl_minutes IS NULL OR ttl_minutes > 0);
ALTER TABLE threads ADD COLUMN expires_at timestamptz;

CREATE INDEX threads_expiring ON threads (expires_at) WHERE expires_at IS NOT NULL;
