/**
 * Global setup of the integration tests, run once per `vitest run` before any worker starts:
 *
 * - the built CLI: `dist/` is rebuilt (`tsc -p tsconfig.build.json`, as `npm run build`) unless
 *   it is current, and so are the CLI's two bundles; child processes run
 *   `node dist/src/cli/main.js`;
 * - the fixture programs: each of `test/fixtures/*.ts` bundled from its source with what it
 *   imports into .test-build/, run with plain `node` (see build-outputs.ts);
 * - one migrated PGlite template: the product's own (`dist/pglite-template`, which `npm run build`
 *   makes and every new embedded data directory is copied from; built here too when missing or
 *   stale, initdb being the slow part, 5-20 s on a loaded machine), opened once into the run's
 *   folder as any first open would, then copied for every embedded database a test needs
 *   (test/helpers/pglite-template.ts), in process and for child processes.
 *
 * The three run concurrently. The template's folder is provided to tests as `pgliteTemplate` and
 * removed in teardown together with every copy made under it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
import { buildPgliteTemplate } from "../../src/db/pglite-template-build.js";
import { buildCliBundle, bundleProgram } from "../../src/cli/cli-bundle-build.js";
import { CLI_BUNDLE } from "../../src/constants.js";
import { REPO_ROOT, buildIsCurrent, builtFixture, bundleIsCurrent, fixturePrograms, newestModuleTime, newestSourceTime } from "./build-outputs.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's scratch folder: the template lives in `template/`, copies go next to it. */
    testRunDir: string;
  }
}

const TSC = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
const BUILD_TIMEOUT_MS = 300_000;

/** Runs `tsc -p project` from the repository root; rejects with its output if it fails. */
function tsc(project: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TSC, "-p", project], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`tsc -p ${project} failed (${code}):\n${output}`));
    });
  });
}

/**
 * Builds `project` into `outDir` unless current. A type error still emits every file (tsc exits
 * non-zero all the same): then the tests run on what was emitted, with a warning, since the
 * typecheck (`npm run typecheck`, `.ci/run`) is where type errors fail; nothing emitted fails here.
 */
async function buildIfStale(project: string, outDir: string, dirs: string[]): Promise<void> {
  const settings = ["tsconfig.json", project];
  if (buildIsCurrent(outDir, dirs, settings)) return;
  try {
    await tsc(project);
  } catch (error) {
    if (!buildIsCurrent(outDir, dirs, settings)) throw error;
    console.warn(`[devmind tests] ${(error as Error).message.split("\n").slice(0, 6).join("\n")}\n(the emitted files are used)`);
  }
}

async function buildCli(): Promise<void> {
  await buildIfStale("tsconfig.build.json", join(REPO_ROOT, "dist"), ["src"]);
  // the bundles CLI children start from (src/cli/cli-entry.ts), as `npm run build` makes them
  const cliDir = join(REPO_ROOT, "dist", "src", "cli");
  const modulesTime = newestModuleTime(join(REPO_ROOT, "dist", "src"));
  const bundles = [CLI_BUNDLE.file, CLI_BUNDLE.graphsFile].map((file) => join(cliDir, file));
  if (!bundles.every((bundle) => bundleIsCurrent(bundle, modulesTime))) await buildCliBundle(cliDir);
}

/**
 * Bundles each fixture program straight from its TypeScript source (esbuild reads TypeScript and
 * resolves the sources' `.js` imports to their `.ts` files), unless its bundle is newer than every
 * source under src/ and test/fixtures/ and the compiler settings: no `tsc` run for the fixtures
 * (about 10 CPU-s and as many seconds before the first test could start). Type errors are the
 * typecheck's to report (`npm run typecheck`, `.ci/run`).
 */
async function buildFixtures(): Promise<void> {
  const sourcesTime = newestSourceTime(["src", "test/fixtures"], ["tsconfig.json"]);
  await Promise.all(
    fixturePrograms()
      .filter((script) => !bundleIsCurrent(builtFixture(script), sourcesTime))
      .map((script) => bundleProgram(join(REPO_ROOT, script), builtFixture(script))),
  );
}

async function buildTemplate(runDir: string): Promise<void> {
  await buildPgliteTemplate();
  const db = await openDatabase({ dataDir: join(runDir, "template") });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
}

/** Builds what the integration tests need; returns the teardown. */
export default async function setup(project: TestProject): Promise<() => void> {
  const runDir = mkdtempSync(join(tmpdir(), "devmind-test-run-"));
  try {
    await Promise.all([buildCli(), buildFixtures(), buildTemplate(runDir)]);
  } catch (error) {
    rmSync(runDir, { recursive: true, force: true });
    throw error;
  }
  project.provide("testRunDir", runDir);
  return () => rmSync(runDir, { recursive: true, force: true });
}
