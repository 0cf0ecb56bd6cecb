import type { Command } from "commander";
import { GRAPHS_DEFAULTS } from "../constants.js";
import { applyGraphEnv, findLanggraphConfig, readLanggraphConfig } from "../graphs/langgraph-config.js";
import { EXIT } from "./exit-codes.js";

/** One line of `devmind graphs`: the graph, where it comes from, and whether it loads. */
interface GraphLine {
  id: string;
  source: string;
  status: "loaded" | "error";
  kind?: string;
  error?: string;
}

/**
 * Registers `devmind graphs [--config PATH] [--json]`: the graphs of `./langgraph.json` (or
 * `--config`), each with its source and whether it loads (its kind) or why not. Without a config
 * file: the built-in agent. Exit 2 when any graph fails to load, so a deploy check can run it.
 */
export function registerGraphsCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("graphs")
    .description("list the graphs of ./langgraph.json (or --config) and whether each loads")
    .option("--config <path>", `the LangGraph config file (default ./${GRAPHS_DEFAULTS.configFile})`)
    .option("--json", "print one JSON object per graph")
    .action(async (options: { config?: string; json?: boolean }) => {
      const path = findLanggraphConfig(options.config);
      let lines: GraphLine[];
      if (path === null) {
        lines = [{ id: GRAPHS_DEFAULTS.builtinId, source: "built-in agent", status: "loaded", kind: "compiled" }];
      } else {
        const config = readLanggraphConfig(path);
        for (const warning of config.warnings) process.stderr.write(`devmind: warning: ${warning}\n`);
        applyGraphEnv(config.env);
        const { loadGraphs } = await import("../graphs/load-graphs.js");
        lines = (await loadGraphs(config.graphs)).map((graph) =>
          graph.error === undefined
            ? { id: graph.id, source: graph.source, status: "loaded", kind: graph.kind }
            : { id: graph.id, source: graph.source, status: "error", error: graph.error.message },
        );
      }
      for (const line of lines) {
        if (options.json === true) process.stdout.write(`${JSON.stringify(line)}\n`);
        else process.stdout.write(`${[line.id.padEnd(16), line.source.padEnd(32), line.status === "loaded" ? `loaded (${line.kind})` : `error: ${line.error}`].join("  ")}\n`);
      }
      setExitCode(lines.some((line) => line.status === "error") ? EXIT.usage : EXIT.success);
    });
}
