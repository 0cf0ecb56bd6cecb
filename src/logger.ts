import { pino, type Logger as PinoLogger } from "pino";
import type { LogLevel } from "./config-schema.js";
import { redactText } from "./secret-redaction.js";

/**
 * devmind's structured log: one JSON object per line on stderr (CONTRACT section 2), with the
 * level from LOG_LEVEL. Every line passes through `redact` before it is written, so a secret that
 * reaches a log field or message is replaced whatever its shape.
 */
export type Logger = PinoLogger;

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Default: `info`. */
  level?: LogLevel | "silent";
  /** Where lines go. Default: stderr (file descriptor 2), written synchronously so no line is lost at exit. */
  destination?: NodeJS.WritableStream;
  /** Applied to each serialized line before it is written. Default: the pattern redactor. */
  redact?: (line: string) => string;
  /** Fields on every line, e.g. `{ component: "worker" }`. */
  base?: Record<string, unknown>;
}

/**
 * Creates a logger. Processes create one from the config (`createLogger({ level: config.logLevel })`)
 * and hand it down; library users who pass none get `silentLogger`, so embedding devmind never
 * writes to their stderr unasked.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const redact = options.redact ?? redactText;
  const destination = options.destination ?? pino.destination({ dest: 2, sync: true });
  return pino(
    {
      level: options.level ?? "info",
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: (line) => redact(line) },
    },
    destination,
  );
}

/** A logger that writes nothing (the library default). */
export const silentLogger: Logger = pino({ level: "silent" });
