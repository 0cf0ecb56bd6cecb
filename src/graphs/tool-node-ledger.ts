import { TOOL_LEDGER_METADATA } from "../constants.js";
import type { CompiledGraphLike } from "./graph-kinds.js";
import { ledgeredInner, ledgeredView, type InvocableTool } from "./ledgered-call.js";
import { graphNodes } from "./tool-nodes.js";

/** How a tool of a tool node runs in a devmind run. */
export type ToolLedgerMode =
  /** Effectively-once: a finished call is never repeated; one in flight at a crash is TOOL_OUTCOME_UNKNOWN. */
  | "ledgered"
  /** Ledgered, and re-run when its process died mid-call (`metadata.idempotent: true`). */
  | "idempotent"
  /** Out of the ledger (`metadata.devmind_ledger: false`): runs again whenever its node re-executes. */
  | "opted_out";

/** One tool node of a graph, as `devmind graphs` lists it. */
export interface ToolNodeReport {
  /** The node's name; inside a subgraph, its namespace first (`outer|inner|tools`). */
  node: string;
  /** LangGraph's `ToolNode` (`ToolNode`) or LangChain's agent tool node (`createAgent`, it runs `wrapToolCall` middleware). */
  kind: "ToolNode" | "createAgent";
  tools: { name: string; ledger: ToolLedgerMode }[];
}

/** A tool node as both LangGraph's `ToolNode` and LangChain's agent `ToolNode` hold their tools. */
interface ToolNodeLike {
  tools: unknown[];
  runTool: (...args: never[]) => unknown;
}

function isToolNode(value: unknown): value is ToolNodeLike {
  const candidate = value as Partial<ToolNodeLike> | null;
  return candidate !== null && typeof candidate === "object" && Array.isArray(candidate.tools) && typeof candidate.runTool === "function";
}

function isInvocable(value: unknown): value is InvocableTool {
  const candidate = value as Partial<InvocableTool> | null;
  return candidate !== null && typeof candidate === "object" && typeof candidate.name === "string" && typeof candidate.invoke === "function";
}

function modeOf(tool: InvocableTool): ToolLedgerMode {
  const metadata = tool.metadata ?? {};
  if (ledgeredInner(tool) === undefined && metadata[TOOL_LEDGER_METADATA.optOut] === false) return "opted_out";
  return metadata[TOOL_LEDGER_METADATA.idempotent] === true ? "idempotent" : "ledgered";
}

/**
 * The tool nodes of a runnable used as a node: the runnable itself, the steps of a sequence, the
 * runnable a binding (`withConfig`, `withRetry`) wraps.
 */
function toolNodesIn(runnable: unknown, depth = 0): ToolNodeLike[] {
  if (runnable === null || typeof runnable !== "object" || depth > 8) return [];
  if (isToolNode(runnable)) return [runnable];
  const candidate = runnable as { steps?: unknown; bound?: unknown };
  const inner = Array.isArray(candidate.steps) ? candidate.steps : candidate.bound === undefined ? [] : [candidate.bound];
  return inner.flatMap((step) => toolNodesIn(step, depth + 1));
}

/**
 * Puts every tool node of `graph` (and of the subgraphs LangGraph finds in it) on the run's tool
 * ledger, without code changes in the graph (CONTRACT section 3): each tool a node holds is
 * replaced by a ledgered view of it (`ledgeredView`) whose calls are effectively-once, keyed by
 * their tool call id; what the node returns is what it returned before. A tool with
 * `metadata.idempotent: true` re-runs when its process died mid-call; one with
 * `metadata.devmind_ledger: false` stays out. Outside a devmind run the views call the tools as
 * they are, so changing the graph's own tool nodes in place is safe; a tool already ledgered
 * (`ledgeredTool`) is kept. Returns the tool nodes found, for `devmind graphs`.
 *
 * Not reached: tools called from a node's own code (wrap them with `ledgeredTool`), subgraphs
 * invoked from a node's code, and tools a `wrapToolCall` middleware substitutes at call time.
 */
export function ledgerToolNodes(graph: CompiledGraphLike): ToolNodeReport[] {
  return scanToolNodes(graph, true);
}

/** The tool nodes of `graph` and how each tool would run, without changing anything. */
export function describeToolNodes(graph: CompiledGraphLike): ToolNodeReport[] {
  return scanToolNodes(graph, false);
}

function scanToolNodes(graph: CompiledGraphLike, wrap: boolean): ToolNodeReport[] {
  const reports: ToolNodeReport[] = [];
  const seen = new Set<ToolNodeLike>();
  for (const { path, runnable } of graphNodes(graph)) {
    for (const node of toolNodesIn(runnable)) {
      if (seen.has(node)) continue;
      seen.add(node);
      const tools = node.tools.filter(isInvocable);
      if (wrap) node.tools = node.tools.map((tool) => (isInvocable(tool) && ledgeredInner(tool) === undefined && modeOf(tool) !== "opted_out" ? ledgeredView(tool, modeOf(tool) === "idempotent") : tool));
      reports.push({ node: path, kind: "wrapToolCall" in node ? "createAgent" : "ToolNode", tools: tools.map((tool) => ({ name: tool.name, ledger: modeOf(tool) })) });
    }
  }
  return reports;
}
