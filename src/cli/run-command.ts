import type { Command } from "commander";
import { CONFIG_BOUNDS } from "../constants.js";
import type { RunLimits } from "../runtime/queue/run-record.js";
import { defaultPrincipal, integerOption, jsonOption, readStdin } from "./cli-options.js";
import { GRAPHS_DEFAULTS } from "../constants.js";
import type { GraphEntry } from "../graphs/graph-kinds.js";
import { loadProjectGraphs } from "./project-graphs.js";
import { EXIT } from "./exit-codes.js";
import { openRuntime, parseModelFlag } from "./open-runtime.js";
import { openRuntimeOrServer } from "./remote/local-server.js";
import { driveOptionsFrom, driveRun, resultLine } from "./run-session.js";
import { cliName } from "./cli-name.js";

interface RunOptions {
  thread?: string;
  graph?: string;
  input?: string;
  config?: string;
  model?: string;
  maxModelRounds?: number;
  maxToolCalls?: number;
  detach?: boolean;
  json?: boolean;
  verbose?: boolean;
  by?: string;
}

/**
 * Registers `devmind run [TASK]`: creates a run (TASK from the argument or stdin) and executes
 * it in this process with a live timeline, asking approvals on a terminal; `--detach` only
 * queues it for workers. `--max-*` become the run's own limits (stored with it, so they hold
 * when another process resumes it); `--model` replaces the configured model for this process.
 */
export function registerRunCommand(program: Command, setExitCode: (code: number) => void): void {
  const rounds = CONFIG_BOUNDS.maxModelRounds;
  const calls = CONFIG_BOUNDS.maxToolCalls;
  program
    .command("run")
    .description("run a task with the agent, or any graph with --graph/--input, in this process (or queue it with --detach)")
    .argument("[task]", "what to do (the agent's shorthand); read from stdin when omitted")
    .option("--graph <id>", "the graph (assistant) to run, from ./langgraph.json or --config (default: agent)")
    .option("--input <json>", "the graph's input as JSON, or @FILE to read it from a file")
    .option("--config <path>", "the LangGraph config file (default ./langgraph.json)")
    .option("--thread <id>", "continue this thread (conversation); default: a new one")
    .option("--model <spec>", "openai:NAME, scripted:PATH or a bare model name (overrides DEVMIND_MODEL)")
    .option("--max-model-rounds <n>", "model rounds for this run", integerOption("--max-model-rounds", rounds.min, rounds.max))
    .option("--max-tool-calls <n>", "tool calls for this run", integerOption("--max-tool-calls", calls.min, calls.max))
    .option("--detach", "only queue the run for workers and print its id")
    .option("--json", "print NDJSON: every run event, then a result line")
    .option("--verbose", "show full tool arguments, model usage, workers")
    .option("--by <name>", "who approves at the prompt (recorded with each decision)")
    .action(async (taskArgument: string | undefined, options: RunOptions, command: Command) => {
      // the command line is checked before the project's graphs load (their modules are most of
      // a command's start), so a usage error is refused at the cost of the CLI's own start
      if (taskArgument !== undefined && options.input !== undefined) command.error("error: give either a TASK or --input, not both", { exitCode: EXIT.usage });
      if (options.model !== undefined) {
        try {
          parseModelFlag(options.model);
        } catch (error) {
          command.error(`error: ${(error as Error).message}`, { exitCode: EXIT.usage });
        }
      }
      let input: unknown;
      if (options.input !== undefined) input = jsonOption("--input", options.input);
      else {
        const task = (taskArgument ?? (process.stdin.isTTY === true ? "" : await readStdin())).trim();
        if (task === "") command.error(`error: missing task: give it as an argument or on stdin (the graph gets { "messages": [TASK] }), or the graph's input with --input JSON`, { exitCode: EXIT.usage });
        input = { messages: [task] };
      }
      const project = await loadProjectGraphs(options.config);
      // the default graph is only a default: every graph runs the same way from here on
      const graphId = options.graph ?? (project.graphs === undefined ? GRAPHS_DEFAULTS.defaultGraphId : firstGraph(project.graphs));
      const limits: RunLimits = {
        ...(options.maxModelRounds === undefined ? {} : { maxModelRounds: options.maxModelRounds }),
        ...(options.maxToolCalls === undefined ? {} : { maxToolCalls: options.maxToolCalls }),
      };
      const detach = options.detach === true;
      // queued only: beside a local server holding the embedded database, through its API
      const opened = await (detach ? openRuntimeOrServer : openRuntime)({ readyGraphs: detach ? [] : [graphId], recoverOrphans: true, graphs: project.graphs, ...(options.model === undefined ? {} : { modelSpec: options.model }) });
      try {
        const { runtime } = opened;
        const run = await runtime.runs.create({ assistantId: graphId, input, limits, executeHere: !detach, ...(options.thread === undefined ? {} : { threadId: options.thread }) });
        if (detach) {
          if (options.json === true) {
            for await (const event of runtime.runs.events(run.run_id)) process.stdout.write(`${JSON.stringify(event)}\n`);
            process.stdout.write(`${JSON.stringify(await resultLine(runtime, run))}\n`);
          } else {
            process.stdout.write(`${run.run_id}\n`);
            process.stderr.write(`queued on thread ${run.thread_id}; a worker (\`${cliName()} worker\` or \`${cliName()} serve\`) will run it. Follow it: ${cliName()} events ${run.run_id} --follow\n`);
          }
          setExitCode(EXIT.success);
          return;
        }
        // the model matters to a graph that counts its model rounds
        const model = !runtime.graphs.reportsCounters(graphId) ? "" : ` · model ${opened.config.model === null ? "none" : opened.config.model.provider === "openai" ? `openai:${opened.config.model.name}` : `scripted:${opened.config.model.path}`}`;
        setExitCode(await driveRun(opened, run.run_id, driveOptionsFrom(options, options.by ?? defaultPrincipal(), `run ${run.run_id} · thread ${run.thread_id} · graph ${graphId}${model}`)));
      } finally {
        await opened.close();
      }
    });
}

/** The first graph a project's langgraph.json names (what `--graph` defaults to there). */
function firstGraph(graphs: Record<string, GraphEntry | false>): string {
  return Object.entries(graphs).find(([, entry]) => entry !== false)?.[0] ?? GRAPHS_DEFAULTS.defaultGraphId;
}
