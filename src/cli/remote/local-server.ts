import { loadConfig, type DevmindConfig } from "../../config.js";
import { createLogger } from "../../logger.js";
import { createRedactor } from "../../secret-redaction.js";
import { configSecrets } from "../../config.js";
import { openRuntime, withModelSpec, type OpenedRuntime, type OpenRuntimeOptions } from "../open-runtime.js";
import { remoteRuntime, type GraphFlags } from "./remote-runtime.js";
import { ServerClient } from "./server-client.js";

/**
 * Opens the runtime of a read or decide command (`runs`, `show`, `events`, `approve`, `reject`,
 * `resume`, `cancel`, `run --detach`; CONTRACT section 7). On the embedded database whose data
 * directory a local `devmind serve` / `dev` holds (its lock file names the server's URL), the
 * command goes through that server's HTTP API (remote-runtime.ts) instead of failing with
 * DATABASE_LOCKED: the same output and exit codes, the runs executed by the server's workers.
 * A server recorded in the lock that does not answer is DATABASE_LOCKED saying what to do. A lock
 * whose process is gone (the server was killed) is taken over by `openRuntime` as before — safe,
 * since no process writes the directory any more — and said on stderr; runs that process left
 * running are recovered (commands that change runs recover orphans). Otherwise: `openRuntime`.
 */
export async function openRuntimeOrServer(options: OpenRuntimeOptions = {}): Promise<OpenedRuntime> {
  const config = withModelSpec(options.config ?? loadConfig(), options.modelSpec);
  if (config.databaseUrl === undefined && config.dataDir !== "memory://") {
    // loaded only here: a command on PostgreSQL does not load the embedded database's modules for it
    const { embeddedDatabaseHolder } = await import("../../db/open-database.js");
    const holder = embeddedDatabaseHolder(config.dataDir);
    if (holder.state === "held" && holder.url !== null) return await throughServer(config, holder.url, { pid: holder.pid, lockFile: holder.path, ownerKey: holder.ownerKey });
    if (holder.state === "stale") {
      process.stderr.write(
        `devmind: process ${holder.pid}${holder.url === null ? "" : ` (a devmind server at ${holder.url})`}, which held ${config.dataDir}, is gone; ` +
          `this command takes the embedded database over (nothing is lost: runs it left running continue from their last checkpoint)\n`,
      );
    }
  }
  return openRuntime({ ...options, config });
}

async function throughServer(config: DevmindConfig, url: string, holder: { pid: number; lockFile: string; ownerKey: string | null }): Promise<OpenedRuntime> {
  const client = new ServerClient(url, config.server.apiKeys[0]?.key, { pid: holder.pid, lockFile: holder.lockFile }, holder.ownerKey);
  const graphs = await client.json<GraphFlags[]>("GET", "/graphs");
  const redactor = createRedactor(configSecrets(config));
  const logger = createLogger({ level: config.logLevel, redact: redactor.text });
  logger.debug({ event: "cli.through_server", url, pid: holder.pid }, "the embedded database is held by a local server: going through its API");
  return { config, database: { location: url, schema: config.dbSchema }, runtime: remoteRuntime(client, graphs), logger, redactor, operations: null, close: async () => undefined, server: url };
}
