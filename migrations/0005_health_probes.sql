-- Write probes: a worker that saw the database refuse writes (disk full, read-only, permission
-- revoked) stops claiming runs and tries one small real write here, with backoff, until it
-- succeeds; GET /health does the same to tell "ok" from "degraded". One row per prober, rewritten
-- each time (a new tuple version of about 2 kB, so a full disk fails it as it fails run writes).
-- Applied with search_path set to the devmind schema.
CREATE TABLE health_probes (
  prober    text        COLLATE "C" PRIMARY KEY CHECK (length(prober) BETWEEN 1 AND 200),
  probed_at timestamptz NOT NULL,
  payload   text        NOT NULL
);
