import type { Command } from "commander";
import { CRON_DEFAULTS, GRAPHS_DEFAULTS } from "../constants.js";
import type { GraphEntry } from "../graphs/graph-kinds.js";
import type { CronRecord } from "../runtime/runtime.js";
import { integerOption, jsonOption } from "./cli-options.js";
import { cliName } from "./cli-name.js";
import { EXIT } from "./exit-codes.js";
import { foldArgs } from "./fold.js";
import { openRuntime } from "./open-runtime.js";
import { loadProjectGraphs } from "./project-graphs.js";

interface CreateOptions {
  schedule: string;
  timezone?: string;
  graph?: string;
  input?: string;
  thread?: string;
  endTime?: string;
  metadata?: string;
  enqueue?: boolean;
  disabled?: boolean;
  config?: string;
  json?: boolean;
}

/**
 * Registers `devmind crons list|create|delete`: scheduled runs on the configured database.
 * Workers (`devmind worker`, `devmind serve`) of any process create each due tick's run; a tick
 * missed while no worker ran fires once when one starts.
 */
export function registerCronsCommand(program: Command, setExitCode: (code: number) => void): void {
  const crons = program.command("crons").description("scheduled runs: list, create and delete crons");

  crons
    .command("list")
    .description("list crons, newest first")
    .option("--graph <id>", "only crons of this graph (assistant)")
    .option("--thread <id>", "only crons running on this thread")
    .option("--limit <n>", `at most this many (default ${CRON_DEFAULTS.searchLimit * 5})`, integerOption("--limit", 1, CRON_DEFAULTS.maxSearchLimit))
    .option("--json", "print one cron record per line")
    .action(async (options: { graph?: string; thread?: string; limit?: number; json?: boolean }) => {
      const opened = await openRuntime({ callsNoModel: true });
      try {
        const found = await opened.runtime.crons.search({ assistantId: options.graph, threadId: options.thread, limit: options.limit ?? CRON_DEFAULTS.searchLimit * 5 });
        for (const cron of found) process.stdout.write(`${options.json === true ? JSON.stringify(cron) : cronLine(cron)}\n`);
        if (found.length === 0 && options.json !== true) process.stderr.write("no crons\n");
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });

  crons
    .command("create")
    .description("schedule runs of a graph: every tick of --schedule creates a run with --input")
    .requiredOption("--schedule <cron>", 'a 5-field cron expression, e.g. "*/5 * * * *" (minute hour day-of-month month day-of-week)')
    .option("--timezone <tz>", "IANA time zone the schedule is read in (default UTC)")
    .option("--graph <id>", "the graph (assistant) to run, from ./langgraph.json or --config (default: its first graph, else agent)")
    .option("--input <json>", "the run input as JSON, or @FILE to read it from a file (the agent: {\"messages\": [...]})")
    .option("--thread <id>", "run every tick on this thread; default: a new thread per tick")
    .option("--end-time <iso>", "no tick after this time (ISO-8601)")
    .option("--metadata <json>", "metadata of the cron as a JSON object")
    .option("--enqueue", "when the thread is busy, queue the tick's run behind its active run (default: skip the tick)")
    .option("--disabled", "create it disabled")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .option("--json", "print the cron record as JSON")
    .action(async (options: CreateOptions, command: Command) => {
      if (options.input === undefined) command.error("error: missing --input: the run input of every tick (--input '{...}' or --input @file.json)", { exitCode: EXIT.usage });
      const input = jsonOption("--input", options.input);
      const metadata = options.metadata === undefined ? undefined : jsonOption("--metadata", options.metadata);
      if (metadata !== undefined && (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))) {
        command.error("error: --metadata must be a JSON object", { exitCode: EXIT.usage });
      }
      const project = await loadProjectGraphs(options.config);
      const graphId = options.graph ?? (project.graphs === undefined ? GRAPHS_DEFAULTS.defaultGraphId : firstGraph(project.graphs));
      const opened = await openRuntime({ callsNoModel: true, graphs: project.graphs });
      try {
        const cron = await opened.runtime.crons.create({
          assistantId: graphId,
          schedule: options.schedule,
          input,
          ...(options.timezone === undefined ? {} : { timezone: options.timezone }),
          ...(options.thread === undefined ? {} : { threadId: options.thread }),
          ...(options.endTime === undefined ? {} : { endTime: options.endTime }),
          ...(metadata === undefined ? {} : { metadata: metadata as Record<string, unknown> }),
          ...(options.enqueue === true ? { multitask: "enqueue" as const } : {}),
          ...(options.disabled === true ? { enabled: false } : {}),
        });
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(cron)}\n`);
        } else {
          process.stdout.write(`${cron.cron_id}\n`);
          const next = cron.next_run_date === null ? "no tick left (end time passed)" : `next run ${cron.next_run_date}`;
          process.stderr.write(`scheduled ${cron.assistant_id} "${cron.schedule}"${cron.timezone === null ? " (UTC)" : ` (${cron.timezone})`}; ${next}. Workers (\`${cliName()} worker\` or \`${cliName()} serve\`) create its runs.\n`);
        }
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });

  crons
    .command("delete")
    .description("delete a cron (the runs it created stay)")
    .argument("<cron-id>", "the cron to delete")
    .action(async (cronId: string) => {
      const opened = await openRuntime({ callsNoModel: true });
      try {
        await opened.runtime.crons.delete(cronId);
        process.stderr.write(`deleted cron ${cronId}\n`);
        setExitCode(EXIT.success);
      } finally {
        await opened.close();
      }
    });
}

/** `<cron id>  <graph>  <schedule> <tz>  <enabled>  next <date>  <thread|new thread>  <input>` */
function cronLine(cron: CronRecord): string {
  return [
    cron.cron_id,
    cron.assistant_id.padEnd(12),
    `${cron.schedule}${cron.timezone === null ? "" : ` ${cron.timezone}`}`.padEnd(24),
    (cron.enabled ? "enabled" : "disabled").padEnd(8),
    `next ${cron.next_run_date?.slice(0, 16) ?? "-"}`.padEnd(22),
    (cron.thread_id ?? "new thread").padEnd(12),
    foldArgs(cron.payload.input, 40),
  ].join("  ");
}

/** The first graph a project's langgraph.json names (what `--graph` defaults to there). */
function firstGraph(graphs: Record<string, GraphEntry | false>): string {
  return Object.entries(graphs).find(([, entry]) => entry !== false)?.[0] ?? GRAPHS_DEFAULTS.defaultGraphId;
}
