import type { Command } from "commander";
import { checkRunId } from "../runtime/run-record.js";
import type { OutputOptions } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime } from "./open-runtime.js";
import { openRequests, summary } from "./run-session.js";
import { Timeline } from "./timeline.js";
import { TimelineFeed } from "./timeline-feed.js";
import { CallDetails } from "./call-details.js";
import { foldArgs } from "./fold.js";
import { CLI_DEFAULTS } from "../constants.js";

/**
 * Registers `devmind show RUN_ID [--json]`: the run record, the calls it waits on, and its
 * timeline from the stored events. `--json`: the record (plus `pending_approvals`) as one object.
 */
export function registerShowCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("show")
    .description("show a run: status, counts, answer, pending approvals and its timeline")
    .argument("<run_id>", "the run")
    .option("--json", "print the run record as JSON")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .action(async (runId: string, options: OutputOptions) => {
      checkRunId(runId);
      const opened = await openRuntime({ callsNoModel: true });
      try {
        const { runtime } = opened;
        const run = await runtime.runs.get(runId);
        const pending = run.status === "interrupted" ? await openRequests(opened, runId) : [];
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify({ ...run, pending_approvals: pending })}\n`);
          setExitCode(EXIT.success);
          return;
        }
        const out = (text: string): void => void process.stdout.write(text);
        out(`${summary(run)}\n`);
        out(`thread ${run.thread_id} · attempt ${run.attempt} · created ${run.created_at} · updated ${run.updated_at}\n`);
        if (run.error !== null) out(`error [${run.error.code}] ${run.error.message}\n`);
        for (const request of pending) out(`waiting: ${request.name}(${foldArgs(request.args, CLI_DEFAULTS.foldedArgsChars)})  [call ${request.tool_call_id}]\n`);
        out("timeline:\n");
        const timeline = new Timeline({ tty: false, verbose: options.verbose === true, write: (text) => out(`  ${text}`) });
        timeline.showNodes(!runtime.graphs.reportsSteps(run.graph_id));
        const feed = new TimelineFeed(timeline, new CallDetails(runtime, run.thread_id, { once: run.status !== "running" && run.status !== "pending" }), options.verbose === true);
        for await (const event of runtime.runs.events(runId)) feed.push(event);
        await feed.flush();
        timeline.stop();
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });
}
