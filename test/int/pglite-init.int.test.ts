/**
 * The embedded database's first initialisation is atomic: a process killed at any moment of it
 * leaves a data directory the next start opens (initialising again where needed), and a directory
 * that still cannot be opened gets an error naming it and saying what to do.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";
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
