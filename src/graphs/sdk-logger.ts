import { createLogger, type Logger } from "../logger.js";

/**
 * Where `getLogger()` of `@langchain/langgraph-sdk/logging` finds the server's logger: LangGraph's
 * server puts a winston logger on `globalThis` under this symbol before it loads the graphs, and
 * the SDK's `getLogger()` throws when nothing is there.
 */
const SDK_LOGGER_SYMBOL = Symbol.for("langgraph.api.sdk-logger");

/** The level methods of a winston logger, as the SDK's `Logger` type lists them, and devmind's level for each. */
const LEVELS = {
  error: "error",
  warn: "warn",
  help: "info",
  data: "info",
  info: "info",
  http: "info",
  prompt: "info",
  input: "info",
  verbose: "debug",
  debug: "debug",
  silly: "debug",
} as const;

type SdkLogMethod = (message?: unknown, ...meta: unknown[]) => SdkLogger;
/** What `getLogger()` returns: winston's leveled methods (message and meta objects, or one info object). */
export type SdkLogger = { [level in keyof typeof LEVELS]: SdkLogMethod };

let target: Logger | undefined;

/** The lines of graph code until `attachSdkLogger` names the process's logger (LOG_LEVEL is read later than graphs load). */
function currentTarget(): Logger {
  target ??= createLogger({ level: "info", base: { component: "graph" } });
  return target;
}

/** `("text", {a: 1}, {b: 2})`, `({message, ...fields})` or `(anything)` as a pino call: merged fields and a message. */
function toLine(message: unknown, meta: unknown[]): { fields: Record<string, unknown>; text: string } {
  const fields: Record<string, unknown> = {};
  const extra: unknown[] = [];
  for (const item of meta) {
    if (item instanceof Error) fields["err"] = { name: item.name, message: item.message, stack: item.stack };
    else if (item !== null && typeof item === "object" && !Array.isArray(item)) Object.assign(fields, item);
    else extra.push(item);
  }
  if (extra.length > 0) fields["meta"] = extra;
  if (typeof message === "string") return { fields, text: message };
  if (message instanceof Error) return { fields: { ...fields, err: { name: message.name, message: message.message, stack: message.stack } }, text: message.message };
  if (message !== null && typeof message === "object" && !Array.isArray(message)) {
    const { message: inner, ...rest } = message as Record<string, unknown>;
    return { fields: { ...rest, ...fields }, text: typeof inner === "string" ? inner : inner === undefined ? "" : JSON.stringify(inner) };
  }
  return { fields, text: message === undefined ? "" : JSON.stringify(message) ?? String(message) };
}

function sdkLogger(): SdkLogger {
  const logger: Record<string, SdkLogMethod> = {};
  for (const [method, level] of Object.entries(LEVELS)) {
    logger[method] = (message: unknown, ...meta: unknown[]) => {
      const { fields, text } = toLine(message, meta);
      currentTarget()[level]({ event: "graph.log", ...fields }, text);
      return logger as SdkLogger;
    };
  }
  return logger as SdkLogger;
}

/**
 * Puts a logger where the SDK's `getLogger()` finds it (as LangGraph's server does before it loads
 * graphs), so a graph module that calls `getLogger()` at import loads in devmind. Its lines are
 * devmind's JSON log lines on stderr (`event: "graph.log"`, winston's levels mapped onto devmind's:
 * verbose and silly are debug, help/data/http/prompt/input are info). Idempotent; a logger already
 * registered by someone else (an embedding LangGraph server) is kept.
 */
export function registerSdkLogger(): void {
  const holder = globalThis as unknown as Record<symbol, unknown>;
  if (holder[SDK_LOGGER_SYMBOL] !== undefined) return;
  holder[SDK_LOGGER_SYMBOL] = sdkLogger();
}

/**
 * Sends the SDK logger's lines to `logger` (the process's, at LOG_LEVEL, with its redaction) once
 * the command has built it; until then they go to stderr at info.
 */
export function attachSdkLogger(logger: Logger): void {
  target = logger.child({ component: "graph" });
}
