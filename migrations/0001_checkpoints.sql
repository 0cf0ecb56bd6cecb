-- LangGraph checkpoints (src/checkpoint). Applied with search_path set to the devmind schema.
-- A checkpoint row holds everything but channel values; each (channel, version) value is stored
-- once in checkpoint_blobs, so a channel that did not change costs nothing in a new checkpoint.

CREATE TABLE checkpoints (
  thread_id            text COLLATE "C"  NOT NULL,
  checkpoint_ns        text COLLATE "C"  NOT NULL DEFAULT '',
  checkpoint_id        text COLLATE "C"  NOT NULL,
  parent_checkpoint_id text COLLATE "C",
  -- the checkpoint without "id" (the column above) and without "channel_values" (the blobs);
  -- json, not jsonb: it is read whole, and its text is about a fifth smaller than jsonb here
  checkpoint           json  NOT NULL,
  metadata             jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE checkpoint_blobs (
  thread_id     text COLLATE "C" NOT NULL,
  checkpoint_ns text COLLATE "C" NOT NULL DEFAULT '',
  channel       text COLLATE "C" NOT NULL,
  version       text COLLATE "C" NOT NULL,
  -- serializer type ("json", "bytes", ...); the value is in json (UTF-8 JSON text) or bytes
  type          text NOT NULL,
  json          text,
  bytes         bytea,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

CREATE TABLE checkpoint_writes (
  thread_id     text    COLLATE "C" NOT NULL,
  checkpoint_ns text    COLLATE "C" NOT NULL DEFAULT '',
  checkpoint_id text    COLLATE "C" NOT NULL,
  task_id       text    COLLATE "C" NOT NULL,
  idx           integer NOT NULL,
  channel       text    COLLATE "C" NOT NULL,
  type          text    NOT NULL,
  json          text,
  bytes         bytea,
  -- the task path LangGraph passes to putWrites; "" for input and Command writes (sorts first)
  task_path     text    NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

