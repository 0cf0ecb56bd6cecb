/**
 * Builds the migrated PGlite template that seeds every new embedded database (see
 * pglite-template.ts). Run by `npm run build` after tsc: `node dist/src/db/pglite-template-build.js`.
 * Skipped when the template in place already matches this code.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { CONFIG_DEFAULTS, PGLITE_LOCK_FILE, PGLITE_SUBDIR } from "../constants.js";
import { migrate } from "./migrate.js";
import { PgliteDatabase } from "./pglite-database.js";
import { TEMPLATE_MANIFEST_FILE, defaultTemplateDir, expectedManifest, templateCurrent, templateDirectories, templateMismatch, type TemplateManifest } from "./pglite-template.js";

/**
 * Makes `dir` (default `dist/pglite-template`) hold `pgdata/` — a PGlite database made by initdb
 * with devmind's flags and migrated in the default schema — and `manifest.json` saying what it
 * was made from. Built in a sibling folder and renamed into place, so a killed build leaves the
 * old template or none. Returns whether it built one (false: the one in place is current, migrated
 * to this code's last migration).
 */
export async function buildPgliteTemplate(dir: string = defaultTemplateDir()): Promise<boolean> {
  if (templateCurrent(dir)) return false;
  const staging = `${dir}.build-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    const db = await PgliteDatabase.open(staging, CONFIG_DEFAULTS.dbSchema, { templateDir: null });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    rmSync(join(staging, PGLITE_LOCK_FILE), { force: true });
    const manifest: TemplateManifest = { ...expectedManifest(), directories: templateDirectories(join(staging, PGLITE_SUBDIR)) };
    writeFileSync(join(staging, TEMPLATE_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(staging, dir);
    } catch (error) {
      // another build (a concurrent test run) put a current one in place first
      if (templateMismatch(dir) !== null) throw error;
      rmSync(staging, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return true;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  // a one-shot process: V8's baseline tier only for PGlite's WebAssembly (initdb and the
  // migrations run once; recompiling the engine with the optimizing tier cost 3.5 of 8 CPU-s)
  setFlagsFromString("--liftoff-only");
  const started = performance.now();
  buildPgliteTemplate().then(
    (built) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stdout.write(built ? `devmind: built the PGlite template in ${defaultTemplateDir()} (${seconds} s)\n` : "devmind: the PGlite template is current\n");
    },
    (error: unknown) => {
      // the product works without a template (initdb on first open): say so, do not fail the build
      process.stderr.write(`devmind: could not build the PGlite template (new embedded databases will run initdb): ${(error as Error).message}\n`);
    },
  );
}
