import { describe, expect, it } from "vitest";
import { BeforeAllBlockError, rewriteBeforeAll } from "../../bench/conformance/before-all.js";
import { parseConformanceArgs, UsageError } from "../../bench/conformance/conformance-args.js";
import { type FileResult, filePassed, formatCountsTable, formatFileSections } from "../../bench/conformance/file-report.js";
import { OFFICIAL_FILES, selectOfficialFiles } from "../../bench/conformance/official-files.js";
import { isUp } from "../../bench/conformance/servers.js";

/** A test file in the shape of protocol-v2/stream-sdk.test.mts: a top-level beforeAll that starts a server in the test process. */
const EMBED_FILE = [
  'import { MemorySaver } from "@langchain/langgraph-checkpoint";',
  "let serverUrl: string;",
  "let checkpointer: MemorySaver;",
  "",
  "beforeAll(async () => {",
  "  checkpointer = new MemorySaver();",
  "  const app = makeApp({ checkpointer });",
  "  await new Promise<void>((resolve) => {",
  "    server = listen(app, (info) => {",
  "      serverUrl = `http://localhost:${info.port}`;",
  "      resolve();",
  "    });",
  "  });",
  "});",
  "",
  "afterAll(() => {",
  "  server?.close();",
  "});",
  "",
  'it("reads", async () => { beforeAll; });',
].join("\n");

const STREAM_SDK = { urlVariable: "serverUrl", keep: ["checkpointer = new MemorySaver();"] };

describe("rewriteBeforeAll (npm run conformance, stream-sdk.test.mts)", () => {
  it("replaces only the top-level beforeAll block: the kept lines, then the URL variable set to the port", () => {
    const after = rewriteBeforeAll(EMBED_FILE, 41234, STREAM_SDK).split("\n");
    const before = EMBED_FILE.split("\n");
    const start = before.indexOf("beforeAll(async () => {");
    const end = before.indexOf("});", start);
    // the lines before and after the block are byte for byte the official ones
    expect(after.slice(0, start)).toEqual(before.slice(0, start));
    const block = after.slice(start, start + 5);
    expect(block[0]).toBe("beforeAll(async () => {");
    expect(block[1]).toMatch(/^ {2}\/\/ npm run conformance: /);
    expect(block.slice(2)).toEqual(["  checkpointer = new MemorySaver();", '  serverUrl = "http://localhost:41234";', "});"]);
    expect(after.slice(start + 5)).toEqual(before.slice(end + 1));
    expect(after.join("\n")).not.toContain("makeApp");
  });

  it("--server-history: the URL, then the server-history checkpointer instead of the kept MemorySaver; the rest unchanged", () => {
    const official = OFFICIAL_FILES.find((file) => file.name === "stream-sdk");
    if (official?.rewrite.kind !== "before-all") throw new Error("stream-sdk rewrites its beforeAll");
    const after = rewriteBeforeAll(EMBED_FILE, 41234, official.rewrite, "stream-sdk.test.mts", true).split("\n");
    const before = EMBED_FILE.split("\n");
    const start = before.indexOf("beforeAll(async () => {");
    const end = before.indexOf("});", start);
    const lines = official.rewrite.serverHistory ?? [];
    expect(lines.length).toBeGreaterThan(2);
    const block = after.slice(start, start + 4 + lines.length);
    expect(block[2]).toBe('  serverUrl = "http://localhost:41234";');
    expect(block.slice(3, 3 + lines.length)).toEqual(lines.map((line) => `  ${line}`));
    expect(block.join("\n")).toContain("/history");
    expect(block.join("\n")).not.toContain("new MemorySaver()");
    expect(after.slice(start + 4 + lines.length)).toEqual(before.slice(end + 1));
    expect(parseConformanceArgs(["/m", "--file", "stream-sdk", "--server-history"], "/repo").serverHistory).toBe(true);
    expect(parseConformanceArgs(["/m"], "/repo").serverHistory).toBe(false);
  });

  it("refuses a file whose beforeAll is missing, doubled, never sets the URL, lacks a kept line or never closes", () => {
    expect(() => rewriteBeforeAll(EMBED_FILE.replace("beforeAll(async () => {", "beforeEach(async () => {"), 1, STREAM_SDK)).toThrow(/found 0 times/);
    expect(() => rewriteBeforeAll(`${EMBED_FILE}\nbeforeAll(async () => {\n});`, 1, STREAM_SDK)).toThrow(/found 2 times/);
    expect(() => rewriteBeforeAll(EMBED_FILE.replace("serverUrl = `", "otherUrl = `"), 1, STREAM_SDK)).toThrow(/does not set serverUrl/);
    expect(() => rewriteBeforeAll(EMBED_FILE, 1, { urlVariable: "serverUrl", keep: ["store = new InMemoryStore();"] })).toThrow(BeforeAllBlockError);
    expect(() => rewriteBeforeAll(EMBED_FILE.split("\n").slice(0, 12).join("\n"), 1, STREAM_SDK)).toThrow(/has no top-level `}\);`/);
  });
});

describe("selectOfficialFiles and --file (npm run conformance)", () => {
  it("runs api, auth and stream-sdk by default, each with its own config; --file picks one by name or path", () => {
    expect(selectOfficialFiles(undefined).map((file) => [file.testFile, file.config])).toEqual([
      ["tests/api.test.mts", "tests/graphs/langgraph.json"],
      ["tests/auth.test.mts", "tests/graphs/langgraph.auth.json"],
      ["tests/protocol-v2/stream-sdk.test.mts", "tests/graphs/langgraph.stream-sdk.json"],
    ]);
    expect(selectOfficialFiles("auth").map((file) => file.name)).toEqual(["auth"]);
    expect(selectOfficialFiles("auth.test.mts").map((file) => file.name)).toEqual(["auth"]);
    expect(selectOfficialFiles("protocol-v2/stream-sdk.test.mts").map((file) => file.name)).toEqual(["stream-sdk"]);
    expect(selectOfficialFiles("tests/api.test.mts").map((file) => file.name)).toEqual(["api"]);
    // the config written for stream-sdk names exactly the graphs its test process embeds
    expect(Object.keys((OFFICIAL_FILES[2]?.writeConfig?.["graphs"] ?? {}) as object)).toEqual(["agent", "agent_with_tools", "agent_with_stats"]);
  });

  it("parses --file into the files and the report name, and refuses an unknown one with the usage", () => {
    const args = parseConformanceArgs(["/m", "--file", "stream-sdk", "--official"], "/repo", new Date(2026, 0, 2, 3, 4, 5));
    expect(args.files.map((file) => file.name)).toEqual(["stream-sdk"]);
    expect(args.reportPath).toBe("/tmp/devmind-conformance-official-stream-sdk-20260102-030405.txt");
    expect(parseConformanceArgs(["/m"], "/repo").files).toHaveLength(3);
    expect(() => parseConformanceArgs(["/m", "--file", "embed.test.mts"], "/repo")).toThrow(UsageError);
    expect(() => parseConformanceArgs(["/m", "--file", "embed.test.mts"], "/repo")).toThrow(/names none of api \(api.test.mts\), auth/);
  });
});

describe("per-file report (npm run conformance)", () => {
  const outcome = (passed: number, failed: number, failures: Array<{ name: string; message: string }> = []) => ({
    summary: { passed, failed, skipped: 0, total: passed + failed, failures: failures.map((f) => ({ ...f, durationMs: null })) },
    problem: null,
    seconds: 1,
    output: "",
  });
  const results: FileResult[] = [
    { name: "api", testFile: "tests/api.test.mts", outcome: { ...outcome(65, 1, [{ name: "generative ui", message: "AssertionError: port" }]), summary: { passed: 65, failed: 1, skipped: 1, total: 67, failures: [{ name: "generative ui", message: "AssertionError: port", durationMs: null }] } }, notRun: null, serverErrors: [] },
    { name: "auth", testFile: "tests/auth.test.mts", outcome: outcome(46, 0), notRun: null, serverErrors: ["request.failed x"] },
    {
      name: "stream-sdk",
      testFile: "tests/protocol-v2/stream-sdk.test.mts",
      outcome: outcome(0, 6, Array.from({ length: 6 }, (_, i) => ({ name: `t${i}`, message: "Error: Protocol request failed: 404 Not Found" }))),
      notRun: null,
      serverErrors: [],
    },
    { name: "x", testFile: "tests/x.test.mts", outcome: null, notRun: "the server did not start: it exited (1)\nlog tail", serverErrors: [] },
  ];

  it("prints one counts line per file, a file that never ran with why", () => {
    expect(formatCountsTable(results).split("\n")).toEqual([
      "tests/api.test.mts                     65 of 66 passed (1 failed; 1 skipped)",
      "tests/auth.test.mts                    46 of 46 passed (0 failed)",
      "tests/protocol-v2/stream-sdk.test.mts  0 of 6 passed (6 failed)",
      "tests/x.test.mts                       NOT RUN: the server did not start: it exited (1)",
    ]);
    expect(results.map(filePassed)).toEqual([false, true, false, false]);
  });

  it("names each failure under its file, with the server log's error count", () => {
    const text = formatFileSections(results, 3);
    expect(text).toContain("== tests/api.test.mts\n65 passed, 1 failed, 1 skipped (of 67 tests)\n\nFailing:\n- generative ui\n    AssertionError: port\nserver log: 0 5xx");
    expect(text).toContain("== tests/auth.test.mts\n46 passed, 0 failed, 0 skipped (of 46 tests)\nserver log: 1 5xx / request.failed line\n");
    expect(text.match(/Protocol request failed: 404 Not Found/g)).toHaveLength(6);
    expect(text).toContain("== tests/x.test.mts\nNOT RUN: the server did not start: it exited (1)\nlog tail");
  });
});

describe("isUp (npm run conformance)", () => {
  it("takes GET /ok's 200, and an auth handler's 401/403 (the official server authenticates /ok), as up; a 5xx or 404 not", () => {
    expect([200, 401, 403, 404, 500, 503].map(isUp)).toEqual([true, true, true, false, false, false]);
  });
});
