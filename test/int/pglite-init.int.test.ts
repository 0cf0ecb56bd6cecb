/**
 * A new embedded database is a copy of the migrated template built with the package
 * (`dist/pglite-template`, made by `npm run build` and by the tests' global setup) when the
 * template matches the code, else initdb; a copy PGlite cannot open is made again with initdb.
 * The embedded database's first initialisation is atomic: a process killed at any moment of it
 * leaves a data directory the next start opens (initialising again where needed), and a directory
 * that still cannot be opened gets an error naming it and saying what to do.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS } from "../../src/constants.js";
import { migrate } from "../../src/db/migrate.js";
import { readMigrationFiles } from "../../src/db/migration-files.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { DataDirProgress } from "../../src/db/pglite-data-dir.js";
import { PgliteDatabase } from "../../src/db/pglite-database.js";
import { TEMPLATE_MANIFEST_FILE, defaultTemplateDir, expectedManifest, templateMismatch } from "../../src/db/pglite-template.js";
import { rejection } from "../helpers/assertions.js";
import { killLiveChildren, spawnFixture } from "../helpers/child-process.js";

const FIXTURE = "test/fixtures/open-embedded.ts";
const dirs: string[] = [];
afterEach(async () => {
  await killLiveChildren();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-pginit-")));
  dirs.push(dir);
  return dir;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The temporary directories of first initialisations under `root`. */
const initDirs = (root: string): string[] => readdirSync(root).filter((name) => name.startsWith("pgdata.init-"));

/** Starts a first initialisation in a child and SIGKILLs it once `moment(root)` holds (polled every few ms). */
async function killWhen(root: string, moment: (root: string) => boolean, what: string): Promise<void> {
  const child = spawnFixture(FIXTURE, [root], 180_000);
  const deadline = Date.now() + 170_000;
  for (;;) {
    if (moment(root)) break;
    if (child.process.exitCode !== null) throw new Error(`the child finished before ${what}: ${child.stderr()}`);
    if (Date.now() > deadline) throw new Error(`never saw ${what}`);
    await sleep(3);
  }
  child.process.kill("SIGKILL");
  const exit = await child.exited;
  expect(exit.signal).toBe("SIGKILL");
  // whatever the moment, there is no half-made database where devmind looks for one
  const pgdata = join(root, "pgdata");
  if (existsSync(pgdata)) expect(existsSync(join(pgdata, "global", "pg_control"))).toBe(true);
}

describe("embedded database: first initialisation", () => {
  it("a process killed at three moments of its first start leaves a directory the next start opens", async () => {
    const root = dataDir();
    await killWhen(root, (dir) => initDirs(dir).length > 0, "the temporary directory");
    await killWhen(root, (dir) => initDirs(dir).some((name) => existsSync(join(dir, name, "PG_VERSION"))), "PG_VERSION being written");
    await killWhen(root, (dir) => existsSync(join(dir, "pgdata")), "the directory renamed into place");
    const db = await openDatabase({ dataDir: root, schema: "after_kills" });
    try {
      await migrate(db);
      expect((await db.query<{ ok: number }>("SELECT 1 AS ok")).rows).toEqual([{ ok: 1 }]);
    } finally {
      await db.close();
    }
    // leftovers of killed starts are gone
    expect(initDirs(root)).toEqual([]);
  }, 600_000);

  it("a directory left by an interrupted first start of an older version (no pg_control) is initialised again", async () => {
    const root = dataDir();
    const pgdata = join(root, "pgdata");
    mkdirSync(pgdata);
    writeFileSync(join(pgdata, "PG_VERSION"), "17\n");
    const db = await openDatabase({ dataDir: root });
    try {
      expect((await db.query<{ ok: number }>("SELECT 1 AS ok")).rows).toEqual([{ ok: 1 }]);
    } finally {
      await db.close();
    }
  }, 300_000);

  it("a directory that cannot be opened is never deleted: the error names it and says what to do", async () => {
    const root = dataDir();
    const pgdata = join(root, "pgdata");
    mkdirSync(join(pgdata, "global"), { recursive: true });
    mkdirSync(join(pgdata, "base"));
    writeFileSync(join(pgdata, "PG_VERSION"), "17\n");
    writeFileSync(join(pgdata, "global", "pg_control"), "not a control file");
    const error = await rejection(openDatabase({ dataDir: root }));
    expect(error.code).toBe("DATA_DIR_INVALID");
    expect(error.message).toContain(pgdata);
    expect(error.message).toContain("restore it from a backup");
    expect(error.message).toContain(`delete ${pgdata}`);
    expect(existsSync(join(pgdata, "global", "pg_control"))).toBe(true);
    // the lock is released: the next try gets the same answer, not DATABASE_LOCKED
    expect((await rejection(openDatabase({ dataDir: root }))).code).toBe("DATA_DIR_INVALID");
  }, 300_000);
});

describe("embedded database: the built template", () => {
  it("a new data directory is a copy of the template: progress says so, migrations are already applied, nothing else is left", async () => {
    expect(templateMismatch(defaultTemplateDir())).toBeNull();
    const root = dataDir();
    const progress: DataDirProgress["phase"][] = [];
    const sources: string[] = [];
    const db = await openDatabase({ dataDir: root, onProgress: (step) => (progress.push(step.phase), sources.push(step.source)) });
    try {
      expect(progress).toEqual(["creating", "created"]);
      expect(sources).toEqual(["template", "template"]);
      const result = await migrate(db);
      expect(result.applied).toEqual([]);
      expect(result.current).toBe(readMigrationFiles().length);
      // devmind's start settings apply to a copy too
      expect((await db.query<{ shared_buffers: string }>("SHOW shared_buffers")).rows).toEqual([{ shared_buffers: "16MB" }]);
    } finally {
      await db.close();
    }
    expect(readdirSync(root).sort()).toEqual(["pgdata"]);
    // an existing directory is opened, never created again
    const again = await openDatabase({ dataDir: root, onProgress: (step) => progress.push(step.phase) });
    await again.close();
    expect(progress).toEqual(["creating", "created"]);
  }, 300_000);

  it("a template that lost its empty directories (as npm pack leaves it) still seeds a database that opens; the copy has them again", async () => {
    const packed = join(dataDir(), "template");
    // the files only, as a tarball holds them
    cpSync(defaultTemplateDir(), packed, { recursive: true });
    const removed: string[] = [];
    const dropEmpty = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(dir, entry.name);
        dropEmpty(path);
        if (readdirSync(path).length === 0) (rmSync(path, { recursive: true }), removed.push(path));
      }
    };
    dropEmpty(join(packed, "pgdata"));
    expect(removed.map((path) => path.slice(join(packed, "pgdata").length + 1))).toEqual(expect.arrayContaining(["pg_notify", "pg_tblspc", "pg_twophase", "pg_wal/archive_status"]));
    expect(templateMismatch(packed)).toBeNull();
    const root = dataDir();
    const steps: string[] = [];
    const db = await PgliteDatabase.open(root, CONFIG_DEFAULTS.dbSchema, { templateDir: packed, onProgress: (step) => steps.push(`${step.phase}:${step.source}`) });
    try {
      expect(steps).toEqual(["creating:template", "created:template"]);
      expect((await migrate(db)).applied).toEqual([]);
      await db.query("SELECT pg_notify('devmind_probe', 'x')");
    } finally {
      await db.close();
    }
    for (const dir of ["pg_notify", "pg_tblspc", "pg_twophase", join("pg_wal", "archive_status")]) expect(existsSync(join(root, "pgdata", dir))).toBe(true);
  }, 300_000);

  it("initdb says why no template was copied", async () => {
    const steps: DataDirProgress[] = [];
    const missing = join(dataDir(), "no-template");
    const db = await PgliteDatabase.open(dataDir(), CONFIG_DEFAULTS.dbSchema, { templateDir: missing, onProgress: (step) => steps.push(step) });
    await db.close();
    expect(steps[0]).toMatchObject({ phase: "creating", source: "initdb", reason: `no template in ${missing}` });
  }, 300_000);

  it("a database for another schema starts without the template's default schema", async () => {
    const root = dataDir();
    const db = await openDatabase({ dataDir: root, schema: "elsewhere" });
    try {
      const schemas = await db.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname IN ($1, $2)", [CONFIG_DEFAULTS.dbSchema, "elsewhere"]);
      expect(schemas.rows).toEqual([]);
      expect((await migrate(db)).applied).toEqual(readMigrationFiles().map((file) => file.version));
    } finally {
      await db.close();
    }
  }, 300_000);

  it("a template is used only when its manifest matches the code; migrations that are a prefix of the code's still match", () => {
    const template = join(dataDir(), "template");
    mkdirSync(join(template, "pgdata"), { recursive: true });
    writeFileSync(join(template, "pgdata", "PG_VERSION"), "17\n");
    const files = readMigrationFiles();
    const write = (manifest: unknown): void => writeFileSync(join(template, TEMPLATE_MANIFEST_FILE), JSON.stringify(manifest));
    const expected = { ...expectedManifest(files), directories: ["base", "pg_notify"] };
    write(expected);
    expect(templateMismatch(template, files)).toBeNull();
    write({ ...expected, migrations: expected.migrations.slice(0, 2) });
    expect(templateMismatch(template, files)).toBeNull();
    write({ ...expected, migrations: expected.migrations.map((m, i) => (i === 1 ? { ...m, checksum: "0".repeat(64) } : m)) });
    expect(templateMismatch(template, files)).toBe("migration 2 differs from this code's");
    write({ ...expected, migrations: [...expected.migrations, { version: files.length + 1, checksum: "0".repeat(64) }] });
    expect(templateMismatch(template, files)).toBe("migrations newer than this code");
    write({ ...expected, pglite: "0.0.1" });
    expect(templateMismatch(template, files)).toContain("made by PGlite 0.0.1");
    write({ ...expected, initdbFlags: [] });
    expect(templateMismatch(template, files)).toBe("other initdb flags");
    // a manifest of the older format (no directories, which a packed copy needs) or one naming paths outside the template
    write({ ...expected, format: 1 });
    expect(templateMismatch(template, files)).toBe("manifest format 1");
    write({ ...expected, directories: ["../outside"] });
    expect(templateMismatch(template, files)).toBe("the manifest lists no valid directories");
    writeFileSync(join(template, TEMPLATE_MANIFEST_FILE), "{not json");
    expect(templateMismatch(template, files)).toContain("unreadable manifest");
    rmSync(join(template, "pgdata"), { recursive: true });
    expect(templateMismatch(template, files)).toContain("no template");
  });

  it("a copy of a template PGlite cannot open is discarded and the database is made with initdb", async () => {
    const template = join(dataDir(), "template");
    const pgdata = join(template, "pgdata");
    mkdirSync(join(pgdata, "global"), { recursive: true });
    mkdirSync(join(pgdata, "base"));
    writeFileSync(join(pgdata, "PG_VERSION"), "17\n");
    writeFileSync(join(pgdata, "global", "pg_control"), "not a control file");
    writeFileSync(join(template, TEMPLATE_MANIFEST_FILE), JSON.stringify({ ...expectedManifest(), directories: [] }));
    const root = dataDir();
    const steps: string[] = [];
    const db = await PgliteDatabase.open(root, CONFIG_DEFAULTS.dbSchema, { templateDir: template, onProgress: (step) => steps.push(`${step.phase}:${step.source}`) });
    try {
      expect(steps).toEqual(["creating:template", "created:template", "creating:initdb", "created:initdb"]);
      expect((await migrate(db)).applied).toEqual(readMigrationFiles().map((file) => file.version));
    } finally {
      await db.close();
    }
    // the broken template itself is left alone
    expect(existsSync(join(pgdata, "global", "pg_control"))).toBe(true);
  }, 300_000);
});
