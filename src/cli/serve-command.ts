import type { Command } from "commander";
import { dirname } from "node:path";
import { CONFIG_BOUNDS } from "../constants.js";
import { loadConfig } from "../config.js";
import { findLanggraphConfig } from "../graphs/langgraph-config.js";
import { checkBindable } from "../server/bind-check.js";
import { integerOption } from "./cli-options.js";
import type { DevReloader } from "./dev-reloader.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime } from "./open-runtime.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { loadProjectHttp, startService } from "./service-start.js";
import { onStopSignals } from "./stop-signals.js";
import { openInBrowser } from "./open-browser.js";

/** Flags of `devmind serve` and `devmind dev`. */
interface ServeOptions {
  host?: string;
  port?: number;
  workers?: number;
  config?: string;
  /** `dev --open`: open the page in the browser once listening. */
  open?: boolean;
}

/**
 * Registers `devmind serve [--host H] [--port P] [--workers N]` (CONTRACT section 7): the HTTP API
 * and web page plus N in-process worker slots (default DEVMIND_WORKER_CONCURRENCY; 0 for none, then
 * runs execute on `devmind worker` processes). Prints `devmind serve: listening on URL` once bound.
 * A non-loopback host without DEVMIND_API_KEYS exits 2. SIGINT / SIGTERM: open streams end, the
 * workers drain (runs stop at a step boundary and go back to the queue), the database closes, exit
 * 0; a second signal exits at once.
 */
export function registerServeCommand(program: Command, setExitCode: (code: number) => void): void {
  serveFlags(program.command("serve").description("serve the HTTP API (LangGraph Platform subset) and the web page, with in-process workers")).action(
    async (options: ServeOptions) => setExitCode(await serveProject("serve", options)),
  );
}

/**
 * Registers `devmind dev [--port P] [--open]`: `serve` for development (CONTRACT section 7). The
 * project's graph modules, every project file they import, its langgraph.json and its env files
 * are watched; an edit reloads the graphs in this process (dev-reloader.ts) and running runs
 * continue on the new code from their next checkpoint; a graph that no longer loads leaves the
 * previous version serving and says why on stderr and on the page.
 */
export function registerDevCommand(program: Command, setExitCode: (code: number) => void): void {
  serveFlags(program.command("dev").description("serve for development: reload the project's graphs on every change, runs in flight continue on the new code"))
    .option("--open", "open the web page in the browser once listening")
    .action(async (options: ServeOptions) => setExitCode(await serveProject("dev", options)));
}

function serveFlags(command: Command): Command {
  const workerBounds = CONFIG_BOUNDS.workerConcurrency;
  return command
    .option("--host <host>", "interface to bind (default DEVMIND_HOST, 127.0.0.1)")
    .option("--port <port>", "port (default DEVMIND_PORT, 8787; 0 picks a free one)", integerOption("--port", 0, CONFIG_BOUNDS.port.max))
    .option("--workers <n>", "in-process worker slots (default DEVMIND_WORKER_CONCURRENCY; 0 for none)", integerOption("--workers", workerBounds.min, workerBounds.max))
    .option("--config <path>", "the LangGraph config file naming the graphs to serve (default ./langgraph.json; none: the built-in agent)");
}

/** Serves until SIGINT / SIGTERM; returns the exit code. */
async function serveProject(name: "serve" | "dev", options: ServeOptions): Promise<number> {
  const workersWanted = options.workers;
  const dev = name === "dev" ? await prepareDev(options.config) : undefined;
  // graphs load first (a broken one is exit 2 before anything opens); their env applies to the config
  const project = await loadProjectGraphs(options.config, { serve: true, ...(dev === undefined ? {} : { generation: dev.generation }) });
  const config = loadConfig();
  const { http, ui, auth } = await loadProjectHttp(project.config, { authTimeoutMs: config.server.authTimeoutMs });
  // before opening anything: a refused host should not migrate or lock the database first
  checkBindable(options.host ?? config.server.host, config, auth !== undefined);
  let reloader: DevReloader | undefined;
  const { opened, server, workers } = await startService(name, async () => {
    const opened = await openRuntime({ config, ...(workersWanted !== 0 ? { readyGraphs: "all" as const } : {}), recoverOrphans: workersWanted !== 0, service: true, operations: true, graphs: project.graphs });
    try {
      const workers = workersWanted ?? opened.config.worker.concurrency;
      if (dev !== undefined && project.config !== null && project.path !== null) {
        const { DevReloader } = await import("./dev-reloader.js");
        reloader = new DevReloader({
          configPath: project.path,
          runtime: opened.runtime,
          generations: dev.generations,
          generation: dev.generation,
          realEnv: dev.realEnv,
          logger: opened.logger.child({ component: "dev" }),
          say: (line, failed) => void (failed ? process.stderr : process.stdout).write(`${line}\n`),
        });
      }
      const { startServer } = await import("../server/start-server.js");
      const current = reloader;
      const server = await startServer({ runtime: opened.runtime, config: opened.config, host: options.host, port: options.port, workers, logger: opened.logger.child({ component: "server" }), http, ui, auth, metrics: opened.operations?.metrics, traceContext: opened.operations?.traceContext, localOwner: opened.announceServer !== undefined, ...(current === undefined ? {} : { dev: { status: () => current.status() } }) });
      return { opened, server, workers };
    } catch (error) {
      await opened.close();
      throw error;
    }
  });
  // CLI commands beside this server (embedded database) go through its API, as the local owner
  opened.announceServer?.(server.url, server.localOwnerKey);
  // as LangGraph's dev server tells its process where it listens (project code may build a Client from it)
  process.env["LANGGRAPH_API_URL"] ??= server.url;
  const signals = onStopSignals(`${name}: shutting down (streams end, runs stop at their next step and go back to the queue; again to quit at once)`);
  try {
    if (reloader !== undefined && project.config !== null) await reloader.start(project.config);
    const keys = opened.config.server.apiKeys.length;
    const watching = reloader === undefined ? "no langgraph.json here: the built-in agent, nothing to reload" : `reloading on changes to ${reloader.status().watched} project files`;
    // one write: whoever reads the listening line reads the page line with it
    process.stdout.write(
      `devmind ${name}: listening on ${server.url} (${workers} worker slot${workers === 1 ? "" : "s"}, schema ${opened.database.schema} at ${opened.database.location}, ` +
        `${auth !== undefined ? `auth handler ${auth.source}` : keys === 0 ? "no API keys: loopback only" : `${keys} API key${keys === 1 ? "" : "s"}`}); Ctrl-C to stop\n` +
        (dev === undefined ? "" : `devmind dev: the page is ${server.url}/ (${watching})\n`),
    );
    if (dev !== undefined) {
      if (options.open === true) openInBrowser(`${server.url}/`, (reason) => process.stderr.write(`devmind dev: could not open a browser (${reason}); open ${server.url}/\n`));
    }
    await signals.stopped;
    await reloader?.close();
    await server.close();
    process.stdout.write(`devmind ${name}: stopped\n`);
    return EXIT.success;
  } finally {
    signals.dispose();
    await reloader?.close();
    await opened.close();
  }
}

/**
 * Before `devmind dev` loads the graphs: the real environment's names (a config's `env` never
 * overrides them, at start or at a reload), tsx's hooks and the module generations of the project
 * directory (the config's, else the working directory), and the first generation to load under.
 */
async function prepareDev(explicitConfig: string | undefined): Promise<{ generations: import("../graphs/module-generations.js").ModuleGenerations; generation: number; realEnv: ReadonlySet<string> }> {
  const realEnv = new Set(Object.keys(process.env));
  const path = findLanggraphConfig(explicitConfig);
  const [{ registerTypeScript }, { trackModuleGenerations }] = await Promise.all([import("../graphs/load-graphs.js"), import("../graphs/module-generations.js")]);
  await registerTypeScript();
  const generations = trackModuleGenerations(path === null ? process.cwd() : dirname(path));
  return { generations, generation: generations.next(), realEnv };
}
