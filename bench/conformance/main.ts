/**
 * `npm run conformance -- MIRROR_GIT_DIR [--official] [--keep] [--pg URL] [--diagnose-strip KEYS]`:
 * judges devmind's LangGraph API with the official server's own test file
 * (libs/langgraph-api/tests/api.test.mts of a langgraphjs mirror). In a temp dir: extracts the
 * tests, installs devmind (npm pack of this checkout) beside the packages the tests import,
 * points the test file's API_URL line (the only change) at a free port, serves the tests'
 * graphs/langgraph.json with `devmind serve` on a fresh database (or, with --official, the
 * official in-memory server), runs vitest and prints the counts and each failure. Needs the
 * mirror, so it is not part of `npm test`. Exit 0 when every test passed, 1 otherwise, 2 on a
 * bad command line.
 */
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rewriteApiUrl } from "./api-url.js";
import { type ConformanceArgs, parseConformanceArgs, UsageError } from "./conformance-args.js";
import { CONFORMANCE } from "./conformance-constants.js";
import { runBounded, stopGroup } from "./processes.js";
import { runOfficialTests, type VitestOutcome } from "./run-vitest.js";
import { serverErrorLines } from "./server-log.js";
import { type DevmindDatabase, dropSchema, freePort, freshSchemaName, startDevmind, startOfficial, waitForOk } from "./servers.js";
import { stripConfigKeys } from "./strip-config.js";
import { formatSummary } from "./vitest-report.js";
import { conformancePackageJson, extractOfficialTests, installWorkspace, packDevmind } from "./workspace.js";

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const started = Date.now();

function log(line: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stdout.write(`[conformance ${seconds}s] ${line}\n`);
}

/** The things to undo at the end (or on Ctrl-C). */
interface Resources {
  dir: string;
  server?: ChildProcess;
  schema?: { url: string; name: string };
}

async function cleanUp(args: ConformanceArgs, resources: Resources): Promise<void> {
  if (resources.server !== undefined) await stopGroup(resources.server, CONFORMANCE.stopGraceMs);
  if (resources.schema !== undefined) {
    const problem = await dropSchema(resources.schema.url, resources.schema.name);
    log(problem === undefined ? `dropped schema ${resources.schema.name}` : `could not drop schema ${resources.schema.name}: ${problem}`);
  }
  if (args.keep) log(`kept ${resources.dir}`);
  else {
    rmSync(resources.dir, { recursive: true, force: true });
    log(`removed ${resources.dir}`);
  }
}

/** `git describe`-like label of the devmind checkout: short commit, "+dirty" when it has changes. */
async function devmindLabel(repo: string): Promise<string> {
  const head = await runBounded("git", ["-C", repo, "rev-parse", "--short", "HEAD"], { cwd: repo, timeoutMs: 30_000 });
  const status = await runBounded("git", ["-C", repo, "status", "--porcelain", "--untracked-files=no"], { cwd: repo, timeoutMs: 30_000 });
  return `${head.output.trim()}${status.output.trim() === "" ? "" : "+dirty"}`;
}

/** The langgraph.json served: the official one, or for --diagnose-strip a stripped copy beside it. */
function servedConfig(args: ConformanceArgs, dir: string): { path: string; note: string | null } {
  const path = join(dir, CONFORMANCE.langgraphConfig);
  if (args.diagnoseStrip.length === 0) return { path, note: null };
  const { config, missing } = stripConfigKeys(JSON.parse(readFileSync(path, "utf8")), args.diagnoseStrip);
  if (missing.length > 0) throw new Error(`--diagnose-strip: langgraph.json has no ${missing.join(", ")}`);
  const copy = join(dirname(path), "langgraph.diagnose.json");
  writeFileSync(copy, `${JSON.stringify(config, null, 2)}\n`);
  return { path: copy, note: `DIAGNOSTIC RUN, NOT THE REAL CHECK: langgraph.json served without ${args.diagnoseStrip.join(", ")}` };
}

async function run(args: ConformanceArgs, resources: Resources, header: string[]): Promise<number> {
  const { dir } = resources;
  const target = args.official ? "the official in-memory server (@langchain/langgraph-api)" : "devmind";
  log(`judging ${target} in ${dir}`);

  const mirrorCommit = await extractOfficialTests(args.mirror, dir);
  header.push(`official tests: ${args.mirror} @ ${mirrorCommit} (${CONFORMANCE.testFile})`);
  const port = await freePort();
  const testPath = join(dir, CONFORMANCE.testFile);
  writeFileSync(testPath, rewriteApiUrl(readFileSync(testPath, "utf8"), port, testPath));
  log(`extracted the tests of ${mirrorCommit.slice(0, 12)}; API_URL -> http://localhost:${port}`);

  let tarball: string | null = null;
  if (!args.official) {
    tarball = await packDevmind(args.devmindRepo, dir, log);
    header.push(`devmind: ${args.devmindRepo} @ ${await devmindLabel(args.devmindRepo)} (${tarball})`);
    log(`packed devmind: ${tarball}`);
  }
  const installStarted = Date.now();
  const packageJson = conformancePackageJson({ devmindRepo: args.devmindRepo, tarball, mirrorPackage: join(dir, CONFORMANCE.officialPackageCopy), official: args.official });
  await installWorkspace(dir, packageJson, join(dir, "npm-install.log"));
  log(`npm install done (${((Date.now() - installStarted) / 1000).toFixed(0)} s)`);

  const config = servedConfig(args, dir);
  if (config.note !== null) {
    header.push(config.note);
    log(config.note);
  }
  const serverLog = join(dir, "server.log");
  if (args.official) {
    resources.server = startOfficial({ dir, configPath: config.path, port, logFile: serverLog });
  } else {
    let database: DevmindDatabase;
    if (args.pg !== undefined) {
      const name = freshSchemaName();
      resources.schema = { url: args.pg, name };
      database = { kind: "postgres", url: args.pg, schema: name };
      header.push(`database: PostgreSQL, fresh schema ${name}`);
    } else {
      database = { kind: "pglite", dataDir: join(dir, "devmind-data") };
      header.push("database: fresh PGlite data dir");
    }
    resources.server = startDevmind({ dir, configPath: config.path, port, database, logFile: serverLog });
  }
  const startSeconds = await waitForOk(`http://localhost:${port}`, resources.server, serverLog);
  log(`server answers GET /ok (${startSeconds.toFixed(1)} s); running vitest (at most ${CONFORMANCE.vitestTimeoutMs / 60_000} min)`);

  const reportJson = args.reportPath.replace(/\.txt$/, "") + ".json";
  const outcome = await runOfficialTests(dir, reportJson);
  await stopGroup(resources.server, CONFORMANCE.stopGraceMs);
  const serverLogCopy = args.reportPath.replace(/\.txt$/, "") + ".server.log";
  if (existsSync(serverLog)) copyFileSync(serverLog, serverLogCopy);
  const errors = existsSync(serverLog) ? serverErrorLines(readFileSync(serverLog, "utf8")) : [];
  header.push(`server start ${startSeconds.toFixed(1)} s; vitest ${outcome.seconds.toFixed(0)} s; server log: ${serverLogCopy}; vitest json: ${reportJson}`);
  return report(args, header, outcome, errors);
}

/** Prints the summary and writes the full report; returns the exit code. */
function report(args: ConformanceArgs, header: string[], outcome: VitestOutcome, errors: string[]): number {
  const summaryText = outcome.summary === null ? `NO RESULT: ${outcome.problem}` : formatSummary(outcome.summary, CONFORMANCE.errorLines);
  const errorsLine = `server log: ${errors.length} 5xx / request.failed line${errors.length === 1 ? "" : "s"}`;
  const full = [
    ...header,
    `total time ${((Date.now() - started) / 1000).toFixed(0)} s`,
    "",
    summaryText,
    "",
    errorsLine,
    ...errors.slice(0, 50).map((line) => `  ${line.slice(0, 400)}`),
    "",
    "=== full failure messages ===",
    ...(outcome.summary?.failures ?? []).flatMap((failure) => [`--- ${failure.name}`, failure.message]),
    "",
    "=== vitest output ===",
    outcome.output,
  ].join("\n");
  writeFileSync(args.reportPath, full);
  process.stdout.write(`\n${header.join("\n")}\n\n${summaryText}\n\n${errorsLine}\n`);
  log(`full report: ${args.reportPath}`);
  return outcome.summary !== null && outcome.summary.failed === 0 && outcome.summary.failures.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  let args: ConformanceArgs;
  try {
    args = parseConformanceArgs(process.argv.slice(2), REPO_ROOT);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  const resources: Resources = { dir: mkdtempSync(join(tmpdir(), "devmind-conformance-")) };
  const header = [`conformance of ${args.official ? "the OFFICIAL server (reference)" : "devmind"}, ${new Date().toISOString()}`];
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log("interrupted: cleaning up");
    void cleanUp(args, resources).finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await run(args, resources, header);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    writeFileSync(args.reportPath, `${header.join("\n")}\n\nFAILED BEFORE THE TESTS RAN:\n${message}\n`);
    process.stderr.write(`\nconformance: FAILED BEFORE THE TESTS RAN:\n${message}\n`);
    log(`report: ${args.reportPath}`);
    return 1;
  } finally {
    if (!interrupted) await cleanUp(args, resources);
  }
}

process.exitCode = await main();
