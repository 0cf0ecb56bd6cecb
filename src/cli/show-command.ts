import type { Command } from "commander";
import { checkRunId } from "../runtime/queue/run-record.js";
import type { OutputOptions } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { openRequests, runSummary } from "./run-session.js";
import { Timeline } from "./timeline.js";
import { TimelineFeed } from "./timeline-feed.js";
import { CallDetails } from "./call-details.js";
import { foldArgs } from "./fold.js";
import { interruptLines, threadView, valueLines } from "./thread-view.js";
import { CLI_DEFAULTS } from "../constants.js";

/**
 * Registers `devmind show RUN_ID [--json]`: the run record, its thread's state (values, next
 * nodes, pending interrupts; read with the project's graphs, `./langgraph.json` or `--config`),
 * the calls it waits on, and its timeline from the stored events. `--json`: the record (without
 * `answer` for a graph that gives none), `pending_approvals` and `state` as one object.
 */
export function registerShowCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("show")
    .description("show a run: status, counts, its thread's values, pending approvals and interrupts, and its timeline")
    .argument("<run_id>", "the run")
    .option("--json", "print the run record and its thread's state as JSON")
    .option("--verbose", "show the full values and tool arguments, model usage, workers")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .action(async (runId: string, options: OutputOptions & { config?: string }) => {
      checkRunId(runId);
      const project = await loadProjectGraphs(options.config);
      const opened = await openRuntimeOrServer({ callsNoModel: true, graphs: project.graphs });
      try {
        const { runtime } = opened;
        const run = await runtime.runs.get(runId);
        const pending = run.waiting ? await openRequests(opened, runId) : [];
        const state = await threadView(runtime, run);
        const answers = runtime.graphs.reportsAnswer(run.graph_id);
        if (options.json === true) {
          const { answer, ...rest } = run;
          process.stdout.write(`${JSON.stringify({ ...rest, ...(answers ? { answer } : {}), pending_approvals: pending, state })}\n`);
          setExitCode(EXIT.success);
          return;
        }
        const out = (text: string): void => void process.stdout.write(text);
        out(`${await runSummary(runtime, run)}\n`);
        out(`thread ${run.thread_id} · graph ${run.graph_id} · attempt ${run.attempt} · created ${run.created_at} · updated ${run.updated_at}\n`);
        if (run.error !== null) out(`error [${run.error.code}] ${run.error.message}\n`);
        // a graph that says its answer shows it in the timeline; any other graph, its values
        if (!answers) for (const line of valueLines(state.values, options.verbose === true)) out(`${line}\n`);
        if (state.next.length > 0) out(`next: ${state.next.join(", ")}\n`);
        for (const request of pending) out(`waiting: ${request.name}(${foldArgs(request.args, CLI_DEFAULTS.foldedArgsChars)})  [call ${request.tool_call_id}]\n`);
        for (const line of interruptLines(state.interrupts)) out(`${line}\n`);
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
