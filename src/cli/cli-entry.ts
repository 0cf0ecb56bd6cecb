import { existsSync } from "node:fs";
import { join } from "node:path";
import { CLI_BUNDLE, GRAPHS_DEFAULTS } from "../constants.js";

/** What `cliEntryModule` decides from. */
export interface CliEntryInput {
  /** The arguments after the script. */
  args: readonly string[];
  /** The working directory, where `langgraph.json` is looked for. */
  cwd: string;
  /** Whether the one-file bundle (`CLI_BUNDLE.file`) exists next to the entry. */
  bundleExists: boolean;
  /** Whether the bundle of devmind's own modules (`CLI_BUNDLE.graphsFile`) exists next to the entry. */
  graphsBundleExists: boolean;
}

/**
 * Commands that never load a project's graphs, whatever the working directory or `--config`:
 * they start from the one-file bundle even in a project (`dockerfile` and `build` only read
 * `langgraph.json`). A command added here that did load graphs would fail loudly (loadGraphs
 * refuses inside that bundle), never load a second LangGraph.
 */
const COMMANDS_WITHOUT_GRAPHS: ReadonlySet<string> = new Set(["runs", "events", "cancel", "migrate", "demo", "dockerfile", "build"]);

/**
 * Which module starts this CLI invocation: the one-file bundle (`CLI_BUNDLE.file`), the bundle of
 * devmind's own modules (`CLI_BUNDLE.graphsFile`) or the separate compiled modules
 * (`CLI_BUNDLE.entry`). The one-file bundle holds its own copy of LangGraph, LangChain and zod,
 * so it is used only when no project graph can load: a graph imports `@langchain/langgraph` from
 * node_modules, and two copies of it in one process do not mix (their classes and `interrupt`
 * context differ). So whenever `./langgraph.json` exists or any argument is `--config` (any
 * command but COMMANDS_WITHOUT_GRAPHS, even as a task text: the rule errs to the slower, always
 * correct side), the graphs
 * bundle starts, which leaves every package to node_modules as the separate modules do (a third
 * less CPU than them: ~200 of devmind's modules parsed as one); the separate modules when it is
 * missing (a `tsc`-only build), and the separate modules when the one-file bundle is missing too.
 * loadGraphs refuses to run inside the one-file bundle, so a gap in this rule fails loudly rather
 * than loading a second LangGraph. `node dist/src/cli/cli-program.js` always starts the separate
 * modules (their source maps give TypeScript lines in a stack trace).
 */
export function cliEntryModule(input: CliEntryInput): string {
  const command = input.args.find((arg) => !arg.startsWith("-"));
  const graphsPossible =
    (command === undefined || !COMMANDS_WITHOUT_GRAPHS.has(command)) &&
    (input.args.some((arg) => arg === "--config" || arg.startsWith("--config=")) || existsSync(join(input.cwd, GRAPHS_DEFAULTS.configFile)));
  if (graphsPossible) return `./${input.graphsBundleExists ? CLI_BUNDLE.graphsFile : CLI_BUNDLE.entry}`;
  return `./${input.bundleExists ? CLI_BUNDLE.file : CLI_BUNDLE.entry}`;
}
