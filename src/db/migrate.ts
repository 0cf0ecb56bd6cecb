import { MIGRATION_LOCK_PREFIX } from "../constants.js";
import { MigrationError } from "../errors.js";
import { readMigrationFiles, type MigrationFile } from "./migration-files.js";
import { migrationSql } from "./sql.js";
import type { Database, Queryable } from "./types.js";

/** A migration row as stored in the schema's `schema_migrations` table. */
interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
  applied_at: string;
}

/** State of one migration version, as reported by `migrationStatus()`. */
export interface MigrationState {
  version: number;
  name: string;
  /** `applied`; `pending` (in code, not in the database); `changed` (applied, but the file differs); `unknown` (in the database, not in this code). */
  state: "applied" | "pending" | "changed" | "unknown";
  appliedAt: string | null;
  checksum: string;
}

/** What `migrate()` did. */
export interface MigrateResult {
  schema: string;
  applied: number[];
  current: number;
}

/** Options for tests and tools; by default the package's own `migrations/` are used. */
export interface MigrateOptions {
  files?: MigrationFile[];
}

/**
 * Brings `db`'s schema up to date with `migrations/`. Each file is applied together with its
 * version row in one transaction holding `pg_advisory_xact_lock` for the schema, so any number of
 * processes may call this at once: one applies, the others wait and then see it done. Refuses
 * (before changing anything) an applied file whose checksum changed and a database that has
 * versions this code does not know. A schema with every file applied already is only read (no
 * lock, no transaction), as when each command of the CLI opens a migrated database.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = options.files ?? readMigrationFiles();
  const sql = migrationSql(db.schema);
  // an up-to-date schema (every start of a command or a server on a migrated database) is
  // checked with two reads, not one locked transaction per file: the same refusals, nothing to apply
  const upToDate = await readIfUpToDate(db, sql, files);
  if (upToDate) return { schema: db.schema, applied: [], current: files.length };
  const lockKey = MIGRATION_LOCK_PREFIX + db.schema;
  await db.transaction(async (tx) => {
    await tx.query(sql.lock, [lockKey]);
    await tx.query(sql.createSchema);
    await tx.query(sql.createTable);
  });
  const appliedNow: number[] = [];
  for (const file of files) {
    const done = await db.transaction(async (tx) => {
      await tx.query(sql.lock, [lockKey]);
      const applied = await readApplied(tx, db.schema);
      verifyHistory(files, applied, db.schema);
      if (applied.some((row) => row.version === file.version)) return false;
      await tx.query(sql.setSearchPath);
      try {
        await tx.execScript(file.sql);
      } catch (error) {
        throw new MigrationError("MIGRATION_FAILED", `migration ${file.fileName} failed on schema ${db.schema}: ${(error as Error).message}`, {
          details: { fileName: file.fileName, schema: db.schema },
          cause: error,
        });
      }
      await tx.query(sql.insertApplied, [file.version, file.name, file.checksum]);
      return true;
    });
    if (done) appliedNow.push(file.version);
  }
  return { schema: db.schema, applied: appliedNow, current: files.length };
}

/**
 * Lists every migration version known to the code or the database with its state, without
 * changing anything (a schema that does not exist yet reports everything `pending`).
 */
export async function migrationStatus(db: Database, options: MigrateOptions = {}): Promise<MigrationState[]> {
  const files = options.files ?? readMigrationFiles();
  const sql = migrationSql(db.schema);
  const exists = await db.query<{ exists: boolean }>(sql.tableExists, [sql.tableName]);
  const applied = exists.rows[0]?.exists === true ? await readApplied(db, db.schema) : [];
  const byVersion = new Map(applied.map((row) => [row.version, row]));
  const states: MigrationState[] = files.map((file) => {
    const row = byVersion.get(file.version);
    if (row === undefined) return { version: file.version, name: file.name, state: "pending", appliedAt: null, checksum: file.checksum };
    return {
      version: file.version,
      name: file.name,
      state: row.checksum === file.checksum ? "applied" : "changed",
      appliedAt: row.applied_at,
      checksum: row.checksum,
    };
  });
  for (const row of applied) {
    if (!files.some((file) => file.version === row.version)) {
      states.push({ version: row.version, name: row.name, state: "unknown", appliedAt: row.applied_at, checksum: row.checksum });
    }
  }
  return states;
}

/**
 * Whether every file of `files` is applied to `db`'s schema already, read without the lock (a
 * version row is committed together with its migration, so a row seen is a migration done).
 * Throws as the locked path would when the history is refused (a changed file, a newer database).
 */
async function readIfUpToDate(db: Database, sql: ReturnType<typeof migrationSql>, files: MigrationFile[]): Promise<boolean> {
  const exists = await db.query<{ exists: boolean }>(sql.tableExists, [sql.tableName]);
  if (exists.rows[0]?.exists !== true) return false;
  const applied = await readApplied(db, db.schema);
  verifyHistory(files, applied, db.schema);
  return files.every((file) => applied.some((row) => row.version === file.version));
}

async function readApplied(q: Queryable, schema: string): Promise<AppliedRow[]> {
  const result = await q.query<AppliedRow>(migrationSql(schema).selectApplied);
  return result.rows.map((row) => ({ ...row, version: Number(row.version) }));
}

function verifyHistory(files: MigrationFile[], applied: AppliedRow[], schema: string): void {
  for (const row of applied) {
    const file = files.find((candidate) => candidate.version === row.version);
    if (file === undefined) {
      throw new MigrationError(
        "MIGRATION_DATABASE_NEWER",
        `schema ${schema} has migration ${row.version} (${row.name}) that this devmind does not know: ` +
          `the database is newer than the code (latest known: ${files.length}); upgrade devmind`,
        { details: { schema, version: row.version, known: files.length } },
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        "MIGRATION_TAMPERED",
        `migration ${file.fileName} was changed after it was applied to schema ${schema} ` +
          `(applied checksum ${row.checksum.slice(0, 12)}…, file ${file.checksum.slice(0, 12)}…); ` +
          `add a new migration instead of editing an applied one`,
        { details: { schema, fileName: file.fileName, applied: row.checksum, file: file.checksum } },
      );
    }
  }
}
