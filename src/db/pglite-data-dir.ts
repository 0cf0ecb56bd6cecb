import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLITE_INITDB_FLAGS, PGLITE_START_SETTINGS } from "../constants.js";
import { DatabaseError } from "../errors.js";
import { copyTemplate, defaultTemplateDir, templateMismatch, templateUsable } from "./pglite-template.js";

/** Suffix of the temporary directory a first initialisation runs in, before its rename into place. */
const INIT_SUFFIX = ".init-";

/**
 * Files every PostgreSQL data directory has once `initdb` got past its bootstrap. Without them the
 * directory never held a transaction: it is an interrupted first initialisation, safe to redo.
 */
const BOOTSTRAPPED_FILES = ["PG_VERSION", join("global", "pg_control"), "base"];

/** PGlite's own start parameters plus devmind's settings (PGLITE_START_SETTINGS), for every PGlite devmind starts. */
export function pgliteStartParams(): string[] {
  return [...PGlite.defaultStartParams, ...Object.entries(PGLITE_START_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`])];
}

/** How a new embedded database was made: a copy of the built migrated template, or initdb. */
export type DataDirSource = "template" | "initdb";

/** Progress of a first open, for a caller that shows it (the demo): before and after the creation. */
export type DataDirProgress =
  | { phase: "creating"; source: DataDirSource; pgdata: string; /** initdb: why no template was copied */ reason?: string }
  | { phase: "created"; source: DataDirSource; pgdata: string; ms: number };

/** Options of `ensureInitialisedDataDir`. */
export interface EnsureDataDirOptions {
  /** The migrated template to copy (`defaultTemplateDir()`); null: always initdb. */
  templateDir?: string | null;
  /** Why initdb when `templateDir` is null (told to `onProgress`). */
  initdbReason?: string;
  /** Called before and after a new database is created; never for an existing one. */
  onProgress?: ((progress: DataDirProgress) => void) | undefined;
}

/**
 * Makes sure `pgdata` holds an initialised embedded database, atomically: a new one is made in a
 * sibling temporary directory and renamed into place only once complete, so a process killed at
 * any moment of its first start leaves either nothing or a complete directory. A new one is a
 * copy of the migrated template built with the package (`npm run build`, see pglite-template.ts)
 * when that template matches this code — a file copy instead of initdb's 5-20 s — else PGlite's
 * initdb. Leftover temporary directories (a killed first start) are removed — the caller holds
 * the data directory's lock, so no live process is using them. A `pgdata` left by an older devmind
 * whose first start was interrupted (no `global/pg_control`) never held data and is initialised
 * again.
 */
export async function ensureInitialisedDataDir(pgdata: string, options: EnsureDataDirOptions = {}): Promise<{ created: boolean; source?: DataDirSource }> {
  removeInterruptedInits(pgdata);
  if (existsSync(pgdata)) {
    if (isBootstrapped(pgdata)) return { created: false };
    rmSync(pgdata, { recursive: true, force: true });
  }
  const templateDir = options.templateDir === undefined ? defaultTemplateDir() : options.templateDir;
  const temporary = `${pgdata}${INIT_SUFFIX}${process.pid}-${randomBytes(4).toString("hex")}`;
  const started = performance.now();
  const source: DataDirSource = templateDir !== null && templateUsable(templateDir) ? "template" : "initdb";
  const reason = source === "template" ? undefined : templateDir === null ? (options.initdbReason ?? "no template asked for") : (templateMismatchSafe(templateDir) ?? "the template is unusable");
  options.onProgress?.({ phase: "creating", source, pgdata, ...(reason === undefined ? {} : { reason }) });
  try {
    if (source === "template") copyTemplate(templateDir as string, temporary);
    else {
      const pglite = await PGlite.create(temporary, { initDbStartParams: [...PGLITE_INITDB_FLAGS], startParams: pgliteStartParams() });
      await pglite.close();
    }
    renameSync(temporary, pgdata);
    fsyncDirectory(dirname(pgdata));
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    throw new DatabaseError("DATA_DIR_INVALID", `cannot create the embedded database in ${pgdata}: ${(error as Error).message}`, {
      details: { path: pgdata },
      cause: error,
    });
  }
  options.onProgress?.({ phase: "created", source, pgdata, ms: Math.round(performance.now() - started) });
  return { created: true, source };
}

/**
 * Removes a `pgdata` this process has just made from the template and PGlite could not open, so
 * the caller can make it again with initdb. Never call it on a directory that may hold data.
 */
export function discardNewDataDir(pgdata: string): void {
  rmSync(pgdata, { recursive: true, force: true });
}

/**
 * The error for an embedded database directory that exists but cannot be opened: names the
 * directory and says what to do, since devmind never deletes a directory that may hold data.
 */
export function unopenableDataDirError(pgdata: string, error: unknown): DatabaseError {
  const reason = error instanceof Error ? error.message : String(error);
  return new DatabaseError(
    "DATA_DIR_INVALID",
    `cannot open the embedded database in ${pgdata}: ${reason}. ` +
      `If this directory holds runs you need, restore it from a backup (or copy it aside and report the problem); ` +
      `if it does not, delete ${pgdata} (or point DEVMIND_DATA_DIR elsewhere) and devmind creates a new one.`,
    { details: { path: pgdata, variable: "DEVMIND_DATA_DIR" }, cause: error },
  );
}

function templateMismatchSafe(templateDir: string): string | null {
  try {
    return templateMismatch(templateDir);
  } catch (error) {
    return (error as Error).message;
  }
}

function isBootstrapped(pgdata: string): boolean {
  return BOOTSTRAPPED_FILES.every((file) => existsSync(join(pgdata, file)));
}

function removeInterruptedInits(pgdata: string): void {
  const parent = dirname(pgdata);
  const prefix = `${basename(pgdata)}${INIT_SUFFIX}`;
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) if (entry.startsWith(prefix)) rmSync(join(parent, entry), { recursive: true, force: true });
}

function fsyncDirectory(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    fsyncSync(fd);
  } catch {
    // not every file system lets a directory be synced; the rename itself is atomic
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
