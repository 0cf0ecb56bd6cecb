import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { PGLITE_SUBDIR } from "../../src/constants.js";
import { openDatabase } from "../../src/db/open-database.js";
import type { Database, Queryable, Statement } from "../../src/db/types.js";

/** The migrated template's PGlite folder, made once per run by test/setup/global-setup.ts. */
function templatePgdata(): string {
  const pgdata = join(inject("testRunDir"), "template", PGLITE_SUBDIR);
  if (!existsSync(pgdata)) throw new Error(`the PGlite template ${pgdata} is missing: run the integration tests through vitest's global setup`);
  return pgdata;
}

/**
 * Makes `dataDir` an embedded database already initialised and migrated (default schema), by
 * copying the run's template into `<dataDir>/pgdata` — what the product would have made on first
 * open, minus the initdb a fresh folder costs. Use it for a DEVMIND_DATA_DIR a child process
 * opens; a test of the first-open path itself leaves its folder empty instead.
 */
export function seedDataDir(dataDir: string): string {
  const pgdata = join(dataDir, PGLITE_SUBDIR);
  if (existsSync(pgdata)) throw new Error(`${pgdata} exists already; seed only a new data directory`);
  mkdirSync(dataDir, { recursive: true });
  cpSync(templatePgdata(), pgdata, { recursive: true });
  return dataDir;
}

/**
 * Opens an embedded database for an in-process test: a copy of the template in the run's scratch
 * folder, on schema `schema` (`vector`: with PGlite's pgvector loaded, as `serve` opens it when a
 * store index is configured). Closing it also removes the copy. Cheaper than `memory://`, which
 * runs initdb for every instance.
 */
export async function openTemplateCopy(schema: string, options: { vector?: boolean } = {}): Promise<Database> {
  const dataDir = seedDataDir(join(mkdtempSync(join(inject("testRunDir"), "db-")), "data"));
  const db = await openDatabase({ dataDir, schema, vector: options.vector === true });
  return {
    kind: db.kind,
    schema: db.schema,
    location: db.location,
    query: <R>(sql: string | Statement, values?: readonly unknown[]) => db.query<R>(sql, values),
    execScript: (sql) => db.execScript(sql),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction(fn),
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    async close() {
      try {
        await db.close();
      } finally {
        rmSync(join(dataDir, ".."), { recursive: true, force: true });
      }
    },
  };
}
