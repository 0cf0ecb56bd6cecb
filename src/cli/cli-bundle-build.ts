/**
 * Builds the CLI's one-file bundle (CLI_BUNDLE.file) from the compiled cli-program.js next to
 * this module. Run by `npm run build` after tsc (`node dist/src/cli/cli-bundle-build.js`) and by
 * the tests' global setup when dist/ changed. See cli-entry.ts for when the bundle is used.
 */
import { renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { CLI_BUNDLE } from "../constants.js";

/** dist/src/cli/, where the compiled entry and the bundle live. */
function cliBuildDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Bundles `<dir>/cli-program.js` and everything it imports, PGlite and the TypeScript loader
 * excepted (CLI_BUNDLE.external), into `<dir>/cli-program.bundle.mjs` (see `bundleProgram`).
 */
export async function buildCliBundle(dir: string = cliBuildDir()): Promise<string> {
  const outfile = join(dir, CLI_BUNDLE.file);
  await bundleProgram(join(dir, CLI_BUNDLE.entry), outfile);
  return outfile;
}

/**
 * Bundles the compiled ES module `entry` and everything it imports but CLI_BUNDLE.external into
 * `outfile`: one ES module for Node 20, names kept (error classes print their own names),
 * CommonJS dependencies given a `require`. Written beside and renamed into place, so a failed
 * build leaves the old bundle or none. The tests bundle their child programs with it too.
 */
export async function bundleProgram(entry: string, outfile: string): Promise<void> {
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
      external: [...CLI_BUNDLE.external],
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
    (file) => process.stdout.write(`devmind: bundled the CLI into ${file}\n`),
    (error: unknown) => {
      process.stderr.write(`devmind: bundling the CLI failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
