import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONFORMANCE } from "./conformance-constants.js";
import { assertSucceeded, runBounded } from "./processes.js";

/** Packages the test file and its graphs import that devmind itself does not depend on; their ranges come from the official package.json. */
const TEST_ONLY_PACKAGES = ["postgres", "wait-port", "jose"] as const;

/** Packages pinned to devmind's own versions, so the temp dir holds ONE LangGraph, core and SDK. */
const DEVMIND_PINNED = [
  "@langchain/core",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-sdk",
  "@electric-sql/pglite",
  "vitest",
  "zod",
  "hono",
  "tsx",
] as const;

/** A child environment without npm's per-run variables (the temp dir is another package). */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("npm_") || name === "INIT_CWD" || name === "CI") continue;
    env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * Extracts the official tests, sources, vitest config and tsconfig from the bare mirror into `dir`
 * (as `tests/`, `src/`, `vitest.config.js` and `tsconfig.json`, as they sit in the official
 * package), copies the official package.json beside them (CONFORMANCE.officialPackageCopy, for the
 * test-only packages' ranges) and returns the commit they came from. Throws when one of
 * `testFiles` (relative to `dir`) is not there.
 */
export async function extractOfficialTests(mirror: string, dir: string, testFiles: readonly string[]): Promise<string> {
  const head = await runBounded("git", [`--git-dir=${mirror}`, "rev-parse", "HEAD"], { cwd: dir, timeoutMs: 30_000 });
  assertSucceeded("git rev-parse HEAD (is MIRROR_GIT_DIR a langgraphjs git dir?)", head);
  const script = 'set -o pipefail; git --git-dir="$1" archive HEAD "$2" "$3" "$4" "$5" | tar -x -C "$6" --strip-components="$7"';
  const archive = await runBounded(
    "bash",
    ["-c", script, "extract", mirror, CONFORMANCE.testsPath, CONFORMANCE.srcPath, CONFORMANCE.vitestConfigPath, CONFORMANCE.tsconfigPath, dir, String(CONFORMANCE.stripComponents)],
    { cwd: dir, timeoutMs: 60_000 },
  );
  assertSucceeded("git archive | tar", archive);
  for (const testFile of testFiles) {
    if (!existsSync(join(dir, testFile))) throw new Error(`${testFile} is not in the mirror's ${CONFORMANCE.testsPath}`);
  }
  const officialPackage = await runBounded("git", [`--git-dir=${mirror}`, "show", `HEAD:${CONFORMANCE.officialPackagePath}`], { cwd: dir, timeoutMs: 30_000 });
  assertSucceeded(`git show HEAD:${CONFORMANCE.officialPackagePath}`, officialPackage);
  writeFileSync(join(dir, CONFORMANCE.officialPackageCopy), officialPackage.output);
  return head.output.trim();
}

/** The newest modification time (ms) of the files under `path` (a file or a directory). */
function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when dist/ is missing or older than a source it is built from. */
export function distIsStale(repo: string): boolean {
  const outputs = ["dist/src/cli/main.js", "dist/src/cli/cli-program.bundle.mjs"].map((p) => join(repo, p));
  if (outputs.some((p) => !existsSync(p))) return true;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  const sources = ["src", "migrations", "package.json", "tsconfig.build.json"].map((p) => join(repo, p)).filter((p) => existsSync(p));
  return Math.max(...sources.map(newestMtime)) > built;
}

/**
 * `npm pack` of the devmind checkout at `repo` into `dir` (building first when dist is stale; the
 * pack itself skips `prepare`, which would build again). Returns the tarball's file name.
 */
export async function packDevmind(repo: string, dir: string, log: (line: string) => void): Promise<string> {
  if (distIsStale(repo)) {
    log(`dist/ is older than src/: npm run build in ${repo}`);
    assertSucceeded("npm run build", await runBounded("npm", ["run", "build"], { cwd: repo, env: cleanEnv(), timeoutMs: CONFORMANCE.buildTimeoutMs }));
  }
  const pack = await runBounded("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: repo, env: cleanEnv(), timeoutMs: CONFORMANCE.packTimeoutMs });
  assertSucceeded("npm pack", pack);
  const jsonStart = pack.output.indexOf("[");
  const packed = JSON.parse(pack.output.slice(jsonStart)) as Array<{ filename: string }>;
  const filename = packed[0]?.filename;
  if (filename === undefined) throw new Error(`npm pack printed no file name:\n${pack.output}`);
  return filename.replace(/^.*\//, "");
}

/** Reads a package.json. */
function readPackage(path: string): { version?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string>; overrides?: Record<string, unknown> } {
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * The temp dir's package.json: devmind from its tarball (none when `tarball` is null: an
 * official-only run); LangGraph, core, SDK, vitest, zod, hono,
 * tsx pinned to devmind's own versions (one copy each after install); the test-only packages at
 * the official package's ranges; the official package (@langchain/langgraph-api at the mirror's
 * version: the official server with `official`, the static schema extractor a LangGraph project
 * has for devmind) and the TypeScript it needs. devmind's overrides are repeated (they apply only
 * at the root).
 */
export function conformancePackageJson(options: { devmindRepo: string; tarball: string | null; mirrorPackage: string; official: boolean }): Record<string, unknown> {
  const devmind = readPackage(join(options.devmindRepo, "package.json"));
  const officialApi = readPackage(options.mirrorPackage);
  const devmindVersions = { ...devmind.devDependencies, ...devmind.dependencies };
  const officialRanges = { ...officialApi.dependencies, ...officialApi.devDependencies };
  const dependencies: Record<string, string> = options.tarball === null ? {} : { devmind: `file:./${options.tarball}` };
  for (const name of DEVMIND_PINNED) {
    const version = devmindVersions[name];
    if (version === undefined) throw new Error(`devmind's package.json has no ${name}`);
    dependencies[name] = version;
  }
  for (const name of TEST_ONLY_PACKAGES) {
    const range = officialRanges[name];
    if (range === undefined || range.startsWith("workspace:")) throw new Error(`the official package.json has no usable range for ${name}`);
    dependencies[name] = range;
  }
  // the tests live in the official package itself, so their project has it (and the TypeScript it
  // reads sources with): devmind uses its static schema extractor for Annotation graphs as a
  // project with @langchain/langgraph-cli has it; the official server runs from it
  dependencies["@langchain/langgraph-api"] = officialApi.version ?? CONFORMANCE.officialApiVersion;
  dependencies.typescript = CONFORMANCE.officialTypescriptVersion;
  return { name: "devmind-conformance", private: true, type: "module", dependencies, overrides: devmind.overrides ?? {} };
}

/** Writes the package.json and runs `npm install` in `dir` (bounded; the output goes to `logFile`). */
export async function installWorkspace(dir: string, packageJson: Record<string, unknown>, logFile: string): Promise<void> {
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(packageJson, null, 2)}\n`);
  const result = await runBounded("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: dir,
    env: cleanEnv(),
    timeoutMs: CONFORMANCE.installTimeoutMs,
  });
  writeFileSync(logFile, result.output);
  assertSucceeded(`npm install in ${dir} (log: ${logFile})`, result);
}

/**
 * A program that starts the official in-memory server the way the tests' own utils.server.mts
 * does (spawnServer with the config's env), importing the installed package instead of ../dist.
 * Arguments: CONFIG_PATH PORT. Reload (tsx watch) stays on as in utils.server.mts: with
 * `reload: false`, 1.4.5 passes tsx's --clear-screen=false to node, which exits 9.
 */
export const OFFICIAL_SERVER_PROGRAM = `import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { spawnServer } from "@langchain/langgraph-api";
const configPath = resolve(process.argv[2]);
const config = JSON.parse(readFileSync(configPath, "utf-8"));
const env = typeof config.env === "object" && config.env !== null ? config.env : {};
const server = await spawnServer(
  { port: process.argv[3], nJobsPerWorker: "10", host: "localhost" },
  { config, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, hostUrl: "https://smith.langchain.com" },
  { pid: process.pid, projectCwd: dirname(configPath) },
);
server.on("exit", (code, signal) => { console.log("official server exited", code, signal); process.exit(code ?? 1); });
process.once("SIGTERM", () => server.kill("SIGTERM"));
`;
