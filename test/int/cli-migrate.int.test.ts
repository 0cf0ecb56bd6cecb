import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readMigrationFiles } from "../../src/db/migration-files.js";
import { openDatabase } from "../../src/db/open-database.js";
import { runCli } from "../helpers/cli.js";
import { TEST_DATABASE_URL, dropSchema, freshSchemaName } from "../helpers/databases.js";
import { seedDataDir } from "../helpers/pglite-template.js";

const VERSIONS = readMigrationFiles().map((file) => file.version);
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devmind-cli-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("devmind migrate", () => {
  it("migrates the embedded database, then reports it up to date and applied", async () => {
    const cwd = tempDir();
    // a schema of its own: a new data directory is a copy of the built template, whose default
    // schema is migrated already (test/int/pglite-init covers that copy)
    const env = { DEVMIND_DATA_DIR: join(cwd, "data"), DEVMIND_DB_SCHEMA: "app" };
    const first = await runCli(["migrate", "--json"], env, { cwd });
    // stderr: one JSON log line per migration applied (LOG_LEVEL info), nothing else
    const logged = first.stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map((line) => [line["level"], line["event"], line["version"]])).toEqual(VERSIONS.map((v) => ["info", "migration.applied", v]));
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ schema: "app", applied: VERSIONS, current: VERSIONS.length });
    const second = await runCli(["migrate"], { ...env, LOG_LEVEL: "debug" }, { cwd });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('"event":"migrations.current"');
    expect(second.stdout).toContain("already up to date");
    const status = await runCli(["migrate", "--status", "--json"], env, { cwd });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).migrations.map((m: { state: string }) => m.state)).toEqual(VERSIONS.map(() => "applied"));
  }, 180_000);

  it("exits 2 naming the variable for a bad schema name, touching nothing", async () => {
    const cwd = tempDir();
    const result = await runCli(["migrate"], { DEVMIND_DATA_DIR: join(cwd, "data"), DEVMIND_DB_SCHEMA: "Not-Valid" }, { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("DEVMIND_DB_SCHEMA");
    expect(result.stdout).toBe("");
  });

  it("exits 2 when another process holds the embedded database", async () => {
    const cwd = tempDir();
    const dataDir = seedDataDir(join(cwd, "data"));
    const holder = await openDatabase({ dataDir });
    try {
      const result = await runCli(["migrate"], { DEVMIND_DATA_DIR: dataDir }, { cwd });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("DATABASE_LOCKED");
      expect(result.stderr).toContain(`process ${process.pid}`);
    } finally {
      await holder.close();
    }
  }, 180_000);

  it("exits 2 for an invalid DATABASE_URL and 1 for an unreachable server, never printing the password", async () => {
    const invalid = await runCli(["migrate"], { DATABASE_URL: "mysql://u:hunter2@h/db" });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("DATABASE_URL");
    expect(invalid.stderr).not.toContain("hunter2");
    const unreachable = await runCli(["migrate"], { DATABASE_URL: "postgres://u:hunter2@127.0.0.1:1/db" });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("DATABASE_UNREACHABLE");
    expect(unreachable.stderr).not.toContain("hunter2");
  });

  it("exits 2 for an unknown command", async () => {
    const result = await runCli(["frobnicate"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command");
  });

  it.runIf(TEST_DATABASE_URL !== undefined)("migrates a PostgreSQL schema from DATABASE_URL", async () => {
    const schema = freshSchemaName("cli");
    try {
      const result = await runCli(["migrate", "--json"], { DATABASE_URL: TEST_DATABASE_URL as string, DEVMIND_DB_SCHEMA: schema });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ schema, applied: VERSIONS });
    } finally {
      const db = await openDatabase({ url: TEST_DATABASE_URL, schema });
      await dropSchema(db, schema);
      await db.close();
    }
  });
});
