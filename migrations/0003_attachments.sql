-- Attachments: files a run sent to the user (send_file, gen_image), served at /files/{id}.
-- Applied with search_path set to the devmind schema.

-- The bytes live in the database, so every process that can reach it can serve every file, and a
-- file outlives the workspace it came from. run_id is not a foreign key: a graph used as a library
-- may run tools without a runs row, and a file once sent stays downloadable.
CREATE TABLE attachments (
  -- random uuid: knowing the id is what lets a client fetch the file
  id           uuid        PRIMARY KEY,
  run_id       text        COLLATE "C",
  thread_id    text        COLLATE "C",
  tool_call_id text        COLLATE "C" NOT NULL,
  -- which file of a call that makes several (gen_image), 0 otherwise
  part         integer     NOT NULL DEFAULT 0 CHECK (part >= 0),
  name         text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
  mime_type    text        NOT NULL,
  size         bigint      NOT NULL CHECK (size >= 0),
  -- hex sha256 of bytes
  sha256       text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes        bytea       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK (octet_length(bytes) = size)
);

-- a re-executed call (same run, same tool_call_id) gets the attachment it stored the first time
CREATE UNIQUE INDEX attachments_one_per_call ON attachments (run_id, tool_call_id, part) WHERE run_id IS NOT NULL;
CREATE INDEX attachments_by_thread ON attachments (thread_id, created_at) WHERE thread_id IS NOT NULL;
