import { constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_DEFAULTS, PGLITE_INITDB_FLAGS, PGLITE_SUBDIR, PGLITE_TEMPLATE_DIR } from "../constants.js";
import { readMigrationFiles, type MigrationFile } from "./migration-files.js";

/** Name of the manifest written next to the template's `pgdata/`. */
export const TEMPLATE_MANIFEST_FILE = "manifest.json";

/**
 * What a PGlite template was made from. A template is used only when every field matches the
 * running code: the same PGlite build (its data files are that build's PostgreSQL major), the
 * same initdb flags, and migrations that are a prefix of this code's, checksum for checksum
 * (`migrate()` then applies the rest and verifies the history as for any database).
 */
export interface TemplateManifest {
  /** 2: with `directories`. */
  format: 2;
  pglite: string;
  initdbFlags: string[];
  /** The schema the migrations were applied to (CONFIG_DEFAULTS.dbSchema). */
  schema: string;
  migrations: { version: number; checksum: string }[];
  /**
   * Every directory of `pgdata/`, relative, `/`-separated. `npm pack` keeps files only, so the
   * empty ones PostgreSQL needs (`pg_notify`, `pg_tblspc`, `pg_wal/archive_status`, …) are gone
   * from an installed package's template; a copy makes them again from this list.
   */
  directories: string[];
}

/** The package root (the folder holding devmind's package.json), from `src/db` or `dist/src/db` alike. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "migrations"))) return dir;
    dir = dirname(dir);
  }
  return dirname(fileURLToPath(import.meta.url));
}

/** Where `npm run build` puts the migrated template: `<package root>/dist/pglite-template`. */
export function defaultTemplateDir(): string {
  return join(packageRoot(), PGLITE_TEMPLATE_DIR);
}

/** The installed PGlite's version (from its package.json), or "unknown". */
export function pgliteVersion(): string {
  try {
    let dir = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
    for (let depth = 0; depth < 4; depth += 1) {
      const file = join(dir, "package.json");
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
        if (pkg.name === "@electric-sql/pglite" && typeof pkg.version === "string") return pkg.version;
      }
      dir = dirname(dir);
    }
  } catch {
    // no resolvable PGlite: no template can match
  }
  return "unknown";
}

/** What a template's manifest must match (everything but the directories it lists). */
export type ExpectedManifest = Omit<TemplateManifest, "directories">;

/** The manifest this code would write for a template migrated with `files` (without its directories: see `templateDirectories`). */
export function expectedManifest(files: MigrationFile[] = readMigrationFiles()): ExpectedManifest {
  return {
    format: 2,
    pglite: pgliteVersion(),
    initdbFlags: [...PGLITE_INITDB_FLAGS],
    schema: CONFIG_DEFAULTS.dbSchema,
    migrations: files.map((file) => ({ version: file.version, checksum: file.checksum })),
  };
}

/**
 * Why the template in `dir` cannot seed a new database for this code, or null when it can:
 * missing, unreadable, or made by another PGlite, other initdb flags, or migrations that are not
 * a prefix of `files`.
 */
export function templateMismatch(dir: string, files: MigrationFile[] = readMigrationFiles()): string | null {
  if (!existsSync(join(dir, PGLITE_SUBDIR, "PG_VERSION"))) return `no template in ${dir}`;
  let manifest: TemplateManifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, TEMPLATE_MANIFEST_FILE), "utf8")) as TemplateManifest;
  } catch (error) {
    return `unreadable manifest: ${(error as Error).message}`;
  }
  const expected = expectedManifest(files);
  if (manifest.format !== expected.format) return `manifest format ${String(manifest.format)}`;
  if (!Array.isArray(manifest.directories) || !manifest.directories.every(isRelativeDirectory)) return "the manifest lists no valid directories";
  if (manifest.pglite !== expected.pglite) return `made by PGlite ${manifest.pglite}, running ${expected.pglite}`;
  if (JSON.stringify(manifest.initdbFlags) !== JSON.stringify(expected.initdbFlags)) return "other initdb flags";
  if (manifest.schema !== expected.schema) return `migrated in schema ${manifest.schema}`;
  if (!Array.isArray(manifest.migrations) || manifest.migrations.length > expected.migrations.length) return "migrations newer than this code";
  for (const [index, applied] of manifest.migrations.entries()) {
    const file = expected.migrations[index];
    if (file === undefined || file.version !== applied.version || file.checksum !== applied.checksum) {
      return `migration ${applied.version} differs from this code's`;
    }
  }
  return null;
}

/**
 * Whether the template in `dir` is this code's exactly: usable (`templateMismatch` is null) and
 * migrated to this code's last migration, so a copy needs none. A usable but older one (a
 * migration added since it was built) still seeds databases, which then apply the rest; a build
 * replaces it.
 */
export function templateCurrent(dir: string, files: MigrationFile[] = readMigrationFiles()): boolean {
  if (templateMismatch(dir, files) !== null) return false;
  const manifest = JSON.parse(readFileSync(join(dir, TEMPLATE_MANIFEST_FILE), "utf8")) as TemplateManifest;
  return manifest.migrations.length === files.length;
}

/** Whether the template in `templateDir` can seed a new database for this code (`templateMismatch` is null). */
export function templateUsable(templateDir: string): boolean {
  try {
    return templateMismatch(templateDir) === null;
  } catch {
    // unreadable migrations: the open fails later with the real error
    return false;
  }
}

/**
 * Copies the template's `pgdata/` to `target`, which must not exist, and makes every directory
 * its manifest lists (those `npm pack` dropped for being empty). Check `templateUsable` first.
 */
export function copyTemplate(templateDir: string, target: string): void {
  copyTree(join(templateDir, PGLITE_SUBDIR), target);
  const manifest = JSON.parse(readFileSync(join(templateDir, TEMPLATE_MANIFEST_FILE), "utf8")) as TemplateManifest;
  for (const directory of manifest.directories) mkdirSync(join(target, ...directory.split("/")), { recursive: true });
}

/**
 * Copies the directory `from` to `to` (which must not exist: EEXIST otherwise), files and
 * directories only, each one's mode kept (a directory's under the umask). Node 20's `cpSync` costs about twice as much CPU on
 * the template's thousand files (two stats of source and target per entry, then its own checks):
 * the first command of a new project copies it.
 */
function copyTree(from: string, to: string): void {
  mkdirSync(to, { mode: statSync(from).mode & 0o7777 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isFile()) copyFileSync(source, target, constants.COPYFILE_EXCL);
    else throw new Error(`the template holds ${source}, which is neither a file nor a directory`);
  }
}

/** Every directory under `pgdata`, relative and `/`-separated, sorted: the manifest's `directories`. */
export function templateDirectories(pgdata: string): string[] {
  const found: string[] = [];
  const walk = (relative: string[]): void => {
    for (const entry of readdirSync(join(pgdata, ...relative), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = [...relative, entry.name];
      found.push(path.join("/"));
      walk(path);
    }
  };
  walk([]);
  return found.sort();
}

/** A manifest's directory: relative, no `..`, no empty part (a manifest is data, not trusted paths). */
function isRelativeDirectory(value: unknown): boolean {
  return typeof value === "string" && value.length > 0 && value.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}
