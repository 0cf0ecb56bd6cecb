/**
 * Where the integration tests find the built code their child processes run: the product's own
 * build (`dist/`, what `npm run build` makes and the `devmind` bin runs) and a bundle of each
 * fixture program (`test/fixtures/*.ts` with the sources they import). Children start with plain
 * `node` on these files instead of `node --import tsx` on the sources, which costs about 1.8 s of
 * CPU more per start. The global setup (test/setup/global-setup.ts) builds whichever is stale.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Node flags for every child process a test starts. `--liftoff-only` keeps V8 from recompiling
 * PGlite's WebAssembly with its optimizing tier in the background: a child lives seconds and runs
 * few queries, and that recompilation was a third of its CPU (about 5 s -> 3 s per CLI start on
 * an embedded database), on a machine with two cores shared by two test workers.
 */
export const CHILD_NODE_FLAGS: readonly string[] = ["--liftoff-only"];

/** The built CLI, the file behind the package's `devmind` bin. */
export const BUILT_CLI = join(REPO_ROOT, "dist", "src", "cli", "main.js");

/**
 * Where the fixture programs' bundles go: `.test-build/` in the checkout (git ignores it). Bare
 * imports left out of a bundle (PGlite, tsx) resolve from the checkout's node_modules, and a
 * bundle finds the checkout's migrations/ walking up from where it lies. Not under node_modules:
 * git worktrees that share one node_modules (a symlink) would start each other's fixtures, built
 * from another branch's sources, with the migrations of the checkout node_modules belongs to.
 */
export const FIXTURE_BUILD_DIR = join(REPO_ROOT, ".test-build");

/**
 * The program a fixture child runs, given its source path (absolute or relative to the root): the
 * fixture bundled from its TypeScript source with what it imports (as the CLI's bundle is made,
 * src/cli/cli-bundle-build.ts), which starts in about half the CPU of separate modules. The
 * fixtures define their graphs in code and load no project graph, so one copy of LangGraph in the
 * bundle is all they use.
 */
export function builtFixture(script: string): string {
  const rel = isAbsolute(script) ? relative(REPO_ROOT, script) : script;
  return join(FIXTURE_BUILD_DIR, rel.replace(/\.ts$/, ".bundle.mjs"));
}

/** The fixture programs: the `.ts` files directly in test/fixtures (graphs/ holds graph files, not programs). */
export function fixturePrograms(): string[] {
  return readdirSync(join(REPO_ROOT, "test", "fixtures"))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => join("test", "fixtures", file));
}

/** Every `.ts` file (not `.d.ts`) under `dir`, as paths relative to `root`. */
function sourcesUnder(root: string, dir: string): string[] {
  const base = join(root, dir);
  if (!existsSync(base)) return [];
  return readdirSync(base, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => join(dir, file));
}

/**
 * True when every source under `dirs` has its `.js` in `outDir` and none is older than its
 * source or than the compiler settings. A stale or missing output means: build again.
 */
export function buildIsCurrent(outDir: string, dirs: string[], configFiles: string[]): boolean {
  const settings = Math.max(...configFiles.map((file) => statSync(join(REPO_ROOT, file)).mtimeMs));
  for (const dir of dirs) {
    for (const source of sourcesUnder(REPO_ROOT, dir)) {
      const output = join(outDir, source.replace(/\.ts$/, ".js"));
      if (!existsSync(output)) return false;
      const built = statSync(output).mtimeMs;
      if (built < statSync(join(REPO_ROOT, source)).mtimeMs || built < settings) return false;
    }
  }
  return true;
}

/**
 * The newest modification time of the `.ts` sources under `dirs` and of `configFiles` (paths
 * relative to the root): what a bundle made from the sources must not be older than.
 */
export function newestSourceTime(dirs: string[], configFiles: string[]): number {
  const sources = dirs.flatMap((dir) => sourcesUnder(REPO_ROOT, dir));
  return Math.max(0, ...[...sources, ...configFiles].map((file) => statSync(join(REPO_ROOT, file)).mtimeMs));
}

/** The newest modification time of the `.js` files under `dir` (the compiled modules a bundle is made from). */
export function newestModuleTime(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".js"))
      .map((file) => statSync(join(dir, file)).mtimeMs),
  );
}

/** True when `bundle` exists and is not older than its modules (`newestModuleTime`); else: bundle again. */
export function bundleIsCurrent(bundle: string, modulesTime: number): boolean {
  return existsSync(bundle) && statSync(bundle).mtimeMs >= modulesTime;
}
