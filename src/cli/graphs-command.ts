import type { Command } from "commander";
import { GRAPHS_DEFAULTS } from "../constants.js";
import type { ToolLedgerMode, ToolNodeReport } from "../graphs/tool-node-ledger.js";
import { applyProjectEnv, findLanggraphConfig, readLanggraphConfig } from "../graphs/langgraph-config.js";
import { warnSecondCopies } from "./project-graphs.js";
import type { ReplacedPersistence } from "../graphs/graph-kinds.js";
import { EXIT } from "./exit-codes.js";

/** What `devmind graphs` says about the tools it cannot list or that are not ledgered. */
const TOOL_NODE_NOTES = {
  factory: "tool nodes not listed: a factory graph is built per run (with the run's config); its tool nodes are ledgered then",
  none: "no tool nodes; tools a node calls from its own code are ledgered only when wrapped with ledgeredTool",
  some: "tools a node calls from its own code, or that a wrapToolCall middleware substitutes, are ledgered only when wrapped with ledgeredTool",
  builtin: "devmind's agent ledgers every tool call",
} as const;

/** One line of `devmind graphs`: the graph, where it comes from, whether it loads, and its tool nodes. */
interface GraphLine {
  id: string;
  source: string;
  status: "loaded" | "error";
  kind?: string;
  error?: string;
  /** The graph's tool nodes and how each tool runs (ledgered, idempotent, opted out); null when they cannot be listed. */
  tool_nodes?: ToolNodeReport[] | null;
  /** What is not listed or not ledgered, in words. */
  tool_nodes_note?: string;
  /** The checkpointer / store the graph was compiled with, which devmind replaces by its own (class names). */
  replaced?: ReplacedPersistence;
}

const LEDGER_WORDS: Record<ToolLedgerMode, string> = { ledgered: "ledgered", idempotent: "ledgered, idempotent: runs again after a crash", opted_out: "not ledgered (opted out)" };

/** The tool nodes of a loaded graph entry, or why they cannot be listed; and the persistence devmind replaces. */
async function toolNodesLine(entry: unknown): Promise<Pick<GraphLine, "tool_nodes" | "tool_nodes_note" | "replaced">> {
  const { graphToInspect, replacedPersistence } = await import("../graphs/graph-kinds.js");
  const { describeToolNodes } = await import("../graphs/tool-node-ledger.js");
  let graph;
  try {
    graph = graphToInspect(entry);
  } catch (error) {
    return { tool_nodes: null, tool_nodes_note: `tool nodes not listed: the graph does not compile (${error instanceof Error ? error.message : String(error)})` };
  }
  if (graph === null) return { tool_nodes: null, tool_nodes_note: TOOL_NODE_NOTES.factory };
  const reports = describeToolNodes(graph);
  const replaced = replacedPersistence(graph);
  return {
    tool_nodes: reports,
    tool_nodes_note: reports.length === 0 ? TOOL_NODE_NOTES.none : TOOL_NODE_NOTES.some,
    ...(replaced.checkpointer === undefined && replaced.store === undefined ? {} : { replaced }),
  };
}

function replacedWordsOf(replaced: ReplacedPersistence): string {
  return [replaced.checkpointer, replaced.store].filter((name): name is string => name !== undefined).join(" and ");
}

function toolNodeText(line: GraphLine): string[] {
  const nodes = (line.tool_nodes ?? []).map((node) => `  tool node ${node.node} (${node.kind}): ${node.tools.map((tool) => `${tool.name} [${LEDGER_WORDS[tool.ledger]}]`).join(", ") || "no tools"}`);
  return [...nodes, ...(line.tool_nodes_note === undefined ? [] : [`  ${line.tool_nodes_note}`])];
}

/**
 * Registers `devmind graphs [--config PATH] [--json]`: the graphs of `./langgraph.json` (or
 * `--config`), each with its source and whether it loads (its kind) or why not, and its tool
 * nodes with how each tool runs (CONTRACT section 3: ledgered, idempotent, opted out) — or why
 * they cannot be listed (a factory is resolved per run). Without a config file: the built-in
 * agent. Exit 2 when any graph fails to load, so a deploy check can run it.
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
        lines = [{ id: GRAPHS_DEFAULTS.builtinId, source: "built-in agent", status: "loaded", kind: "compiled", tool_nodes: null, tool_nodes_note: TOOL_NODE_NOTES.builtin }];
      } else {
        const config = readLanggraphConfig(path);
        for (const warning of config.warnings) process.stderr.write(`devmind: warning: ${warning}\n`);
        for (const warning of applyProjectEnv(config)) process.stderr.write(`devmind: warning: ${warning}\n`);
        const { loadGraphs } = await import("../graphs/load-graphs.js");
        lines = [];
        const loaded = await loadGraphs(config.graphs);
        warnSecondCopies([config.dir, ...config.graphs.map((spec) => spec.file)]);
        for (const graph of loaded) {
          lines.push(
            graph.error === undefined
              ? { id: graph.id, source: graph.source, status: "loaded", kind: graph.kind, ...(await toolNodesLine(graph.entry)) }
              : { id: graph.id, source: graph.source, status: "error", error: graph.error.message },
          );
        }
      }
      for (const line of lines) {
        if (options.json === true) process.stdout.write(`${JSON.stringify(line)}\n`);
        else {
          const head = [line.id.padEnd(16), line.source.padEnd(32), line.status === "loaded" ? `loaded (${line.kind})` : `error: ${line.error}`].join("  ");
          const replaced = line.replaced === undefined ? [] : [`  compiled with its own ${replacedWordsOf(line.replaced)}: devmind keeps its runs in its database instead`];
          process.stdout.write(`${[head, ...replaced, ...toolNodeText(line)].join("\n")}\n`);
        }
      }
      setExitCode(lines.some((line) => line.status === "error") ? EXIT.usage : EXIT.success);
    });
}
