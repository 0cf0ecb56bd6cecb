import type { Command } from "commander";
import { CONFIG_BOUNDS } from "../constants.js";
import { loadConfig } from "../config.js";
import { checkBindable } from "../server/bind-check.js";
import { integerOption } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime } from "./open-runtime.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { loadProjectHttp, startService } from "./service-start.js";
import { onStopSignals } from "./stop-signals.js";

/**
 * Registers `devmind serve [--host H] [--port P] [--workers N]` (CONTRACT section 7): the HTTP API
 * and web page plus N in-process worker slots (default DEVMIND_WORKER_CONCURRENCY; 0 for none, then
 * runs execute on `devmind worker` processes). Prints `devmind serve: listening on URL` once bound.
 * A non-loopback host without DEVMIND_API_KEYS exits 2. SIGINT / SIGTERM: open streams end, the
 * workers drain (runs stop at a step boundary and go back to the queue), the database closes, exit
 * 0; a second signal exits at once.
 */
export function registerServeCommand(program: Command, setExitCode: (code: number) => void): void {
  const workerBounds = CONFIG_BOUNDS.workerConcurrency;
  program
    .command("serve")
    .description("serve the HTTP API (LangGraph Platform subset) and the web page, with in-process workers")
    .option("--host <host>", "interface to bind (default DEVMIND_HOST, 127.0.0.1)")
    .option("--port <port>", "port (default DEVMIND_PORT, 8787; 0 picks a free one)", integerOption("--port", 0, CONFIG_BOUNDS.port.max))
    .option("--workers <n>", "in-process worker slots (default DEVMIND_WORKER_CONCURRENCY; 0 for none)", integerOption("--workers", workerBounds.min, workerBounds.max))
    .option("--config <path>", "the LangGraph config file naming the graphs to serve (default ./langgraph.json; none: the built-in agent)")
    .action(async (options: { host?: string; port?: number; workers?: number; config?: string }) => {
      const workersWanted = options.workers;
      // graphs load first (a broken one is exit 2 before anything opens); their env applies to the config
      const project = await loadProjectGraphs(options.config, { serve: true });
      const config = loadConfig();
      const { http, ui, auth } = await loadProjectHttp(project.config, { authTimeoutMs: config.server.authTimeoutMs });
      // before opening anything: a refused host should not migrate or lock the database first
      checkBindable(options.host ?? config.server.host, config, auth !== undefined);
      const { opened, server, workers } = await startService("serve", async () => {
        const opened = await openRuntime({ config, ...(workersWanted !== 0 ? { readyGraphs: "all" as const } : {}), recoverOrphans: workersWanted !== 0, service: true, operations: true, graphs: project.graphs });
        try {
          const workers = workersWanted ?? opened.config.worker.concurrency;
          const { startServer } = await import("../server/start-server.js");
          const server = await startServer({ runtime: opened.runtime, config: opened.config, host: options.host, port: options.port, workers, logger: opened.logger.child({ component: "server" }), http, ui, auth, metrics: opened.operations?.metrics, traceContext: opened.operations?.traceContext });
          return { opened, server, workers };
        } catch (error) {
          await opened.close();
          throw error;
        }
      });
      // as LangGraph's dev server tells its process where it listens (project code may build a Client from it)
      process.env["LANGGRAPH_API_URL"] ??= server.url;
      const signals = onStopSignals("serve: shutting down (streams end, runs stop at their next step and go back to the queue; again to quit at once)");
      try {
        const keys = opened.config.server.apiKeys.length;
        process.stdout.write(
          `devmind serve: listening on ${server.url} (${workers} worker slot${workers === 1 ? "" : "s"}, schema ${opened.database.schema} at ${opened.database.location}, ` +
            `${auth !== undefined ? `auth handler ${auth.source}` : keys === 0 ? "no API keys: loopback only" : `${keys} API key${keys === 1 ? "" : "s"}`}); Ctrl-C to stop\n`,
        );
        await signals.stopped;
        await server.close();
        process.stdout.write("devmind serve: stopped\n");
        setExitCode(EXIT.success);
      } finally {
        signals.dispose();
        await opened.close();
      }
    });
}
