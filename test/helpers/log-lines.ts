import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/logger.js";

/** A logger whose JSON lines a test can read back. */
export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines(): Record<string, unknown>[];
  /** The lines whose `event` is `event`. */
  events(event: string): Record<string, unknown>[];
}

/** A real devmind logger (pino, redaction included) writing into memory. */
export function captureLog(level: "debug" | "info" | "warn" = "info"): CapturedLog {
  let text = "";
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ level, destination });
  const lines = (): Record<string, unknown>[] =>
    text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, events: (event) => lines().filter((line) => line["event"] === event) };
}

/** The JSON log lines in a process's stderr whose `event` is `event` (other text is skipped). */
export function stderrEvents(stderr: string, event: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed["event"] === event) out.push(parsed);
    } catch {
      // not a log line
    }
  }
  return out;
}
