import type { Command } from "commander";
import { CLI_DEFAULTS, RUN_STORE_LIMITS } from "../constants.js";
import { isRunStatus, RUN_STATUSES, type RunRecord } from "../runtime/queue/run-record.js";
import { integerOption } from "./cli-options.js";
import { EXIT } from "./exit-codes.js";
import { foldArgs } from "./fold.js";
import { openRuntimeOrServer } from "./remote/local-server.js";

/** Registers `devmind runs [--status S] [--limit N] [--json]`: the latest runs, newest first. */
export function registerRunsCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("runs")
    .description("list recent runs, newest first")
    .option("--status <status>", `only runs in this status (${RUN_STATUSES.join(", ")})`)
    .option("--limit <n>", `at most this many (default ${CLI_DEFAULTS.runsListDefault})`, integerOption("--limit", 1, RUN_STORE_LIMITS.listMax))
    .option("--json", "print one run record per line")
    .action(async (options: { status?: string; limit?: number; json?: boolean }, command: Command) => {
      const status = options.status;
      if (status !== undefined && !isRunStatus(status)) command.error(`error: --status must be one of ${RUN_STATUSES.join(", ")}`, { exitCode: EXIT.usage });
      const opened = await openRuntimeOrServer({ callsNoModel: true });
      try {
        const runs = await opened.runtime.runs.list({ limit: options.limit ?? CLI_DEFAULTS.runsListDefault, ...(status === undefined ? {} : { status }) });
        // with runs of several graphs in view, each line names its graph
        const named = new Set(runs.map((run) => run.graph_id)).size > 1;
        for (const run of runs) process.stdout.write(`${options.json === true ? JSON.stringify(run) : runLine(run, named)}\n`);
        if (runs.length === 0 && options.json !== true) process.stderr.write("no runs\n");
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });
}

/**
 * `<run id>  <status>  <stop reason>  <rounds>r/<calls>t  <created>  <task>`; a run with calls
 * whose outcome is unknown says so before its task (`[N outcome unknown]`).
 */
function runLine(run: RunRecord, named: boolean): string {
  const unknown = run.unknown_outcomes.length;
  const task = `${unknown === 0 ? "" : `[${unknown} outcome unknown] `}${runTask(run, named)}`;
  const stop = run.stop_reason ?? "-";
  return [run.run_id, run.status.padEnd(11), stop.padEnd(16), `${run.model_rounds}r/${run.tool_calls}t`.padEnd(7), run.created_at.slice(0, 19), oneLine(task)].join("  ");
}

/** What the run was asked: the first of its input messages (of any graph that takes messages), or its input folded. */
function runTask(run: RunRecord, named: boolean): string {
  const messages = (run.input as { messages?: unknown } | null)?.messages;
  const prefix = named ? `[${run.graph_id}] ` : "";
  if (Array.isArray(messages) && messages.length > 0) {
    const first: unknown = messages[0];
    const content = (first as { content?: unknown } | null)?.content;
    return `${prefix}${typeof first === "string" ? first : typeof content === "string" ? content : foldArgs(first, 40)}`;
  }
  return `${prefix}${foldArgs(run.input, 40)}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
