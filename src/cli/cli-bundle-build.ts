/**
 * Builds the CLI's bundles (CLI_BUNDLE.file and CLI_BUNDLE.graphsFile) from the compiled
 * cli-program.js next to this module. Run by `npm run build` after tsc (`node
 * dist/src/cli/cli-bundle-build.js`) and by the tests' global setup when dist/ changed. See
 * cli-entry.ts for when each is used.
 */
import { renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { CLI_BUNDLE } from "../constants.js";

/** dist/src/cli/, where the compiled entry and the bundles live. */
function cliBuildDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Bundles `<dir>/cli-program.js` twice (see `bundleProgram`): with everything it imports but
 * PGlite and the TypeScript loader (CLI_BUNDLE.external) into `<dir>/CLI_BUNDLE.file`, and with
 * devmind's own modules alone, every package left to node_modules, into
 * `<dir>/CLI_BUNDLE.graphsFile` (but CLI_BUNDLE.graphsInline, which only some commands reach: left
 * out, they would load at every start). Returns both paths. The second is one file like the first: split
 * at its dynamic imports (esbuild's code splitting, so the packages of modules a command never
 * reaches stay unloaded) it measured slower on what it is for, `devmind run --graph` on
 * PostgreSQL (2.36 against 2.00 CPU-s, mean of 8 alternating), faster only on a usage error.
 */
export async function buildCliBundle(dir: string = cliBuildDir()): Promise<string[]> {
  const entry = join(dir, CLI_BUNDLE.entry);
  const whole = join(dir, CLI_BUNDLE.file);
  const ownModules = join(dir, CLI_BUNDLE.graphsFile);
  await Promise.all([bundleProgram(entry, whole), bundleProgram(entry, ownModules, { packagesExternal: true, inline: CLI_BUNDLE.graphsInline })]);
  return [whole, ownModules];
}

/** How `bundleProgram` bundles. */
export interface BundleOptions {
  /**
   * true: every package import stays an import, resolved from node_modules when the bundle runs
   * (only the program's own modules are bundled); false (default): only CLI_BUNDLE.external do.
   * A bundle of own modules alone keeps its layout (it is small, and its imports stay readable);
   * a whole bundle, or one with `inline` packages, is written without comments and indentation
   * (see `bundleProgram`).
   */
  packagesExternal?: boolean;
  /**
   * With `packagesExternal`: packages bundled all the same (their own package imports stay
   * imports unless listed too). A package left out is a static import at the top of the bundle,
   * loaded at every start, even when only a module a command never reaches imports it; one
   * bundled in is evaluated when that module first runs.
   */
  inline?: readonly string[];
}

/** The package an import specifier names (`@scope/name` or `name`), or null for a relative, absolute or `node:` one. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return null;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? null);
}

/** esbuild's `packages: "external"`, but for the packages in `inline`. */
function externalPackagesBut(inline: readonly string[]): Plugin {
  const bundled = new Set(inline);
  return {
    name: "external-packages-but",
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) => {
        const name = packageOf(args.path);
        return name === null || bundled.has(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/**
 * Bundles the compiled ES module `entry` and everything it imports but CLI_BUNDLE.external (or
 * every package, `options.packagesExternal`) into `outfile`: one ES module for Node 20, names kept (error classes print their own names),
 * CommonJS dependencies given a `require`. A whole bundle (packages included) is written with
 * esbuild's `minifyWhitespace` and nothing else minified: every process that starts from it reads,
 * decodes and parses the file, and without the packages' comments (some not ASCII, which made V8
 * hold the 6 MB source as two-byte text) and indentation it is 4 MB of ASCII instead of 6 MB;
 * measured on the one-file CLI bundle, about 0.1 CPU-s less per start (`--version` 0.65 -> 0.55,
 * `run` on PostgreSQL 1.0 -> 0.9, medians of 12 and 9 alternating). Written beside and renamed into place, so a failed
 * build leaves the old bundle or none. The tests bundle their child programs with it too.
 */
export async function bundleProgram(entry: string, outfile: string, options: BundleOptions = {}): Promise<void> {
  const staging = `${outfile}.build-${process.pid}`;
  try {
    await build({
      entryPoints: [entry],
      outfile: staging,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      keepNames: true,
      minifyWhitespace: options.packagesExternal !== true || (options.inline ?? []).length > 0,
      ...(options.packagesExternal !== true
        ? { external: [...CLI_BUNDLE.external] }
        : options.inline === undefined || options.inline.length === 0
          ? { packages: "external" as const }
          : { plugins: [externalPackagesBut(options.inline)] }),
      logLevel: "error",
      banner: { js: 'import { createRequire as __devmindCreateRequire } from "node:module"; const require = __devmindCreateRequire(import.meta.url);' },
    });
    renameSync(staging, outfile);
  } catch (error) {
    rmSync(staging, { force: true });
    throw error;
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  buildCliBundle().then(
    (files) => process.stdout.write(`devmind: bundled the CLI into ${files.join(" and ")}\n`),
    (error: unknown) => {
      process.stderr.write(`devmind: bundling the CLI failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
