import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { CONFORMANCE } from "./conformance-constants.js";
import { startInGroup } from "./processes.js";
import { logTail, withoutAnsi } from "./server-log.js";
import { cleanEnv, OFFICIAL_SERVER_PROGRAM } from "./workspace.js";

/** A free TCP port on 127.0.0.1 (asks the kernel for port 0, then releases it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Where devmind keeps its data for one run. */
export type DevmindDatabase = { kind: "pglite"; dataDir: string } | { kind: "postgres"; url: string; schema: string };

/** A fresh schema name for `--pg`: conf_ and 12 random hex digits. */
export function freshSchemaName(): string {
  return `${CONFORMANCE.schemaPrefix}${randomBytes(6).toString("hex")}`;
}

/** Drops the run's schema (CASCADE); never throws, returns the error text if it could not. */
export async function dropSchema(url: string, schema: string): Promise<string | undefined> {
  if (!new RegExp(`^${CONFORMANCE.schemaPrefix}[0-9a-f]+$`).test(schema)) return `refusing to drop ${schema}: not a conformance schema`;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The environment `devmind serve` gets for the official tests: devmind's own variables of this
 * shell dropped (the run sees only the database chosen here), and DEVMIND_ALLOW_TRUNCATE set,
 * because the tests wipe the server between groups with `POST /internal/truncate` (and do not look
 * at its answer: without it, every count after a wipe is off by what the earlier tests left).
 */
export function devmindServeEnv(database: DevmindDatabase): NodeJS.ProcessEnv {
  const env = cleanEnv();
  for (const name of Object.keys(env)) if (name.startsWith("DEVMIND_") || name === "DATABASE_URL") delete env[name];
  env.DEVMIND_ALLOW_TRUNCATE = "true";
  if (database.kind === "pglite") env.DEVMIND_DATA_DIR = database.dataDir;
  else {
    env.DATABASE_URL = database.url;
    env.DEVMIND_DB_SCHEMA = database.schema;
  }
  return env;
}

/**
 * `devmind serve --config CONFIG --port PORT` from the installed package, cwd the config's
 * directory, on the given fresh database (environment: `devmindServeEnv`).
 */
export function startDevmind(options: { dir: string; configPath: string; port: number; database: DevmindDatabase; logFile: string }): ChildProcess {
  const env = devmindServeEnv(options.database);
  const bin = join(options.dir, "node_modules", ".bin", "devmind");
  return startInGroup(bin, ["serve", "--config", options.configPath, "--port", String(options.port)], {
    cwd: dirname(options.configPath),
    env,
    logFile: options.logFile,
  });
}

/**
 * The official in-memory server (@langchain/langgraph-api's spawnServer, as the tests' own
 * utils.server.mts starts it) on `localhost:PORT`.
 */
export function startOfficial(options: { dir: string; configPath: string; port: number; logFile: string }): ChildProcess {
  const program = join(options.dir, "official-server.mjs");
  writeFileSync(program, OFFICIAL_SERVER_PROGRAM);
  return startInGroup(process.execPath, [program, options.configPath, String(options.port)], {
    cwd: dirname(options.configPath),
    env: cleanEnv(),
    logFile: options.logFile,
  });
}

/** Thrown when the server exits or does not answer `GET /ok` in time; carries the log's tail. */
export class ServerStartError extends Error {
  constructor(reason: string, logFile: string) {
    let tail = "";
    try {
      tail = logTail(withoutAnsi(readFileSync(logFile, "utf8")), CONFORMANCE.logTailLines);
    } catch {
      tail = "(no log)";
    }
    super(`the server did not start: ${reason}\n--- last ${CONFORMANCE.logTailLines} lines of ${logFile} ---\n${tail}\n---`);
    this.name = "ServerStartError";
  }
}

/**
 * Whether a `GET /ok` status shows a server that is up: 200, or 401/403 from an auth handler (the
 * official server authenticates `/ok` too: with auth.test.mts's handler it answers 401 without a token).
 */
export function isUp(status: number): boolean {
  return status === 200 || status === 401 || status === 403;
}

/**
 * Polls `GET /ok` until it answers (`isUp`), the child exits, or CONFORMANCE.serverStartTimeoutMs passes
 * (ServerStartError with the log tail in the last two cases). Returns the seconds it took.
 */
export async function waitForOk(baseUrl: string, child: ChildProcess, logFile: string): Promise<number> {
  const started = Date.now();
  const deadline = started + CONFORMANCE.serverStartTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new ServerStartError(`it exited (${child.exitCode ?? child.signalCode}) before answering GET /ok`, logFile);
    }
    try {
      const response = await fetch(`${baseUrl}/ok`, { signal: AbortSignal.timeout(5_000) });
      if (isUp(response.status)) return (Date.now() - started) / 1000;
    } catch {
      // not listening yet
    }
    await sleep(CONFORMANCE.serverPollMs);
  }
  throw new ServerStartError(`GET ${baseUrl}/ok did not answer 200 (or an auth handler's 401/403) within ${CONFORMANCE.serverStartTimeoutMs / 1000} s`, logFile);
}
