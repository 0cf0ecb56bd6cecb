import { describe, expect, it } from "vitest";
import { ApiUrlLineMissingError, rewriteApiUrl } from "../../bench/conformance/api-url.js";
import { parseConformanceArgs, UsageError } from "../../bench/conformance/conformance-args.js";
import { serverErrorLines } from "../../bench/conformance/server-log.js";
import { stripConfigKeys } from "../../bench/conformance/strip-config.js";
import { formatSummary, summarizeVitestReport, VitestReportError } from "../../bench/conformance/vitest-report.js";

const TEST_FILE = [
  'import { Client } from "@langchain/langgraph-sdk";',
  "",
  'const API_URL = "http://localhost:2024";',
  "const client = new Client({ apiUrl: API_URL });",
  'const html = `<script src="http://localhost:2024/ui/x.js">`;',
].join("\n");

describe("rewriteApiUrl (npm run conformance)", () => {
  it("changes only the API_URL line to the chosen port", () => {
    const rewritten = rewriteApiUrl(TEST_FILE, 41234);
    const before = TEST_FILE.split("\n");
    const after = rewritten.split("\n");
    expect(after[2]).toBe('const API_URL = "http://localhost:41234";');
    // every other line is byte for byte the official one, including other mentions of 2024
    expect(after.filter((_, i) => i !== 2)).toEqual(before.filter((_, i) => i !== 2));
  });

  it("takes the line at any localhost port (auth.test.mts has 2025) and changes only that port", () => {
    const auth = TEST_FILE.replace('const API_URL = "http://localhost:2024";', 'const API_URL = "http://localhost:2025";');
    const after = rewriteApiUrl(auth, 41234).split("\n");
    expect(after[2]).toBe('const API_URL = "http://localhost:41234";');
    expect(after[4]).toBe('const html = `<script src="http://localhost:2024/ui/x.js">`;');
  });

  it("refuses a file without the line, or with the line changed", () => {
    expect(() => rewriteApiUrl(TEST_FILE.replace('const API_URL = "http://localhost:2024";', "const API_URL = process.env.API_URL;"), 41234)).toThrow(ApiUrlLineMissingError);
    expect(() => rewriteApiUrl(TEST_FILE.replace('localhost:2024";', 'example.com:2024";'), 41234)).toThrow(/found 0 times, not exactly once/);
  });

  it("refuses a file with the line twice (which one is meant is unknown)", () => {
    expect(() => rewriteApiUrl(`${TEST_FILE}\nconst API_URL = "http://localhost:2025";`, 41234)).toThrow(/found 2 times/);
  });
});

/** A vitest json report in the reporter's shape: one file, the given tests. */
function report(tests: Array<Record<string, unknown>>, file: Record<string, unknown> = {}): string {
  return JSON.stringify({ numTotalTests: tests.length, testResults: [{ name: "/tmp/x/tests/api.test.mts", status: "failed", message: "", assertionResults: tests, ...file }] });
}

describe("summarizeVitestReport (npm run conformance)", () => {
  const tests = [
    { ancestorTitles: ["assistants"], title: "create read update delete", status: "passed", failureMessages: [] },
    { ancestorTitles: ["threads crud"], title: "list threads", status: "failed", duration: 91, failureMessages: ["AssertionError: expected 3 to be +0\n    at api.test.mts:502:27\n    at a\n    at b"] },
    { ancestorTitles: ["subgraphs"], title: "get subgraphs", status: "failed", duration: 10_024, failureMessages: ["Error: STACK_TRACE_ERROR\n    at task (chunk.js:1:1)"] },
    { ancestorTitles: [], title: "generative ui", status: "skipped", failureMessages: [] },
    { ancestorTitles: [], title: "todo one", status: "todo", failureMessages: [] },
  ];

  it("counts passed, failed and skipped from the tests' statuses and names each failure", () => {
    const summary = summarizeVitestReport(report(tests));
    expect({ passed: summary.passed, failed: summary.failed, skipped: summary.skipped, total: summary.total }).toEqual({ passed: 1, failed: 2, skipped: 2, total: 5 });
    expect(summary.failures.map((f) => f.name)).toEqual(["threads crud > list threads", "subgraphs > get subgraphs"]);
  });

  it("prints the counts line and the first 3 lines of each error, and names the json reporter's timeout placeholder", () => {
    const text = formatSummary(summarizeVitestReport(report(tests)), 3);
    const lines = text.split("\n");
    expect(lines[0]).toBe("1 passed, 2 failed, 2 skipped (of 5 tests)");
    expect(text).toContain("- threads crud > list threads (0.1 s)\n    AssertionError: expected 3 to be +0\n    at api.test.mts:502:27\n    at a\n- ");
    expect(text).not.toContain("at b");
    expect(text).toContain("- subgraphs > get subgraphs (10.0 s)\n    Error: probably a test timeout");
  });

  it("reports a file that failed outside its tests (a beforeAll or import error) as a failure", () => {
    const summary = summarizeVitestReport(report([], { message: "Error: connect ECONNREFUSED 127.0.0.1:41234" }));
    expect(summary.failed).toBe(0);
    expect(summary.failures).toEqual([{ name: "(file) /tmp/x/tests/api.test.mts", message: "Error: connect ECONNREFUSED 127.0.0.1:41234", durationMs: null }]);
    expect(formatSummary(summary, 3)).toContain("ECONNREFUSED");
  });

  it("rejects text that is not a vitest json report", () => {
    expect(() => summarizeVitestReport("not json")).toThrow(VitestReportError);
    expect(() => summarizeVitestReport("{}")).toThrow(/no testResults/);
  });
});

describe("serverErrorLines (npm run conformance)", () => {
  it("finds devmind's request.failed lines and the official server's coloured 5xx access lines, not 2xx/4xx", () => {
    const log = [
      '{"level":"error","event":"request.failed","status":500,"path":"/runs"}',
      '{"level":"info","msg":"listening"}',
      "info:    ▪ --> GET /ok \u001b[32m200\u001b[0m 15ms",
      "info:    ▪ --> POST /threads/x/runs \u001b[31m500\u001b[0m 8ms",
      "info:    ▪ --> GET /assistants/x 404 3ms",
    ].join("\n");
    const lines = serverErrorLines(log);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("request.failed");
    expect(lines[1]).toBe("info:    ▪ --> POST /threads/x/runs 500 8ms");
  });
});

describe("stripConfigKeys and parseConformanceArgs (npm run conformance)", () => {
  it("removes top-level and dotted keys from a copy and names the ones that were not there", () => {
    const config = { graphs: { agent: "./agent.mts:graph", agent_simple: "./agent_simple.mts:graph" }, http: { app: "./http.mts:app" } };
    const { config: stripped, missing } = stripConfigKeys(config, ["http", "graphs.agent_simple", "ui"]);
    expect(stripped).toEqual({ graphs: { agent: "./agent.mts:graph" } });
    expect(missing).toEqual(["ui"]);
    expect(config.http).toEqual({ app: "./http.mts:app" });
  });

  it("takes one mirror dir and the flags, and refuses --pg with --official", () => {
    const args = parseConformanceArgs(["/m", "--keep", "--pg", "postgres://h/db", "--diagnose-strip", "http, graphs.x"], "/repo", new Date(2026, 0, 2, 3, 4, 5));
    expect(args).toMatchObject({ mirror: "/m", official: false, keep: true, pg: "postgres://h/db", diagnoseStrip: ["http", "graphs.x"], devmindRepo: "/repo" });
    expect(args.reportPath).toBe("/tmp/devmind-conformance-devmind-diagnostic-20260102-030405.txt");
    expect(() => parseConformanceArgs([], "/repo")).toThrow(UsageError);
    expect(() => parseConformanceArgs(["/m", "--official", "--pg", "postgres://h/db"], "/repo")).toThrow(/--pg applies to devmind only/);
  });
});

describe("devmindServeEnv (npm run conformance)", () => {
  it("serves POST /internal/truncate (the official tests wipe between groups and never read the answer) on only the database chosen", async () => {
    const { devmindServeEnv } = await import("../../bench/conformance/servers.js");
    process.env.DEVMIND_TEST_LEAK = "x";
    try {
      const pglite = devmindServeEnv({ kind: "pglite", dataDir: "/tmp/conf-data" });
      expect(pglite).toMatchObject({ DEVMIND_ALLOW_TRUNCATE: "true", DEVMIND_DATA_DIR: "/tmp/conf-data" });
      expect(pglite.DEVMIND_TEST_LEAK).toBeUndefined();
      expect(pglite.DATABASE_URL).toBeUndefined();
      const postgres = devmindServeEnv({ kind: "postgres", url: "postgres://h/db", schema: "conf_abc" });
      expect(postgres).toMatchObject({ DEVMIND_ALLOW_TRUNCATE: "true", DATABASE_URL: "postgres://h/db", DEVMIND_DB_SCHEMA: "conf_abc" });
      expect(postgres.DEVMIND_DATA_DIR).toBeUndefined();
    } finally {
      delete process.env.DEVMIND_TEST_LEAK;
    }
  });
});
