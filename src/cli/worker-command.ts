import type { Command } from "commander";
import { CONFIG_BOUNDS } from "../constants.js";
import { integerOption } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime } from "./open-runtime.js";
import { startService } from "./service-start.js";
import { onStopSignals } from "./stop-signals.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { startWorkerLog } from "./worker-log.js";
import { ConfigError } from "../errors.js";
import type { MetricsServer } from "../operations/metrics/metrics-server.js";

/**
 * Registers `devmind worker [--concurrency N]`: works the run queue until SIGINT / SIGTERM, then
 * drains (runs stop at a step boundary and go back to the queue) and exits 0; a second signal
 * exits at once (130). Prints a line per run it starts and ends. With the embedded database it is
 * the only process on the data directory.
 */
export function registerWorkerCommand(program: Command, setExitCode: (code: number) => void): void {
  const bounds = CONFIG_BOUNDS.workerConcurrency;
  program
    .command("worker")
    .description("execute queued runs until stopped (Ctrl-C drains)")
    .option("--concurrency <n>", "runs at once (default DEVMIND_WORKER_CONCURRENCY)", integerOption("--concurrency", bounds.min, bounds.max))
    .option("--config <path>", "the LangGraph config file naming the graphs to run (default ./langgraph.json; none: the built-in agent)")
    .option("--metrics-port <port>", "serve GET /metrics on this port (DEVMIND_HOST; 0 picks a free one; default: none)", integerOption("--metrics-port", 0, CONFIG_BOUNDS.port.max))
    .action(async (options: { concurrency?: number; config?: string; metricsPort?: number }) => {
      // graphs load first (a broken one is exit 2 before anything opens); their env applies to the config
      const project = await loadProjectGraphs(options.config);
      const { opened, stopLog, worker, concurrency, metricsServer } = await startService("worker", async () => {
        const opened = await openRuntime({ readyGraphs: "all", recoverOrphans: true, service: true, operations: true, graphs: project.graphs });
        let metricsServer: MetricsServer | undefined;
        try {
          // the port first: a taken one is exit 2 before the worker claims anything
          if (options.metricsPort !== undefined) {
            if (opened.operations?.metrics == null) throw new ConfigError("--metrics-port: metrics are off (DEVMIND_METRICS=false)", { variables: ["--metrics-port", "DEVMIND_METRICS"] });
            const { startMetricsServer } = await import("../operations/metrics/metrics-server.js");
            metricsServer = await startMetricsServer(opened.operations.metrics, opened.config.server.host, options.metricsPort);
          }
          const concurrency = options.concurrency ?? opened.config.worker.concurrency;
          const stopLog = await startWorkerLog(opened.runtime, (line) => void process.stdout.write(`worker: ${line}\n`));
          const worker = opened.runtime.worker({ concurrency });
          await worker.start();
          // expired memory-store items are deleted every DEVMIND_STORE_SWEEP_MINUTES while the worker runs,
          // threads past their TTL every THREAD_DEFAULTS.ttlSweepMinutes
          opened.runtime.store.start();
          opened.runtime.threads.startSweeper();
          return { opened, stopLog, worker, concurrency, metricsServer };
        } catch (error) {
          await metricsServer?.close();
          await opened.close();
          throw error;
        }
      });
      const signals = onStopSignals("worker: draining (runs stop at their next step and go back to the queue; again to quit at once)");
      try {
        process.stdout.write(`worker ready: ${concurrency} slot${concurrency === 1 ? "" : "s"} on ${opened.database.location} (schema ${opened.database.schema}), graphs ${opened.runtime.graphs.ids().join(", ")}${metricsServer === undefined ? "" : `, metrics at ${metricsServer.url}`}; Ctrl-C to stop\n`);
        await signals.stopped;
        await worker.stop();
        await opened.runtime.store.stop();
        await opened.runtime.threads.stopSweeper();
        await stopLog();
        await metricsServer?.close();
        process.stdout.write("worker stopped\n");
        setExitCode(EXIT.success);
      } finally {
        signals.dispose();
        await opened.close();
      }
    });
}
