/**
 * devmind — a durable agent runtime for TypeScript. The named exports below are the library API
 * (CONTRACT section 9); everything else is internal. Lower-level pieces the library itself is
 * built from live behind subpaths, outside this API: `devmind/internals` (schema views, migration
 * files, checkpoint fencing) and `devmind/server` (the HTTP API's Hono app).
 */
export { createLogger, silentLogger, type Logger, type LoggerOptions } from "./logger.js";
export { configSecrets, loadConfig, type DevmindConfig, type RunLimitSettings } from "./config.js";
export { createRedactor, redactSecrets, type Redactor } from "./secret-redaction.js";
export { DevmindError, ConfigError, DatabaseError, MigrationError, CheckpointError, hasErrorCode, type DevmindErrorCode, type ErrorKind } from "./errors.js";
export { openDatabase, type DataDirProgress, type DataDirSource, type OpenDatabaseOptions } from "./db/open-database.js";
export type { Database, Queryable, QueryResult, Statement } from "./db/types.js";
export { migrate, migrationStatus, type MigrateResult, type MigrationState, type MigrateOptions } from "./db/migrate.js";
export { PostgresCheckpointSaver, type PostgresCheckpointSaverOptions } from "./checkpoint/postgres-saver.js";
export { defineTool, type Tool } from "./tools/define-tool.js";
export { ToolRegistry, type ToolRegistryOptions, type ToolCheck, type ModelToolDefinition } from "./tools/registry.js";
export { ToolFailure } from "./tools/tool-failure.js";
export { builtinTools, type BuiltinToolsOptions, type ImageSettings } from "./tools/builtin/index.js";
export { ensureWorkspace, resolveInWorkspace } from "./tools/workspace.js";
export type { ToolSpec, ToolContext, ToolResult, ToolErrorCode, SideEffect, ProposedToolCall } from "./tools/types.js";
export { RunCancelledError, ModelError } from "./errors.js";
export { createChatModel, type CreateChatModelOptions } from "./model/create-chat-model.js";
export { ScriptedChatModel, loadScriptFile, type ScriptedTurn, type ScriptedCall } from "./model/scripted-model.js";
export { buildAgentGraph, type BuildAgentGraphOptions, type AgentGraph } from "./graph/build-agent-graph.js";
export { DEFAULT_LIMITS, limitsFromConfig, resolveLimits, type AgentLimits } from "./vocabulary/limits.js";
export type { AgentEvent, EventSink } from "./vocabulary/events.js";
export type { AgentRunContext } from "./graph/run-context.js";
export type { StopReason, Usage, RunError, GuardDecision } from "./graph/state.js";
export type { ApprovalRequest, ActionRequest } from "./graph/approvals.js";
export { parseDecisions, parseDecision, type Decision, type DecisionType, type DecisionsBody } from "./vocabulary/decisions.js";
export { DEFAULT_SYSTEM_PROMPT } from "./graph/system-prompt.js";
export { createRuntime, type Runtime, type RunsApi, type RuntimeOptions, type LiveEvent, type FilesApi, type RuntimeHealth, type LiveSignal, type LiveSignalOptions, type ModelDelta, type DecisionRecord, type RequeueResult } from "./runtime/runtime.js";
export type { AssistantsApi, AssistantRecord, AssistantVersion, AssistantFields, AssistantSearchOptions } from "./runtime/assistants/assistant-store.js";
export type { CronCreateOptions, CronRecord, CronSearchOptions, CronsApi, CronUpdateOptions } from "./runtime/crons/crons-api.js";
export type { Worker, WorkerOptions } from "./runtime/queue/worker.js";
export type { RunRecord, RunStatus, RunInput, RunLimits } from "./runtime/queue/run-record.js";
export type { UnknownOutcome } from "./vocabulary/unknown-outcomes.js";
export { isRunEvent, type RunEvent, type RunEventEnvelope, type ForeignRunEvent, type StoredRunEvent } from "./runtime/events/event-store.js";
export { AttachmentStore, type StoredAttachment } from "./runtime/attachments/attachment-store.js";
export type { AttachmentInfo, AttachmentSink, NewAttachment } from "./tools/attachment-sink.js";
export { RunNotFoundError, RunConflictError, LeaseLostError, DrainError } from "./errors.js";
export { startServer, type StartServerOptions, type RunningServer } from "./server/start-server.js";
export type { ThreadsApi } from "./runtime/threads/threads-api.js";
export type { ThreadRecord, ThreadStatus } from "./runtime/threads/thread-store.js";
export { ThreadNotFoundError, HttpRequestError } from "./errors.js";
export { GraphDefinitionError, GraphNotFoundError } from "./errors.js";
export type { GraphEntry, GraphFactory, CompiledGraphLike, StateGraphLike } from "./graphs/graph-kinds.js";
export { readLanggraphConfig, findLanggraphConfig, type LanggraphConfig, type GraphSpec } from "./graphs/langgraph-config.js";
export { loadGraph, type LoadedGraph } from "./graphs/load-graphs.js";
export { ledgeredTool, ledgeredToolNode, type LedgeredToolOptions } from "./graphs/ledgered-tools.js";
export { runHandleOf, RUN_HANDLE_KEY, type RunHandle, type RunToolLedger, type GraphLedgerBegin } from "./graphs/run-handle.js";
export type { RunInterrupt, RunGraphConfig } from "./runtime/queue/run-record.js";
export type { ResumeBody } from "./runtime/interrupts/resume-plan.js";
export type { ResumeRecord, ResumeCommand } from "./runtime/interrupts/resume-store.js";
export {
  RUN_EVENT_TYPES,
  STORED_RUN_EVENT_TYPES,
  isKnownRunEvent,
  isRunEventType,
  type RunEventData,
  type RunEventType,
  type RunEventFields,
  type StoredRunEventData,
  type StoredRunEventType,
  type LiveOnlyEventType,
  type GraphRunEvent,
  type RunLifecycleEvent,
  type ResumeReason,
} from "./runtime/events/run-events.js";
/**
 * The long-term memory store: LangGraph's `BaseStore` on the same database as the checkpoints
 * (PostgreSQL or PGlite), for memory that outlives a thread. Pass it to
 * `builder.compile({ checkpointer, store })`; nodes use `config.store` / `getStore()`. TTLs in
 * minutes with refresh on read and `sweepExpired()`; semantic search with `index: { dims,
 * embeddings, fields }` where pgvector loads (`openDatabase({ vector: true })` on PGlite),
 * otherwise a query falls back to namespace and filter and `semanticSearch` says so.
 */
export { PostgresStore, type PostgresStoreOptions, type StoreTtlConfig, type StorePutOperation, type StoreReadOptions } from "./store/postgres-store.js";
export type { SemanticSearchStatus } from "./store/store-vectors.js";
export { StoreInputError } from "./errors.js";
/**
 * Metrics, OpenTelemetry traces and LangSmith tracing of a process, as `devmind serve` and
 * `devmind worker` start them (docs/operations.md): pass `observer` and `traceParent` to
 * `createRuntime`, the database through `observeDatabase`, then `attach` it for the queue gauges;
 * `metrics.render()` is the Prometheus exposition; `close()` flushes the exporters.
 */
export { startOperations, type Operations } from "./operations/operations.js";
export type { AttemptObserver, RunObserver } from "./runtime/execution/run-observer.js";
