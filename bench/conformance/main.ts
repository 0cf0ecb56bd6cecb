/**
 * `npm run conformance -- MIRROR_GIT_DIR [--file NAME] [--official] [--keep] [--pg URL] [--diagnose-strip KEYS]`:
 * judges devmind's LangGraph API with the official server's own test files (OFFICIAL_FILES:
 * api.test.mts, auth.test.mts, protocol-v2/stream-sdk.test.mts of a langgraphjs mirror). In a temp
 * dir: extracts the tests (and the official sources they import), installs devmind (npm pack of
 * this checkout) beside the packages the tests import; then for each file: points it at a free port
 * (its API_URL line, or its beforeAll: the only change), serves its graphs config with
 * `devmind serve` on a fresh database (or, with --official, the official in-memory server), runs
 * vitest on it, and stops the server. Prints each file's counts and failures. Needs the mirror,
 * so it is not part of `npm test`. Exit 0 when every test of every file passed, 1 otherwise, 2 on
 * a bad command line.
 */
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rewriteApiUrl } from "./api-url.js";
import { rewriteBeforeAll } from "./before-all.js";
import { type ConformanceArgs, parseConformanceArgs, UsageError } from "./conformance-args.js";
import { CONFORMANCE } from "./conformance-constants.js";
import { runBounded, stopGroup } from "./processes.js";
import { type FileResult, filePassed, formatCountsTable, formatFileSections } from "./file-report.js";
import { type OfficialFile } from "./official-files.js";
import { runOfficialTests } from "./run-vitest.js";
import { serverErrorLines } from "./server-log.js";
import { type DevmindDatabase, dropSchema, freePort, freshSchemaName, startDevmind, startOfficial, waitForOk } from "./servers.js";
import { stripConfigKeys } from "./strip-config.js";
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
  server?: ChildProcess | undefined;
  schema?: { url: string; name: string } | undefined;
}

/** Stops the current file's server and drops its schema (each file's are undone before the next starts). */
async function undoFile(resources: Resources): Promise<void> {
  if (resources.server !== undefined) await stopGroup(resources.server, CONFORMANCE.stopGraceMs);
  resources.server = undefined;
  if (resources.schema !== undefined) {
    const problem = await dropSchema(resources.schema.url, resources.schema.name);
    log(problem === undefined ? `dropped schema ${resources.schema.name}` : `could not drop schema ${resources.schema.name}: ${problem}`);
    resources.schema = undefined;
  }
}

async function cleanUp(args: ConformanceArgs, resources: Resources): Promise<void> {
  await undoFile(resources);
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

/**
 * The langgraph.json a file is served with: its own (written first when the mirror has none for
 * its graphs), or for --diagnose-strip a stripped copy beside it (keys it lacks are named).
 */
function servedConfig(args: ConformanceArgs, dir: string, file: OfficialFile): { path: string; note: string | null } {
  const path = join(dir, file.config);
  if (file.writeConfig !== undefined) writeFileSync(path, `${JSON.stringify(file.writeConfig, null, 2)}\n`);
  if (args.diagnoseStrip.length === 0) return { path, note: null };
  const { config, missing } = stripConfigKeys(JSON.parse(readFileSync(path, "utf8")), args.diagnoseStrip);
  const copy = path.replace(/\.json$/, ".diagnose.json");
  writeFileSync(copy, `${JSON.stringify(config, null, 2)}\n`);
  const kept = missing.length === 0 ? "" : ` (it has no ${missing.join(", ")})`;
  return { path: copy, note: `DIAGNOSTIC RUN, NOT THE REAL CHECK: ${file.config} served without ${args.diagnoseStrip.join(", ")}${kept}` };
}

/** The file with its one change: its API_URL line, or its beforeAll, pointed at `port`. */
function pointAt(dir: string, file: OfficialFile, port: number, serverHistory: boolean): string {
  const path = join(dir, file.testFile);
  const source = readFileSync(path, "utf8");
  const history = serverHistory && file.rewrite.kind === "before-all" && file.rewrite.serverHistory !== undefined;
  const rewritten = file.rewrite.kind === "api-url" ? rewriteApiUrl(source, port, path) : rewriteBeforeAll(source, port, file.rewrite, path, history);
  writeFileSync(path, rewritten);
  if (file.rewrite.kind === "api-url") return `API_URL -> http://localhost:${port}`;
  return `beforeAll -> ${file.rewrite.urlVariable} = http://localhost:${port}${history ? "; SERVER-HISTORY VARIANT (--server-history): its checkpointer reads the server's /history" : ""}`;
}

/** Runs one file against a fresh server on a fresh database; never throws for the file's own failures. */
async function runFile(args: ConformanceArgs, resources: Resources, file: OfficialFile, header: string[]): Promise<FileResult> {
  const { dir } = resources;
  const base = `${args.reportPath.replace(/\.txt$/, "")}.${file.name}`;
  const serverLog = join(dir, `server.${file.name}.log`);
  const result: FileResult = { name: file.name, testFile: file.testFile, outcome: null, notRun: null, serverErrors: [] };
  try {
    const port = await freePort();
    const pointed = pointAt(dir, file, port, args.serverHistory);
    const config = servedConfig(args, dir, file);
    if (config.note !== null) {
      header.push(config.note);
      log(config.note);
    }
    if (args.official) {
      resources.server = startOfficial({ dir, configPath: config.path, port, logFile: serverLog });
      header.push(`${file.testFile}: ${pointed}; ${file.config}`);
    } else {
      let database: DevmindDatabase;
      let described: string;
      if (args.pg !== undefined) {
        const name = freshSchemaName();
        resources.schema = { url: args.pg, name };
        database = { kind: "postgres", url: args.pg, schema: name };
        described = `PostgreSQL, fresh schema ${name}`;
      } else {
        database = { kind: "pglite", dataDir: join(dir, `devmind-data.${file.name}`) };
        described = "a fresh PGlite data dir";
      }
      header.push(`${file.testFile}: ${pointed}; ${file.config}; ${described}`);
      resources.server = startDevmind({ dir, configPath: config.path, port, database, logFile: serverLog });
    }
    const startSeconds = await waitForOk(`http://localhost:${port}`, resources.server, serverLog);
    log(`${file.testFile}: server answers GET /ok (${startSeconds.toFixed(1)} s); running vitest (at most ${CONFORMANCE.vitestTimeoutMs / 60_000} min)`);
    result.outcome = await runOfficialTests(dir, file.testFile, `${base}.json`);
    log(`${file.testFile}: vitest ${result.outcome.seconds.toFixed(0)} s`);
  } catch (error) {
    result.notRun = error instanceof Error ? error.message : String(error);
    log(`${file.testFile}: NOT RUN: ${result.notRun.split("\n")[0]}`);
  } finally {
    await undoFile(resources);
    if (existsSync(serverLog)) {
      copyFileSync(serverLog, `${base}.server.log`);
      result.serverErrors = serverErrorLines(readFileSync(serverLog, "utf8"));
    }
  }
  return result;
}

async function run(args: ConformanceArgs, resources: Resources, header: string[]): Promise<number> {
  const { dir } = resources;
  const target = args.official ? "the official in-memory server (@langchain/langgraph-api)" : "devmind";
  log(`judging ${target} in ${dir}: ${args.files.map((file) => file.testFile).join(", ")}`);

  const mirrorCommit = await extractOfficialTests(args.mirror, dir, args.files.map((file) => file.testFile));
  header.push(`official tests: ${args.mirror} @ ${mirrorCommit}`);
  log(`extracted the tests of ${mirrorCommit.slice(0, 12)}`);

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

  const results: FileResult[] = [];
  for (const file of args.files) results.push(await runFile(args, resources, file, header));
  return report(args, header, results);
}

/** Prints the per-file counts and failures and writes the full report; returns the exit code. */
function report(args: ConformanceArgs, header: string[], results: FileResult[]): number {
  const counts = formatCountsTable(results);
  const sections = formatFileSections(results, CONFORMANCE.errorLines);
  const full = [
    ...header,
    `total time ${((Date.now() - started) / 1000).toFixed(0)} s; per file: vitest json ${args.reportPath.replace(/\.txt$/, "")}.NAME.json, server log .NAME.server.log`,
    "",
    counts,
    "",
    sections,
    ...results.flatMap((result) => [
      "",
      `=== ${result.testFile}: server log errors ===`,
      ...result.serverErrors.slice(0, 50).map((line) => `  ${line.slice(0, 400)}`),
      `=== ${result.testFile}: full failure messages ===`,
      ...(result.outcome?.summary?.failures ?? []).flatMap((failure) => [`--- ${failure.name}`, failure.message]),
      `=== ${result.testFile}: vitest output ===`,
      result.outcome?.output ?? result.notRun ?? "",
    ]),
  ].join("\n");
  writeFileSync(args.reportPath, full);
  process.stdout.write(`\n${header.join("\n")}\n\n${counts}\n\n${sections}\n`);
  log(`full report: ${args.reportPath}`);
  return results.every(filePassed) ? 0 : 1;
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
