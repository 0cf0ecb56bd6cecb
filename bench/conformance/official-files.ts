/**
 * The official test files `npm run conformance` judges with, each served with its own graphs
 * config on its own fresh database. Each file runs as the official package has it, but for ONE
 * change that points it at the server under test (see `rewrite`).
 */

/** How a file is pointed at the server under test. */
export type OfficialRewrite =
  /** Its one `const API_URL = "http://localhost:NNNN";` line gets the chosen port (api-url.ts). */
  | { kind: "api-url" }
  /**
   * Its top-level `beforeAll` block (which starts an in-process server) becomes one that sets
   * `urlVariable` to the server's URL and keeps the block's `keep` lines (before-all.ts).
   */
  | {
      kind: "before-all";
      urlVariable: string;
      keep: readonly string[];
      /**
       * With `--server-history` (opt-in, labelled in the report): these lines instead of `keep`
       * (the fork case reads the server's checkpoints instead of the test process's own saver;
       * every assertion unchanged).
       */
      serverHistory?: readonly string[];
    };

/** One official test file and how it is served. */
export interface OfficialFile {
  /** What `--file` names it by (its path is accepted too). */
  name: string;
  /** The test file, relative to the temp dir (the official package's `tests/` sits there). */
  testFile: string;
  /** The graphs' langgraph.json, relative to the temp dir. */
  config: string;
  /**
   * A langgraph.json the script writes at `config`, for a file whose graphs no config of the
   * mirror serves (stream-sdk's test process builds its own server from the graph modules).
   */
  writeConfig?: Record<string, unknown>;
  rewrite: OfficialRewrite;
}

/**
 * `--server-history`: stream-sdk's `checkpointer` (which its fork case lists to pick a checkpoint)
 * becomes a reader of the server's own checkpoints (`POST /threads/{id}/history`, newest first, as
 * MemorySaver lists them); the test process's MemorySaver never saw the server's runs.
 */
const SERVER_HISTORY_CHECKPOINTER: readonly string[] = [
  "// --server-history: the fork case lists the server's checkpoints (its /history), not this process's MemorySaver",
  "checkpointer = {",
  "  async *list(config: { configurable: { thread_id: string } }) {",
  "    const response = await fetch(`${serverUrl}/threads/${config.configurable.thread_id}/history`, { method: \"POST\", headers: { \"content-type\": \"application/json\" }, body: JSON.stringify({ limit: 1000 }) });",
  "    for (const state of (await response.json()) as any[]) {",
  "      yield { checkpoint: { id: state.checkpoint.checkpoint_id }, parentConfig: state.parent_checkpoint?.checkpoint_id ? { configurable: state.parent_checkpoint } : undefined };",
  "    }",
  "  },",
  "} as unknown as MemorySaver;",
];

/**
 * The files, in the order they run. `protocol-v2/stream-sdk.test.mts` embeds the graphs `agent`,
 * `agent_with_tools` and `agent_with_stats` of `tests/graphs/` in its own process; no langgraph.json
 * of the mirror names the last two, so the script writes one beside the others naming exactly the
 * three (with langgraph.json's `env` for `agent`, which reads its model name from it).
 */
export const OFFICIAL_FILES: readonly OfficialFile[] = [
  { name: "api", testFile: "tests/api.test.mts", config: "tests/graphs/langgraph.json", rewrite: { kind: "api-url" } },
  { name: "auth", testFile: "tests/auth.test.mts", config: "tests/graphs/langgraph.auth.json", rewrite: { kind: "api-url" } },
  {
    name: "stream-sdk",
    testFile: "tests/protocol-v2/stream-sdk.test.mts",
    config: "tests/graphs/langgraph.stream-sdk.json",
    writeConfig: {
      node_version: "20",
      graphs: { agent: "./agent.mts:graph", agent_with_tools: "./agent_with_tools.mts:graph", agent_with_stats: "./agent_with_stats.mts:graph" },
      env: { LANGGRAPH_CONFIG: '{"agent": {"configurable": {"model_name": "openai"}}}' },
    },
    rewrite: { kind: "before-all", urlVariable: "serverUrl", keep: ["checkpointer = new MemorySaver();"], serverHistory: SERVER_HISTORY_CHECKPOINTER },
  },
];

/** Thrown for a `--file` that names none of OFFICIAL_FILES. */
export class UnknownOfficialFileError extends Error {
  constructor(asked: string) {
    super(`--file ${JSON.stringify(asked)} names none of ${OFFICIAL_FILES.map((file) => `${file.name} (${file.testFile.replace(/^tests\//, "")})`).join(", ")}`);
    this.name = "UnknownOfficialFileError";
  }
}

/**
 * The files to run: all of them, or the one `asked` names — by name (`auth`) or by its path under
 * `tests/` (`auth.test.mts`, `protocol-v2/stream-sdk.test.mts`, `tests/...` too).
 */
export function selectOfficialFiles(asked: string | undefined): OfficialFile[] {
  if (asked === undefined) return [...OFFICIAL_FILES];
  const wanted = asked.trim().replace(/^\.\//, "");
  const found = OFFICIAL_FILES.find((file) => file.name === wanted || file.testFile === wanted || file.testFile === `tests/${wanted}`);
  if (found === undefined) throw new UnknownOfficialFileError(asked);
  return [found];
}
