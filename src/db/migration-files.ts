import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MigrationError } from "../errors.js";

/** One numbered migration file of `migrations/`. */
export interface MigrationFile {
  version: number;
  name: string;
  fileName: string;
  sql: string;
  /** sha256 of the file with line endings normalised, so a CRLF checkout does not look tampered. */
  checksum: string;
}

const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Finds the package's `migrations/` folder, from `src/db` or `dist/src/db` alike. */
export function defaultMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "migrations"))) return join(dir, "migrations");
    dir = dirname(dir);
  }
  throw new MigrationError("MIGRATION_FILE_INVALID", "cannot find the devmind migrations/ folder next to package.json");
}

/** sha256 hex of a migration's text, line endings normalised. */
export function migrationChecksum(sql: string): string {
  return createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
}

/**
 * Reads `NNNN_name.sql` files in version order. Any other `.sql` name, a duplicate or a gap in
 * the numbering is an error: the sequence is the schema's history.
 */
export function readMigrationFiles(dir: string = defaultMigrationsDir()): MigrationFile[] {
  const files: MigrationFile[] = [];
  for (const fileName of readdirSync(dir).sort()) {
    if (!fileName.endsWith(".sql")) continue;
    const match = FILE_PATTERN.exec(fileName);
    if (match === null) {
      throw new MigrationError("MIGRATION_FILE_INVALID", `migration file ${fileName} does not match NNNN_name.sql (lower-case name)`, {
        details: { fileName },
      });
    }
    const sql = readFileSync(join(dir, fileName), "utf8");
    files.push({ version: Number(match[1]), name: match[2] as string, fileName, sql, checksum: migrationChecksum(sql) });
  }
  files.forEach((file, index) => {
    if (file.version !== index + 1) {
      throw new MigrationError("MIGRATION_FILE_INVALID", `migration ${file.fileName} breaks the sequence: expected version ${index + 1}`, {
        details: { fileName: file.fileName },
      });
    }
  });
  return files;
}
