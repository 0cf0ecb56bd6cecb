/**
 * Every default devmind uses, in one place. CONTRACT section 2 documents the user-facing ones;
 * config.ts reads the environment and falls back to these.
 */

/** Defaults of the environment variables of CONTRACT section 2. */
export const CONFIG_DEFAULTS = {
  dataDir: ".devmind",
  dbSchema: "devmind",
  openaiModel: "gpt-4o-mini",
  modelTimeoutMs: 60_000,
  modelMaxRetries: 2,
  maxModelRounds: 8,
  maxToolCalls: 16,
  maxTokens: 200_000,
  runTimeoutMs: 900_000,
  toolTimeoutMs: 10_000,
  maxToolOutputChars: 12_000,
  noProgressLimit: 3,
  contextTokens: 64_000,
  workspace: "./workspace",
  workerConcurrency: 4,
  leaseMs: 30_000,
  maxAttempts: 3,
  host: "127.0.0.1",
  port: 8787,
  logLevel: "info",
  /** DEVMIND_ALLOW_TRUNCATE: `POST /internal/truncate` (wipes runs, threads, assistants, checkpoints, store) is not served unless set. */
  allowTruncate: false,
} as const;

/** The embedded database lives in this sub-directory of DEVMIND_DATA_DIR. */
export const PGLITE_SUBDIR = "pgdata";

/** Lock file taken next to the embedded database so only one process opens it. */
export const PGLITE_LOCK_FILE = "pgdata.lock";

/**
 * Extra `initdb` flags of every embedded database devmind creates: 1 MB WAL segments instead of
 * 16 MB, so a new database takes ~30 MB on disk, not ~40 MB (an embedded database writes little WAL).
 */
export const PGLITE_INITDB_FLAGS: readonly string[] = ["--wal-segsize=1"];

/**
 * `-c` settings added to PGlite's start parameters at every open. PGlite zeroes its whole buffer
 * pool at each start: the default 128 MB cost ~1 s of CPU per open (measured: 1.2-1.8 s vs
 * 0.4-0.8 s per open with 16 MB), paid by every CLI command. One connection's working set fits in
 * 16 MB, and the data files stay in the OS page cache.
 */
export const PGLITE_START_SETTINGS: Readonly<Record<string, string>> = { shared_buffers: "16MB" };

/**
 * Where the migrated PGlite template is built (`npm run build`), relative to the package root.
 * A new embedded data directory is a copy of it when its manifest matches this code; else initdb.
 */
export const PGLITE_TEMPLATE_DIR = "dist/pglite-template";

/** The optional peer package with PGlite's pgvector build (`openDatabase({ vector: true })`), and the version devmind is tested with. */
export const PGVECTOR_PACKAGE = "@electric-sql/pglite-pgvector";
export const PGVECTOR_VERSION = "0.0.15";

/** `dataDir` value meaning "in-memory embedded database, nothing on disk". */
export const MEMORY_DATA_DIR = "memory://";

/** Schema names must be plain lower-case SQL identifiers of at most 63 bytes. */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Pool sizing and timeouts for the PostgreSQL client. Every wait on the server is bounded, so a
 * connection that died silently (a network partition, a host that vanished: no RST, no FIN) is
 * found and replaced instead of being waited on forever (docs/partition.md).
 */
export const PG_POOL_DEFAULTS = {
  max: 10,
  /** Connecting, and waiting for a pooled connection, gives up after this. */
  connectionTimeoutMillis: 10_000,
  idleTimeoutMillis: 30_000,
  /**
   * TCP keepalive on every connection (pool, LISTEN, liveness lock): the first probe after this
   * much idle time (the kernel's default is 2 hours), so an idle connection to a vanished peer is
   * closed by the kernel rather than kept.
   */
  keepAliveInitialDelayMs: 10_000,
  /**
   * A statement (BEGIN and COMMIT too) with no answer for this long: its connection is taken for
   * dead. A cancel request is sent for it (best effort), the connection is destroyed (failing the
   * statements sent behind it) and never reused, and the caller gets DATABASE_UNREACHABLE (cause
   * `query_timeout`), a fault it waits out like any other. Migration scripts are not bounded.
   */
  queryTimeoutMs: 60_000,
  /** Sending that cancel request (its own short connection) gives up after this. */
  cancelTimeoutMs: 2_000,
  /**
   * A channel whose last listener left stays LISTENed this long (ms): streams open and close one
   * after another on the same channels (a client's next run), and each would otherwise wait for
   * an UNLISTEN and a LISTEN on the listening connection before its first read.
   */
  listenLingerMs: 10_000,
} as const;

/**
 * The watchdog of the dedicated LISTEN connection (src/db/pg-listener.ts): a connection that only
 * listens sends nothing, so a silent death would leave the process deaf to notifications for good.
 */
export const PG_LISTEN_DEFAULTS = {
  /** It is asked `SELECT 1` this often while idle … */
  checkMs: 10_000,
  /** … and taken for dead (destroyed, reconnected, every channel listened again) without an answer within this. */
  checkTimeoutMs: 5_000,
} as const;

/**
 * PostgreSQL behind a pooler or across hosts (src/db/pg-session.ts, pg-primary.ts, pg-replication.ts).
 */
export const PG_TOPOLOGY_DEFAULTS = {
  /** Through a pooler without DEVMIND_DATABASE_DIRECT_URL: how long a test notification may take to come back before LISTEN is declared unusable. */
  listenProbeMs: 1_000,
  /** Connecting to one host while looking for the primary of a multi-host URL: give up on it after this. */
  hostProbeTimeoutMs: 2_000,
  /** Looking for the primary again (after a connection failed or a host turned read-only) at most this often. */
  relocateMinIntervalMs: 250,
  /** A standby of DATABASE_URL whose replay is this many bytes behind the primary is reported (`database.standby_lagging`). */
  standbyLagWarnBytes: 1_048_576,
} as const;

/** Name of the table recording applied migrations (inside the configured schema). */
export const MIGRATIONS_TABLE = "schema_migrations";

/** Prefix of the advisory-lock key taken while migrating one schema. */
export const MIGRATION_LOCK_PREFIX = "devmind:migrate:";

/** Rows fetched per page when `list()` walks checkpoints without a limit. */
export const CHECKPOINT_LIST_PAGE_SIZE = 50;

/** Failed stores of early-answered delta writes the saver's write queue remembers (the oldest go first). */
export const WRITE_QUEUE_FAILURES_KEPT = 256;

/** Delta channel names the saver's write queue remembers (beyond them, writes are answered once stored). */
export const WRITE_QUEUE_DELTA_CHANNELS_KEPT = 1024;

/**
 * Inclusive bounds of the integer variables of CONTRACT section 2. A value outside them is a
 * config error; the bounds only catch typos (an extra zero, a unit mix-up), not tune anything.
 */
export const CONFIG_BOUNDS = {
  modelTimeoutMs: { min: 1, max: 3_600_000 },
  modelMaxRetries: { min: 0, max: 20 },
  maxModelRounds: { min: 1, max: 1_000 },
  maxToolCalls: { min: 1, max: 10_000 },
  maxTokens: { min: 1, max: 100_000_000 },
  runTimeoutMs: { min: 1, max: 604_800_000 },
  toolTimeoutMs: { min: 1, max: 3_600_000 },
  maxToolOutputChars: { min: 1, max: 10_000_000 },
  noProgressLimit: { min: 1, max: 1_000 },
  contextTokens: { min: 1, max: 10_000_000 },
  workerConcurrency: { min: 0, max: 1_024 },
  leaseMs: { min: 1, max: 3_600_000 },
  maxAttempts: { min: 1, max: 1_000 },
  port: { min: 1, max: 65_535 },
  webhookMaxAttempts: { min: 1, max: 100 },
  webhookRetryMs: { min: 1, max: 3_600_000 },
  webhookTimeoutMs: { min: 1, max: 600_000 },
  authTimeoutMs: { min: 1, max: 600_000 },
  storeIndexDims: { min: 1, max: 16_000 },
} as const;

/** Tool names in DEVMIND_REQUIRE_APPROVAL / DEVMIND_AUTO_APPROVE must match this. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Names in DEVMIND_API_KEYS (`name=key,...`) must match this; they appear in logs and audits. */
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The dotenv file loaded from the working directory (real environment variables win). */
export const DOTENV_FILE = ".env";

/** Bounds the tool registry and the built-in tools apply (CONTRACT section 4). */
export const TOOL_LIMITS = {
  /** Longest error message put in a tool result; the model needs the gist, not a dump. */
  errorMessageMaxChars: 2_000,
  /** At most this many zod issues are listed in an INVALID_ARGUMENTS message. */
  validationIssuesShown: 8,
  /** Longest single validation issue (path plus message) in that list. */
  validationIssueMaxChars: 300,
  /** Longest user-supplied path quoted back in an error message. */
  quotedPathMaxChars: 200,
  /** A tool's `timeoutMs` must fit Node's timer range (about 24.8 days). */
  maxTimeoutMs: 2_147_483_647,
  /** `list_files` returns at most this many entries (then `truncated: true`). */
  listFilesMaxEntries: 500,
  /** `read_file` refuses files larger than this many bytes. */
  readFileMaxBytes: 1_048_576,
  /** `read_file` returns this many lines when `limit` is not given. */
  readFileDefaultLines: 400,
  /** `read_file` never returns more lines than this in one call. */
  readFileMaxLines: 2_000,
  /** `write_file` / `append_file` refuse content longer than this many characters. */
  writeFileMaxChars: 1_048_576,
  /** Symlinks followed while resolving one path before giving up (like the OS's ELOOP). */
  maxSymlinkHops: 40,
} as const;

/**
 * The `metadata` keys of a LangChain tool that devmind reads when it ledgers a tool node's tools
 * (CONTRACT section 3; src/graphs/tool-node-ledger.ts).
 */
export const TOOL_LEDGER_METADATA = {
  /** `true`: the tool may run again when its process died mid-call (re-run on recovery, not TOOL_OUTCOME_UNKNOWN). */
  idempotent: "idempotent",
  /** `false`: the tool stays out of the ledger entirely: it runs (again) whenever its node runs, as in plain LangGraph. */
  optOut: "devmind_ledger",
  /** Set (`true`) on a ledgered tool, so it is never wrapped twice and `devmind graphs` can tell. */
  ledgered: "ledgered",
} as const;

/** What `read_demo_text` returns: a fixed text, so demos and tests have something to summarise. */
export const DEMO_TEXT = [
  "devmind is a durable agent runtime for TypeScript. It runs a LangGraph graph whose every step is checkpointed in PostgreSQL, or in an embedded PGlite database when no server is configured, so a run survives the process that started it.",
  "The model only proposes tool calls. devmind validates each call against the tool's schema, enforces timeouts, output limits and workspace confinement, asks a human when a tool needs approval, and records every finished call so that it is never executed twice, even across crashes and restarts.",
  "Every run stops for a stated reason: it completed, hit a limit on model rounds, tool calls, tokens or wall-clock time, made no progress, was cancelled, or failed. Workers share the database as their queue, so a run that was waiting for approval or whose worker died continues in any later process.",
].join("\n\n");

/** Waits between retries of a transient model error (attempt 1, 2, 3+). */
export const MODEL_RETRY_BACKOFF_MS = [200, 800, 2_000] as const;

/** Settings of the chat models built by `createChatModel` and of the scripted model (src/model). */
export const MODEL_DEFAULTS = {
  /** Used when only OPENAI_BASE_URL is set: local OpenAI-compatible servers ignore the key, the SDK insists on one. */
  placeholderApiKey: "devmind-no-key",
  /**
   * Where `openai:NAME` goes when OPENAI_BASE_URL is unset. Passed explicitly so that variables
   * LangChain reads on its own (LANGSMITH_GATEWAY, OPENAI_API_BASE) cannot redirect requests.
   */
  openaiBaseUrl: "https://api.openai.com/v1",
  /** A 429 whose retry-after hint is longer than this is not retried (the run fails instead of stalling). */
  maxRetryAfterMs: 60_000,
  /** Longest message `classifyModelError` returns; the rest is cut. */
  errorMessageMaxChars: 2_000,
  /** The scripted model streams a turn's content in at most this many chunks. */
  scriptedStreamChunks: 3,
  /** Name reported by a scripted model (`response_metadata.model_name`) unless one is given. */
  scriptedModelName: "scripted",
} as const;

/** Prefix of the advisory-lock key (`<prefix><schema>:<thread>`) that serialises run creation per thread. */
export const RUN_THREAD_LOCK_PREFIX = "devmind:thread:";

/** Bounds of the run store (src/runtime/queue/run-store.ts). */
export const RUN_STORE_LIMITS = {
  /** Most messages one run input of the built-in agent may carry. */
  agentInputMessagesMax: 1_000,
  /** Most nodes one `interrupt_before` / `interrupt_after` list may name. */
  breakpointsMax: 100,
  /** Longest `after_seconds` delay (a day). */
  afterSecondsMax: 86_400,
  /** Most stream modes one run keeps (`stream_mode`; LangGraph has about a dozen). */
  streamModesMax: 20,
  /** Longest error class name a failed run keeps (the stream's `error` part names it). */
  errorNameMaxChars: 200,
  /** `list()` page size when none is given, and the largest page it returns. */
  listDefault: 50,
  listMax: 500,
  /** Longest thread id accepted (thread ids are also checkpoint keys and appear in URLs). */
  threadIdMaxChars: 256,
  /** Longest lease owner name (a worker id for logs and the record). */
  ownerMaxChars: 200,
  /**
   * `claimNext` tries this many candidates when a concurrent claim on the same thread wins the
   * one-active-run-per-thread index; past it, it reports "nothing claimable now".
   */
  claimRetries: 5,
  /** `requestCancel` re-reads this many times when the run changes under it. */
  cancelRetries: 3,
  /** Bounds of a run's `config.recursion_limit` (LangGraph's supersteps per invocation). */
  recursionLimit: { min: 1, max: 100_000 },
  /** Longest tag of a run's `config.tags`. */
  tagMaxChars: 200,
  /** Longest graph (assistant) id. */
  graphIdMaxChars: 200,
} as const;

/** Bounds of a decision body (CONTRACT section 5), as `parseDecisions` checks them. */
export const DECISION_LIMITS = {
  /** Most decisions in one body. */
  maxDecisions: 1_000,
  /** Longest audit `reason` of a whole body. */
  reasonMaxChars: 2_000,
} as const;

/**
 * Taking over a run left `running` (`runtime.runs.takeOver`) and waiting for a cancelled run to
 * stop (`runtime.runs.waitStopped`) on PostgreSQL, where its lease holder may still be alive.
 */
export const TAKEOVER_DEFAULTS = {
  /** `takeOver` waits for a running run's lease to lapse only if it lapses within this. */
  maxLeaseWaitMs: 120_000,
  /** ... plus this much, for the reaper and clock skew, before calling the run held elsewhere. */
  leaseSlackMs: 2_000,
  /** How often those waits look at the lease. */
  leasePollMs: 250,
} as const;

/**
 * Deleting in bulk (`runtime.truncate`, `runtime.deleteAssistantThreads`): the active runs of
 * what is deleted are cancelled first, and each running one is waited for this long before the
 * delete is refused (409) rather than done under its worker.
 */
export const PURGE_DEFAULTS = {
  /** How long one running run may take to stop after its cancel. */
  stopTimeoutMs: 10_000,
  /** Active runs read per round; rounds repeat while new ones appear (crons, queued runs). */
  pageSize: 500,
  /** At most this many rounds of cancelling (then 409: runs keep starting). */
  maxRounds: 20,
} as const;

/** Timing of the runtime and its workers. */
export const RUNTIME_DEFAULTS = {
  /** Listeners a run's cancel signal may have before Node warns: one per model or tool call in flight, and the calls' own timers. */
  runSignalMaxListeners: 1_000,
  /** Model and tool calls under way a run's call tally times for the metrics at most (a graph that never ends its calls stays bounded). */
  callTallyMaxOpenCalls: 1_000,
  /**
   * How often a running run looks for a cancel request when this process cannot LISTEN for them
   * (with LISTEN, a request reaches it at once, and the lease heartbeat reads it besides).
   */
  cancelPollMs: 250,
  /** How long a cancel announcement is kept for a run not watched yet (claimed, about to execute). */
  recentCancelsMs: 60_000,
  /** LangGraph's recursion limit for a run (our own limits stop runs long before it). */
  recursionLimit: 10_000,
  /**
   * A worker with idle slots has one of them look for runs this often (NOTIFY on a new run wakes
   * one slot at once; this covers a notification lost while the listening connection was down).
   */
  idlePollMs: 5_000,
  /** An idle slot nobody wakes looks by itself after this long (a bound; the idle poll above wakes one slot sooner). */
  idleSlotMaxMs: 300_000,
  /**
   * `wait()` (and the server's runs.wait / join) reads the run when its final event is committed
   * (a live event in-process, NOTIFY on the run-ends channel across processes) and besides at
   * least this often, for a notification lost while the listening connection was down.
   */
  waitPollMs: 5_000,
  /** ... and this often when LISTEN is not available (the database is away, or it cannot listen). */
  waitPollNoListenMs: 250,
  /** Run ends a runtime remembers for a wait that starts just after its run ended (RunEndWatcher), at most this many… */
  recentEndsMax: 256,
  /** …for at most this long. */
  recentEndsMs: 60_000,
  /** Longest a drain (`worker.stop()`) waits for runs to reach a step boundary. */
  drainTimeoutMs: 30_000,
  /** The lease reaper looks this long after the earliest lease is due to lapse. */
  reaperSlackMs: 10,
  /** ... and never more often than this. */
  reaperMinPauseMs: 50,
  /** `runs.execute` waits this long at most for a database that went away mid-run, then throws. */
  executeFaultWaitMs: 600_000,
  /**
   * `runs.create` / `decide` / `resume` / `cancel` retry a lost connection (a commit whose answer may be lost) this
   * long at most, each try first looking for what an earlier one did (issue 37); then the fault is thrown.
   */
  answerFaultWaitMs: 15_000,
  /** `runtime.health()`: no answer within this is `down`. */
  healthTimeoutMs: 5_000,
  /** `runtime.health()`: an answer slower than this is `degraded`. */
  healthSlowMs: 1_000,
  /** `runtime.health()`: a write refused for want of storage (a full disk) this recently makes it `degraded`, database not writable. */
  healthWriteFailureMs: 60_000,
  /** A process that sees writes refused for want of storage tells the others (NOTIFY) at most this often while it lasts. */
  healthAnnounceMs: 5_000,
  /** A kind of write refused this recently must succeed again before a process says storage works (see WriteFaults.stored). */
  healthRefusedKindMs: 15_000,
} as const;

/** Processes tell each other of writes refused for want of storage, and of storage working again (`StorageNotice` JSON). */
export const STORAGE_CHANNEL = "devmind_storage";

/**
 * Crash detection on PostgreSQL (src/db/session-lock.ts, src/runtime/queue/process-liveness.ts):
 * each live process that executes runs holds a session-level advisory lock on a connection of its
 * own; the server frees it when the process dies, and reapers that see it free recover the
 * process's runs without waiting for their leases.
 */
export const LIVENESS_DEFAULTS = {
  /** A worker's reaper looks for runs whose owner's lock is free this often. */
  ownerCheckMs: 500,
  /** The lock's connection, lost while its process lives, is reconnected with backoff from… */
  reconnectFirstMs: 100,
  /** …up to this. */
  reconnectMaxMs: 2_000,
  /** Tries to find a free lock key (random) before giving up on the lock (lease only). */
  keyAttempts: 5,
} as const;

/**
 * How devmind waits out a database fault (src/runtime/execution/fault-recovery.ts): workers, the executor's
 * event writes and server streams back off with jitter between `firstMs` and a cap, and never
 * give up while their process runs, except where a bound is named.
 */
export const DATABASE_FAULT_DEFAULTS = {
  /** First wait after a failure. */
  backoffFirstMs: 100,
  /** Longest wait while the database is unreachable (also capped at a third of the lease). */
  backoffMaxMs: 5_000,
  /** Longest wait while the database refuses writes (an operator must act; no need to hammer it). */
  storageBackoffMaxMs: 30_000,
  /** Storage failures in a row after which a worker stops claiming runs until a write probe succeeds. */
  storageFailuresBeforePause: 2,
  /** A run's event writes retry a database fault this long at most before the attempt gives up on them. */
  eventRetryMaxMs: 120_000,
  /** `devmind worker` / `devmind serve` wait this long at most for a database that is away while they start. */
  serviceStartMaxMs: 120_000,
  /** A fault this soon after the database came back belongs to the same outage (logged once). */
  flapMs: 10_000,
  /** After a worker saw the database away, its reaper leaves lapsed leases this long for their live owners to renew. */
  reaperGraceLeases: 1,
} as const;

/** Graphs of a project (src/graphs). */
/** Assistants (runtime.assistants, the HTTP API's /assistants). */
export const ASSISTANT_DEFAULTS = {
  /** Assistants per search or versions page when no limit is given, and the most. */
  pageSize: 10,
  pageMax: 1_000,
  /** The metadata of a loaded graph's default assistant (as LangGraph Platform registers it). */
  defaultMetadata: { created_by: "system" },
  /** The description of the built-in agent's default assistant. */
  agentDescription: "devmind's agent: tools with approvals, durable runs",
} as const;

/** `devmind dev`: reloading the project's graphs on an edit. */
export const DEV_DEFAULTS = {
  /** Quiet time after the last change seen before reloading (an editor's save is several events). */
  reloadDebounceMs: 80,
  /** Directories directly under the project whose files are never reloaded nor watched (with every node_modules). */
  excludedDirs: ["node_modules", ".devmind", "dist", ".git"],
  /** The URL query naming a project module's generation (`file.ts?devmind-gen=N`, see src/graphs/module-generations.ts). */
  generationParam: "devmind-gen",
} as const;

export const GRAPHS_DEFAULTS = {
  /** The LangGraph CLI's config file, looked for in the working directory. */
  configFile: "langgraph.json",
  /** Id of the built-in agent when no config file names graphs. */
  builtinId: "agent",
  /**
   * The graph (assistant) a run, cron or thread uses when none is named: a default, never a
   * behaviour switch (the built-in agent's id, so `devmind run TASK` runs the agent).
   */
  defaultGraphId: "agent",
  /** LangGraph's own default recursion limit, for a run of a user graph that sets none. */
  recursionLimit: 25,
  /** One batch of LangGraph's static schema extraction (one TypeScript program over the project's graph modules, in a worker thread). */
  staticSchemaTimeoutMs: 300_000,
  /** Interrupted runs read by one `runtime.runs.interrupted()` call when no limit is given, and the most. */
  interruptedListDefault: 100,
  interruptedListMax: 1_000,
  /** LangGraph's namespace for default assistant ids (uuid5 of a graph id in it; see `assistantIdFor`). */
  assistantNamespace: "6ba7b821-9dad-11d1-80b4-00c04fd430c8",
} as const;

/**
 * Recording a run's LangChain stream events (the `events` stream mode, src/runtime/execution/graph-stream-events.ts):
 * only runs that ask for them record them, each a stored run event.
 */
export const STREAM_EVENTS_DEFAULTS = {
  /**
   * The most stream events one attempt of a run records (a model's every token is one) when the run
   * was created with stream_mode `events` and no `limits.maxStreamEvents`; past it the graph's own
   * start and end are still recorded and one `events.truncated` marker says the rest was left out.
   */
  maxPerRun: 5_000,
  /** Bounds of `limits.maxStreamEvents`. */
  maxPerRunBounds: { min: 1, max: 100_000 },
} as const;

/** NOTIFY channel telling workers there may be a run to claim. */
export const RUNS_CHANNEL = "devmind_runs";

/** NOTIFY channel announcing a cancel request for a running run (its id): its executor stops it at once. */
export const RUN_CANCELS_CHANNEL = "devmind_run_cancels";

/** The live message chunks of running graphs (src/runtime/events/live-messages.ts). */
export const LIVE_MESSAGES = {
  /**
   * Most messages of one run attempt whose start is stored (`message.started`, one event per
   * streamed message): a graph that streams more keeps streaming, its later messages' starts not
   * stored (the event protocol then sends those messages whole).
   */
  startedMessagesMax: 10_000,
  /**
   * Largest JSON string one NOTIFY of them carries (PostgreSQL refuses payloads of 8000 bytes or
   * more; the envelope around it takes well under the rest); a larger one is sent in parts.
   */
  payloadBytes: 7_000,
  /**
   * Chunks of a run kept by the process executing it once sent, for a listener on this process
   * that subscribes after the run began streaming (`runs.stream` right after its create): it gets
   * them first. Beyond this many a run's oldest go.
   */
  replayMax: 2_000,
} as const;

/** Bounds of `run_command` (src/tools/builtin/run-command.ts). */
export const COMMAND_LIMITS = {
  /** Bytes of stdout and of stderr kept per call; the rest is counted and dropped (`truncated`). */
  outputMaxBytes: 1_048_576,
  /** After SIGTERM to the command's process group, SIGKILL follows this much later. */
  killGraceMs: 1_000,
  /** Kept back from the call's timeout beyond the kill grace, so a timed-out command is still reported. */
  reportSlackMs: 500,
  /** Once the shell has exited, its pipes get this long to close (a detached grandchild may hold them). */
  closeWaitMs: 2_000,
  /** Longest command accepted (characters). */
  commandMaxChars: 16_384,
  /** PATH handed to commands when the process has none. */
  defaultPath: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  /** LANG handed to commands. */
  lang: "C.UTF-8",
} as const;

/** Bounds of attachments (`send_file`, `gen_image`, src/runtime/attachments/attachment-store.ts). */
export const ATTACHMENT_LIMITS = {
  /** Largest attachment stored, in bytes (10 MiB). */
  maxBytes: 10_485_760,
  /** Longest attachment name kept (characters). */
  nameMaxChars: 255,
  /** Where an attachment is served: `/files/{id}`. */
  urlPrefix: "/files/",
} as const;

/** Settings of `gen_image` (src/tools/builtin/gen-image.ts). */
export const IMAGE_DEFAULTS = {
  /** Per-call timeout: image generation is slower than DEVMIND_TOOL_TIMEOUT_MS allows for. */
  timeoutMs: 120_000,
  /** Size asked for when the model gives none. */
  size: "1024x1024",
  /** Longest prompt accepted (characters; OpenAI's limit for dall-e-3 is 4000, gpt-image-1 32000). */
  promptMaxChars: 32_000,
  /** Largest response body read from the images API (bytes); base64 of a few large PNGs fits. */
  maxResponseBytes: 67_108_864,
  /** Longest server error message passed on to the model. */
  errorMessageMaxChars: 500,
} as const;

/** `devmind dockerfile` / `devmind build`: the image of a user's langgraph.json project. */
export const DOCKER_DEFAULTS = {
  /** The Node major of the image when `node_version` is not set (LangGraph's default too). */
  nodeVersion: "20",
  /** The port `serve` listens on inside the container (and the host port compose publishes by default). */
  port: CONFIG_DEFAULTS.port,
  /** The file `devmind dockerfile` writes when no path is given. */
  dockerfile: "Dockerfile",
} as const;

/**
 * The CLI's one-file bundles (src/cli/cli-bundle-build.ts, made by `npm run build` next to the
 * compiled cli-program.js): `file`, the command line and everything it imports but PGlite in one
 * ES module, which starts in about half the CPU of ~800 separate modules; `graphsFile`, devmind's
 * own modules in one ES module with every package left to node_modules, for commands that may
 * load project graphs (a graph's imports and devmind's then resolve to the same copies).
 * ./src/cli/cli-entry.ts says which one starts.
 */
export const CLI_BUNDLE = {
  /** The bundle's file name, in dist/src/cli/. */
  file: "cli-program.bundle.mjs",
  /** The bundle of devmind's own modules alone (every package external), in dist/src/cli/. */
  graphsFile: "cli-program.graphs.mjs",
  /** The compiled module it is made from (and that runs when the bundle is not used). */
  entry: "cli-program.js",
  /** Packages left out of the bundle: PGlite finds its WebAssembly and data files next to its modules; tsx loads graphs. */
  external: ["@electric-sql/pglite", "@electric-sql/pglite-pgvector", "tsx", "esbuild"],
  /**
   * Packages the graphs bundle (CLI_BUNDLE.graphsFile) holds anyway, though it leaves every other
   * package to node_modules: esbuild writes a package left out as a static import at the top of
   * the one file, so it loads at every start, while one inside is evaluated only when a command
   * reaches its module. These are what few commands need (the OpenAI client: a model call; the
   * PostgreSQL driver: DATABASE_URL; ws, metrics, cron schedules: a service) and that a project
   * never shares objects with devmind through. Never here: LangGraph, LangChain core and zod
   * (a graph's values cross), nor Hono (a project's `http` app is mounted into devmind's, and an
   * error its route throws is devmind's 500 only when both are one copy). The OpenAI client alone
   * is 230 modules.
   */
  graphsInline: ["@langchain/openai", "openai", "ws", "pg", "prom-client", "cron-parser", "luxon"],
} as const;

/** Timing and layout of the `devmind` CLI (src/cli). */
export const CLI_DEFAULTS = {
  /** A request of a CLI command to the local server holding the embedded database (not a followed event stream). */
  serverRequestTimeoutMs: 30_000,
  /** `cancel` of a run running in another process waits this long for it to stop. */
  cancelWaitMs: 15_000,
  /** A second Ctrl-C sooner than this after the first is the same key press, not a forced exit. */
  secondInterruptMinMs: 300,
  /** Spinner frame interval on a terminal. */
  spinnerMs: 80,
  /** A folded tool line shows at most this many characters of arguments. */
  foldedArgsChars: 72,
  /** A graph's final values are shown one line per key, each folded to at most this many characters (`--verbose`: in full). */
  foldedValueChars: 100,
  /** A failed tool call's line shows at most this many characters of its error. */
  toolErrorChars: 120,
  /** `--json` re-reads stored events this often only when the database cannot notify (LISTEN failed). */
  tailPollMs: 200,
  /** `devmind runs` lists this many runs unless `--limit` says otherwise. */
  runsListDefault: 20,
  /** `--verbose` shows at most this many characters of a tool's result. */
  verboseResultChars: 600,
  /** A model or run error line shows at most this many characters (cut at a space, never inside a URL). */
  errorLineChars: 2_000,
} as const;

/** Settings of the HTTP server (src/server). */
export const SERVER_DEFAULTS = {
  /** Largest request body accepted (413 PAYLOAD_TOO_LARGE beyond). */
  bodyLimitBytes: 1_048_576,
  /** Most runs one `POST /runs/batch` creates, and most runs one `POST /runs/cancel` names. */
  runBatchMax: 100,
  /** multitask_strategy "interrupt": how long a new run waits for the thread's active runs to stop before it is queued behind them. */
  interruptStopMs: 10_000,
  /** Open SSE streams send a `: heartbeat` comment this often, so clients and proxies see the line alive. */
  heartbeatMs: 15_000,
  /** While a streamed run is running, its checkpoints are looked at least this often (run events wake it sooner). */
  streamPollMs: 250,
  /** A user graph's task start read before the checkpoint that started it (saved asynchronously): read again after this long. */
  streamCheckpointWaitMs: 25,
  /** ...and waited for at most this long (a task outside the run's checkpoints then goes without it). */
  streamCheckpointPatienceMs: 5_000,
  /**
   * A step whose tasks all finished is sent (its updates, values, checkpoint) right after its last
   * task's `node.finished`; its checkpoint, saved asynchronously, may be stored a moment later (or
   * by the next attempt, after a worker died): the stream holds the parts after that event for it
   * this long at most (the run's end ends the wait too).
   */
  streamStepPatienceMs: 60_000,
  /** Live message chunks one stream holds back at most (those of tasks it has not sent the start of yet). */
  streamChunksMax: 10_000,
  /** The one assistant and graph the LangGraph API serves. */
  graphId: "agent",
  /** The assistant's id: LangGraph's default assistant id for graph `agent` (uuid5 of the graph id in LangGraph's namespace). */
  assistantId: "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
  /** The principal recorded on decisions when no API keys are configured (loopback only). */
  anonymousPrincipal: "anonymous",
  /**
   * The local owner (a CLI command beside `serve` / `dev` on the embedded database) proves it with
   * this header: the key the server wrote in the data directory's lock file (mode 0600). Read only
   * from a loopback peer; never logged.
   */
  localOwnerHeader: "x-devmind-local-owner",
  /** With a proven local owner key: who acts (the CLI's `--by`, URI-encoded), recorded on decisions and resumes; ignored from anyone else. */
  localOwnerByHeader: "x-devmind-by",
  /** With a proven local owner key: why (the CLI's `resume --value … --reason`, URI-encoded), recorded with a resume; ignored from anyone else. */
  localOwnerReasonHeader: "x-devmind-reason",
  /** The principal of a proven local owner that names nobody (`localOwnerByHeader` absent). */
  localOwnerPrincipal: "local-owner",
  /** Longest name `localOwnerByHeader` may carry (decoded); longer, or with control characters, is 400 BAD_REQUEST. */
  localOwnerByMaxChars: 200,
  /** Random bytes of the local owner key (base64url in the lock file). */
  localOwnerKeyBytes: 32,
  /** `runs.wait` / `join` hold the request at most this long, then answer with the run as it is. */
  waitMaxMs: 3_600_000,
  /** `Retry-After` (seconds) on a 503 while the database is away or refuses writes. */
  retryAfterSeconds: 2,
  /** 503s (the database away or refusing writes) this close together are one outage: logged when it begins and, with their count, when it ends. */
  outageQuietMs: 10_000,
  /**
   * A stream whose reads fail on a database fault keeps retrying them this long, heartbeats going
   * on: for ever (until the run ends or the client leaves), since a stream that closed would send
   * the SDK into reconnects that an outage answers with 503 until its budget is spent.
   */
  streamFaultMaxMs: Number.POSITIVE_INFINITY,
  /** At most this many zod issues in a LangGraph route's validation error body (the official server sends them all). */
  validationIssuesMax: 20,
} as const;

/** The project's custom auth handler (`auth` in langgraph.json, src/server/custom-auth). */
export const AUTH_DEFAULTS = {
  /** `authenticate` or an `on(...)` handler that has not answered after this long fails the request (500, nothing stored); DEVMIND_AUTH_TIMEOUT_MS. */
  handlerTimeoutMs: 10_000,
  /** A refusal's message (from the handler's HTTPException) is cut to this many characters. */
  messageMaxChars: 2_000,
  /** Most keys one filter returned by an `on(...)` handler may have. */
  filterMaxKeys: 32,
} as const;

/** CORS of the HTTP API: any origin (auth is by header, never by cookie), the headers the SDK sends and reads. */
export const SERVER_CORS = {
  allowHeaders: ["x-api-key", "authorization", "content-type", "last-event-id", "accept"],
  exposeHeaders: ["content-location", "location", "x-request-id"],
  allowMethods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
  maxAgeSeconds: 600,
} as const;

/** Threads of the LangGraph API (src/runtime/threads/thread-store.ts, threads-api.ts). */
export const THREAD_DEFAULTS = {
  /** Longest thread TTL accepted (`ttl` on POST/PATCH /threads, minutes): one year. */
  maxTtlMinutes: 525_600,
  /** How often `serve` and `worker` delete threads past their TTL (LangGraph's default sweep interval). */
  ttlSweepMinutes: 5,
  /** One sweep deletes at most this many lapsed threads per batch... */
  ttlSweepBatchSize: 100,
  /** ... and runs at most this many batches, so a backlog never holds a sweep for long. */
  ttlSweepMaxBatches: 10,
  /** A thread stream (`GET /threads/{id}/stream`) looks for the thread's next run this often while none is active. */
  streamPollMs: 250,
} as const;

/** The long-term memory store (src/store/postgres-store.ts). */
export const STORE_DEFAULTS = {
  /** `search` without a limit returns this many items (LangGraph's default). */
  searchLimit: 10,
  /** `listNamespaces` without a limit returns this many namespaces (LangGraph's default). */
  listLimit: 100,
  /** Reads push an item's expiry forward by its TTL unless the read or the config says otherwise. */
  refreshOnRead: true,
  /** One sweep deletes at most this many expired items per statement. */
  sweepBatchSize: 1_000,
  /** ... and runs at most this many statements, so a huge backlog never holds a sweep for long. */
  sweepMaxBatches: 10,
  /** Largest value a put accepts, in bytes of its JSON text. */
  maxValueBytes: 16 * 1024 * 1024,
  /** Longest key and namespace label accepted. */
  maxKeyChars: 1_024,
  /** Deepest namespace accepted. */
  maxNamespaceDepth: 64,
  /** DEVMIND_STORE_SWEEP_MINUTES default: how often `serve` and `worker` delete expired items. */
  sweepIntervalMinutes: 60,
  /** Distinct search shapes (lists of filter operators) prepared per store; further ones run unprepared. */
  preparedSearchShapes: 64,
} as const;

/** Advisory-lock key prefix while the store creates its vector table. */
export const STORE_VECTOR_LOCK_PREFIX = "devmind:store-vectors:";

/** Scheduled runs (`runtime.crons`, src/runtime/crons/cron-*.ts). */
export const CRON_DEFAULTS = {
  /**
   * How often each worker looks for due crons (one transaction). A tick runs at most this late;
   * cron schedules have minute granularity, so a few seconds are plenty, and an idle server
   * spends 0.2 transactions a second on it.
   */
  pollMs: 5_000,
  /** Due crons claimed per transaction; a full batch is followed by another at once. */
  claimBatch: 25,
  /** Batches one scheduler pass claims at most before pausing (bounds a pass after downtime). */
  maxBatchesPerPass: 40,
  /** `runtime.crons.search` page size: default and maximum. */
  searchLimit: 10,
  maxSearchLimit: 1_000,
  /** Longest schedule expression and time zone name accepted. */
  maxScheduleChars: 200,
  maxTimezoneChars: 100,
} as const;

/** Webhooks of runs and crons, and what happens after a run ends (src/runtime/completions/run-completions.ts). */
export const WEBHOOK_DEFAULTS = {
  /** DEVMIND_WEBHOOK_ALLOW default: loopback only. */
  allow: ["localhost", "127.0.0.0/8", "::1"] as readonly string[],
  /** DEVMIND_WEBHOOK_MAX_ATTEMPTS default: POSTs of one run's webhook before giving up. */
  maxAttempts: 5,
  /** DEVMIND_WEBHOOK_RETRY_MS default: wait before the second attempt; doubles per attempt. */
  retryBaseMs: 1_000,
  /** The wait between attempts never exceeds this. */
  retryMaxMs: 300_000,
  /** DEVMIND_WEBHOOK_TIMEOUT_MS default: one POST waits this long for an answer. */
  timeoutMs: 10_000,
  /** While runs with a webhook or a thread to delete keep ending, each worker looks for them this often (one indexed query). */
  pollMs: 500,
  /** Idle (nothing handled in the last two passes), it looks this often: a run's end notifies it at once; this covers a retry coming due and a lost notification. */
  idlePollMs: 5_000,
  /** Rows claimed per pass. */
  claimBatch: 20,
  /** Longest webhook URL accepted. */
  maxUrlChars: 2_048,
  /** Longest delivery error kept on the row. */
  maxErrorChars: 500,
} as const;

/**
 * The event-based client protocol (`@langchain/protocol`, docs/protocol.md). A protocol event's
 * `seq` is its position in the thread's one order: `run ordinal * runSeqSpan + (part id + 1) *
 * partSeqSpan + index of the event within the part` (the run ordinal counts the thread's runs
 * from 1, oldest first; the part id is the run's stream position, `runStream`). So a run holds at
 * most runSeqSpan / partSeqSpan - 1 parts and a thread about 9e6 runs below 2^53.
 */
export const PROTOCOL_DEFAULTS = {
  runSeqSpan: 1_000_000_000,
  partSeqSpan: 1_000,
  /** `run.start` without `multitaskStrategy`: queue behind the active run, as the official server. */
  multitaskStrategy: "enqueue",
  /** The stream modes a protocol run is created with (so chat models stream their tokens). */
  runStreamModes: ["values", "updates", "messages-tuple", "custom", "tools", "tasks"],
  /** Most checkpoints one `state.listCheckpoints` returns. */
  listCheckpointsMax: 100,
  /** How often a subscription with no run to follow looks for the thread's next run (ms). */
  idlePollMs: 500,
  /** Longest a WebSocket subscription holds a run's terminal lifecycle for the session's other subscriptions to come to it (ms). */
  sessionOrderWaitMs: 2_000,
  /** Longest subscription id `subscription.unsubscribe` / `subscription.reconnect` accept (an id names its filter: see subscription-id.ts). */
  subscriptionIdMaxChars: 65_536,
  /** Most subscriptions one `subscription.reconnect` restores. */
  reconnectSubscriptionsMax: 32,
} as const;
