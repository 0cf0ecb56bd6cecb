import type { Command } from "commander";
import { checkRunId } from "../runtime/queue/run-record.js";
import type { OutputOptions } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { Timeline } from "./timeline.js";
import { TimelineFeed } from "./timeline-feed.js";
import { CallDetails } from "./call-details.js";

/**
 * Registers `devmind events RUN_ID [--follow] [--json]`: the run's stored events in seq order,
 * as a timeline or as NDJSON; `--follow` keeps printing new ones until the run finishes (or
 * Ctrl-C, exit 0). Across processes this needs PostgreSQL (the embedded database has one process).
 */
export function registerEventsCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("events")
    .description("print a run's events (--follow: keep printing until the run finishes)")
    .argument("<run_id>", "the run")
    .option("--follow", "wait for new events until the run finishes")
    .option("--json", "one JSON event per line (CONTRACT section 6 shape)")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .action(async (runId: string, options: OutputOptions & { follow?: boolean }) => {
      checkRunId(runId);
      const opened = await openRuntimeOrServer({ callsNoModel: true });
      const stop = new AbortController();
      const onInterrupt = (): void => stop.abort();
      process.on("SIGINT", onInterrupt);
      try {
        const { runtime } = opened;
        const run = await runtime.runs.get(runId);
        const timeline = options.json === true ? null : new Timeline({ tty: false, verbose: options.verbose === true, write: (text) => void process.stdout.write(text) });
        timeline?.showNodes(!runtime.graphs.reportsSteps(run.graph_id));
        const feed = timeline === null ? null : new TimelineFeed(timeline, new CallDetails(runtime, run.thread_id, { once: options.follow !== true }), options.verbose === true);
        const events = runtime.runs.events(runId, { follow: options.follow === true, signal: stop.signal });
        for await (const event of events) {
          if (feed === null) process.stdout.write(`${JSON.stringify(event)}\n`);
          else feed.push(event);
        }
        await feed?.flush();
        timeline?.stop();
        setExitCode(EXIT.success);
      } finally {
        process.removeListener("SIGINT", onInterrupt);
        await opened.close();
      }
    });
}
