import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type OfficialFile, selectOfficialFiles, UnknownOfficialFileError } from "./official-files.js";

/** What `npm run conformance -- ...` was asked to do. */
export interface ConformanceArgs {
  /** The langgraphjs bare git directory the official tests come from. */
  mirror: string;
  /** The official test files to run (all of OFFICIAL_FILES, or the one `--file` names). */
  files: OfficialFile[];
  /** Judge the official in-memory server instead of devmind (the reference numbers). */
  official: boolean;
  /** Keep the temp dir (tests, node_modules, logs, data) after the run. */
  keep: boolean;
  /** PostgreSQL URL: devmind runs on a fresh schema there instead of a fresh PGlite dir. */
  pg: string | undefined;
  /** Keys removed from a copy of langgraph.json: a DIAGNOSTIC run, not the real check. */
  diagnoseStrip: string[];
  /** The devmind checkout packed and installed. */
  devmindRepo: string;
  /** Where the full report is written. */
  reportPath: string;
  /** stream-sdk's beforeAll also points its `checkpointer` at the server's /history (opt-in variant, labelled). */
  serverHistory: boolean;
}

/** The usage line printed on a bad command line. */
export const USAGE =
  "usage: npm run conformance -- MIRROR_GIT_DIR [--file NAME] [--official] [--keep] [--pg URL] [--diagnose-strip KEY[,KEY]] [--devmind DIR] [--report PATH] [--server-history]\n" +
  "  MIRROR_GIT_DIR   a langgraphjs git dir (bare mirror), e.g. /work/.mirror/langchain-ai+langgraphjs/repo\n" +
  "  --file NAME      run one official file: api (api.test.mts), auth (auth.test.mts) or stream-sdk\n" +
  "                   (protocol-v2/stream-sdk.test.mts); default: all three, each on its own fresh database\n" +
  "  --official       judge the official in-memory server (@langchain/langgraph-api) instead of devmind\n" +
  "  --keep           keep the temp dir\n" +
  "  --pg URL         devmind on a fresh schema conf_<random> per file at URL (dropped after) instead of a fresh PGlite dir per file\n" +
  "  --diagnose-strip KEYS  serve a copy of langgraph.json without these keys (e.g. http,ui or graphs.agent_simple):\n" +
  "                   a DIAGNOSTIC run, NOT the real check\n" +
  "  --devmind DIR    the devmind checkout to pack (default: this repository)\n" +
  "  --report PATH    where the full report goes (default /tmp/devmind-conformance-<target>-<time>.txt)\n" +
  "  --server-history stream-sdk's beforeAll also sets its checkpointer to a reader of the server's\n" +
  "                   POST /threads/{id}/history (its fork case then picks the server's checkpoint; assertions\n" +
  "                   unchanged): a labelled variant, not the plain check";

/** Thrown for a bad command line; the message ends with the usage. */
export class UsageError extends Error {
  constructor(problem: string) {
    super(`${problem}\n${USAGE}`);
    this.name = "UsageError";
  }
}

/** A sortable local timestamp for file names: 20260101-120000. */
function stamp(now: Date): string {
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
}

/** Parses the arguments after `--`; throws UsageError. `defaultRepo` is the checkout this script is in. */
export function parseConformanceArgs(argv: readonly string[], defaultRepo: string, now = new Date()): ConformanceArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        file: { type: "string" },
        official: { type: "boolean", default: false },
        keep: { type: "boolean", default: false },
        pg: { type: "string" },
        "diagnose-strip": { type: "string" },
        devmind: { type: "string" },
        report: { type: "string" },
        "server-history": { type: "boolean", default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "MIRROR_GIT_DIR is missing" : `one MIRROR_GIT_DIR expected, got ${positionals.length} arguments`);
  const official = values.official === true;
  if (official && values.pg !== undefined) throw new UsageError("--pg applies to devmind only (the official server is in memory)");
  let files: OfficialFile[];
  try {
    files = selectOfficialFiles(values.file);
  } catch (error) {
    if (error instanceof UnknownOfficialFileError) throw new UsageError(error.message);
    throw error;
  }
  const diagnoseStrip = (values["diagnose-strip"] ?? "").split(",").map((key) => key.trim()).filter((key) => key !== "");
  const target = `${official ? "official" : "devmind"}${values.file === undefined ? "" : `-${files[0]?.name}`}${diagnoseStrip.length > 0 ? "-diagnostic" : ""}${values["server-history"] === true ? "-server-history" : ""}`;
  return {
    mirror: resolve(positionals[0] as string),
    files,
    official,
    keep: values.keep === true,
    pg: values.pg,
    diagnoseStrip,
    devmindRepo: resolve(values.devmind ?? defaultRepo),
    reportPath: resolve(values.report ?? `/tmp/devmind-conformance-${target}-${stamp(now)}.txt`),
    serverHistory: values["server-history"] === true,
  };
}
