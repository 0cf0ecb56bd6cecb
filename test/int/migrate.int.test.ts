import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, migrationStatus } from "../../src/db/migrate.js";
import { migrationChecksum, readMigrationFiles, type MigrationFile } from "../../src/db/migration-files.js";
import { openDatabase } from "../../src/db/open-database.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { DevmindError } from "../../src/errors.js";
import { BACKENDS, TEST_DATABASE_URL, dropSchema, freshSchemaName, migrateNewSchema, openBackend } from "../helpers/databases.js";

function file(version: number, name: string, sql: string): MigrationFile {
  return { version, name, fileName: `${String(version).padStart(4, "0")}_${name}.sql`, sql, checksum: migrationChecksum(sql) };
}

const ONE = file(1, "first", "CREATE TABLE first (id integer PRIMARY KEY);");
const TWO = file(2, "second", "CREATE TABLE second (id integer PRIMARY KEY); INSERT INTO second VALUES (1), (2);");
const BROKEN = file(2, "broken", "CREATE TABLE half (id integer); CREATE TABLE oops (;");

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DevmindError);
    return (error as DevmindError).code;
  }
  return "resolved";
}

async function tableExists(db: Database, table: string): Promise<boolean> {
  const result = await db.query<{ exists: boolean }>("SELECT to_regclass($1) IS NOT NULL AS exists", [`"${db.schema}".${table}`]);
  return result.rows[0]?.exists === true;
}

describe.each(BACKENDS)("migrations on %s", (backend) => {
  let owner: Database;
  beforeAll(async () => {
    owner = await openBackend(backend);
  });
  afterAll(async () => {
    await owner.close();
  });

  async function fresh(): Promise<Database> {
    return withSchema(owner, freshSchemaName("m"));
  }

  it("applies the package's migrations once and reports them applied", async () => {
    const db = await fresh();
    const before = await migrationStatus(db);
    expect(before.every((state) => state.state === "pending")).toBe(true);
    expect(await tableExists(db, "checkpoints")).toBe(false);
    const first = await migrate(db);
    expect(first.applied).toEqual(readMigrationFiles().map((f) => f.version));
    const again = await migrate(db);
    expect(again.applied).toEqual([]);
    const status = await migrationStatus(db);
    expect(status.map((s) => s.state)).toEqual(readMigrationFiles().map(() => "applied"));
    expect(status[0]?.appliedAt).toMatch(/^\d{4}-\d{2}-\d{2}/);
    for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes", "runs", "attachments", "schema_migrations"]) expect(await tableExists(db, table)).toBe(true);
    await dropSchema(owner, db.schema);
  });

  it("the tests' one-script setup of a fresh schema (migrateNewSchema) leaves what migrate() leaves: the same columns, indexes, constraints and version rows", async () => {
    const migrated = await fresh();
    const scripted = await fresh();
    await migrate(migrated);
    await migrateNewSchema(scripted);
    expect(await schemaShape(scripted)).toEqual(await schemaShape(migrated));
    expect((await migrate(scripted)).applied).toEqual([]);
    expect((await migrationStatus(scripted)).map((s) => s.state)).toEqual(readMigrationFiles().map(() => "applied"));
    await dropSchema(owner, migrated.schema);
    await dropSchema(owner, scripted.schema);
  });

  /** A schema's tables, columns, indexes, constraints, functions and version rows, its name left out. */
  async function schemaShape(db: Database): Promise<unknown> {
    const queries = {
      columns: "SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2",
      indexes: "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1, 2",
      constraints:
        "SELECT t.relname, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1 ORDER BY 1, 2",
      functions: "SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1, 2",
      versions: `SELECT version, name, checksum FROM "${db.schema}".schema_migrations ORDER BY version`,
    };
    const shape: Record<string, unknown> = {};
    for (const [name, sql] of Object.entries(queries)) shape[name] = (await db.query(sql, sql.includes("$1") ? [db.schema] : [])).rows;
    return JSON.parse(JSON.stringify(shape).split(`\\"${db.schema}\\".`).join("").split(`${db.schema}.`).join("").split(db.schema).join("SCHEMA"));
  }

  it("refuses a changed applied file and applies nothing after it", async () => {
    const db = await fresh();
    await migrate(db, { files: [ONE] });
    const tampered = file(1, "first", "CREATE TABLE first (id bigint PRIMARY KEY);");
    expect(await codeOf(migrate(db, { files: [tampered, TWO] }))).toBe("MIGRATION_TAMPERED");
    expect(await tableExists(db, "second")).toBe(false);
    expect((await migrationStatus(db, { files: [tampered, TWO] })).map((s) => s.state)).toEqual(["changed", "pending"]);
    await dropSchema(owner, db.schema);
  });

  it("refuses a database newer than the code", async () => {
    const db = await fresh();
    await migrate(db, { files: [ONE, TWO] });
    let message = "";
    try {
      await migrate(db, { files: [ONE] });
    } catch (error) {
      expect((error as DevmindError).code).toBe("MIGRATION_DATABASE_NEWER");
      message = (error as Error).message;
    }
    expect(message).toContain("newer than the code");
    expect((await migrationStatus(db, { files: [ONE] })).map((s) => `${s.version}:${s.state}`)).toEqual(["1:applied", "2:unknown"]);
    await dropSchema(owner, db.schema);
  });

  it("rolls back a failing migration with its version row, leaving earlier ones applied", async () => {
    const db = await fresh();
    expect(await codeOf(migrate(db, { files: [ONE, BROKEN] }))).toBe("MIGRATION_FAILED");
    expect(await tableExists(db, "first")).toBe(true);
    expect(await tableExists(db, "half")).toBe(false);
    expect((await migrationStatus(db, { files: [ONE, BROKEN] })).map((s) => s.state)).toEqual(["applied", "pending"]);
    // fixing the file lets the next start finish the job
    const result = await migrate(db, { files: [ONE, TWO] });
    expect(result.applied).toEqual([2]);
    await dropSchema(owner, db.schema);
  });
});

describe.runIf(TEST_DATABASE_URL !== undefined)("concurrent migrate on PostgreSQL", () => {
  it("lets eight processes' pools migrate one schema at once: each file applied exactly once", async () => {
    const schema = freshSchemaName("race");
    const files = [ONE, TWO, file(3, "third", "ALTER TABLE second ADD COLUMN note text;")];
    const dbs = await Promise.all(Array.from({ length: 8 }, () => openDatabase({ url: TEST_DATABASE_URL, schema, maxConnections: 2 })));
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db, { files })));
      const applied = results.flatMap((r) => r.applied).sort();
      expect(applied).toEqual([1, 2, 3]);
      const rows = await dbs[0]!.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
      expect(rows.rows.map((r) => r.version)).toEqual([1, 2, 3]);
      const data = await dbs[0]!.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".second`);
      expect(data.rows[0]?.n).toBe(2);
    } finally {
      await dropSchema(dbs[0]!, schema);
      await Promise.all(dbs.map((db) => db.close()));
    }
  });
});

describe("migration files", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  function dirWith(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), "devmind-mig-"));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }

  it("reads NNNN_name.sql in order with CRLF-insensitive checksums", () => {
    const dir = dirWith({ "0002_b.sql": "SELECT 2;\r\n", "0001_a.sql": "SELECT 1;\n", "notes.txt": "ignored" });
    const files = readMigrationFiles(dir);
    expect(files.map((f) => f.fileName)).toEqual(["0001_a.sql", "0002_b.sql"]);
    expect(files[1]?.checksum).toBe(migrationChecksum("SELECT 2;\n"));
  });

  it.each([
    [{ "0001_a.sql": "", "1_b.sql": "" }, "does not match"],
    [{ "0001_a.sql": "", "0003_c.sql": "" }, "breaks the sequence"],
    [{ "0001_A.sql": "" }, "does not match"],
  ])("refuses a bad set of files %#", (files, text) => {
    expect(() => readMigrationFiles(dirWith(files))).toThrow(text);
  });
});
