import { describe, it } from "vitest";
import { randomBytes } from "node:crypto";
import { readMigrationFiles } from "../../src/db/migration-files.js";
import { migrationSql } from "../../src/db/sql.js";
import { openDatabase } from "../../src/db/open-database.js";
import { withSchema } from "../../src/db/schema-view.js";
import type { Database } from "../../src/db/types.js";
import { noticeOnce } from "./notice-once.js";
import { openTemplateCopy } from "./pglite-template.js";

/** URL of the real PostgreSQL for integration tests, or undefined when none is configured. */
export const TEST_DATABASE_URL = process.env["DEVMIND_TEST_DATABASE_URL"] || undefined;

/** When set (CI), a missing PostgreSQL is a failure instead of a skip. */
export const REQUIRE_POSTGRES = process.env["DEVMIND_REQUIRE_POSTGRES"] === "1";

/**
 * DEVMIND_TEST_ALL_ON_PGLITE=1 without PostgreSQL: the PostgreSQL tier's flows (see
 * `POSTGRES_TIER_SKIPPED`) run on PGlite instead of being skipped; slow (15 minutes and more on
 * a 2-core machine), for a change to PGlite itself.
 */
export const ALL_ON_PGLITE = process.env["DEVMIND_TEST_ALL_ON_PGLITE"] === "1";

/**
 * True when the suite runs without PostgreSQL (a fresh clone's `npm test`): the tests of the
 * PostgreSQL tier are then skipped, each reported as skipped, so the suite stays within minutes
 * here. That tier is (1) the real-PostgreSQL engine tests (registered on "postgres" only), and
 * (2) the flows above the runtime seam and of child processes — HTTP routes, the SDK, the web
 * page, CLI sessions — that CI runs on PostgreSQL (`itOnPrimary`, `itOnChildEngine`,
 * `itWithPostgres`), each file of which keeps a smoke test that runs on PGlite. Every
 * engine-specific behaviour (saver, conformance suite, leases, recovery, migrations, run store,
 * ledger, locks) runs on PGlite either way.
 */
export const POSTGRES_TIER_SKIPPED = TEST_DATABASE_URL === undefined && !ALL_ON_PGLITE;

if (TEST_DATABASE_URL === undefined) {
  if (REQUIRE_POSTGRES) throw new Error("DEVMIND_REQUIRE_POSTGRES=1 but DEVMIND_TEST_DATABASE_URL is not set");
  noticeOnce(
    "postgres",
    ALL_ON_PGLITE
      ? "[devmind tests] no PostgreSQL: the real-PostgreSQL tests are skipped; DEVMIND_TEST_ALL_ON_PGLITE=1 runs every HTTP, CLI and web flow on PGlite (slow)"
      : "[devmind tests] skipped: no PostgreSQL. The real-PostgreSQL tests and the HTTP, CLI and web flows CI runs on PostgreSQL are skipped (their smoke tests run on PGlite). Set DEVMIND_TEST_DATABASE_URL=postgres://… to run them (or DEVMIND_TEST_ALL_ON_PGLITE=1 to run the flows on PGlite, slow).",
  );
}

/**
 * `it` for a test of the PostgreSQL tier that runs on CHILD_ENGINE / PRIMARY_ENGINE without naming
 * a backend (a CLI flow on `context()`'s default engine, a server on PRIMARY_ENGINE): runs when
 * PostgreSQL is configured, skipped (reported) without it; see `POSTGRES_TIER_SKIPPED`.
 */
export const itWithPostgres = (POSTGRES_TIER_SKIPPED ? it.skip : it) as typeof it;

/** `describe` for a block of the PostgreSQL tier (see `itWithPostgres`). */
export const describeWithPostgres = (POSTGRES_TIER_SKIPPED ? describe.skip : describe) as typeof describe;

/** The backends an integration suite should run on: PGlite always, PostgreSQL when configured. */
export const BACKENDS: ("pglite" | "postgres")[] = TEST_DATABASE_URL === undefined ? ["pglite"] : ["pglite", "postgres"];

/** A schema name no other test uses. */
export function freshSchemaName(prefix = "t"): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}

/**
 * Opens the shared connection for a backend: a small pool on the test server, or an embedded
 * database copied from the run's migrated template (test/helpers/pglite-template.ts).
 */
export async function openBackend(kind: "pglite" | "postgres", schema = freshSchemaName()): Promise<Database> {
  if (kind === "postgres") {
    if (TEST_DATABASE_URL === undefined) throw new Error("no DEVMIND_TEST_DATABASE_URL");
    return openDatabase({ url: TEST_DATABASE_URL, schema, maxConnections: 4 });
  }
  return openTemplateCopy(schema);
}

/** A migrated fresh schema on `owner`'s connections, and a function that drops it. */
export async function freshMigratedSchema(owner: Database): Promise<{ db: Database; drop: () => Promise<void> }> {
  const db = withSchema(owner, freshSchemaName());
  await migrateNewSchema(db);
  return { db, drop: () => dropSchema(owner, db.schema) };
}

/**
 * Brings a schema that does not exist yet to what `migrate(db)` leaves there (the same tables
 * and the same version rows, so a later `migrate` finds it current), in one transaction and one
 * script instead of a locked transaction per file: a test's fresh schema for the code above the
 * migrations. `migrate()` itself (locks, history checks, a failing file) is tested in
 * migrate.int, and every CLI command and server a test starts runs it.
 */
export async function migrateNewSchema(db: Database): Promise<void> {
  const files = readMigrationFiles();
  const sql = migrationSql(db.schema);
  await db.transaction(async (tx) => {
    await tx.query(sql.createSchema);
    await tx.query(sql.createTable);
    await tx.query(sql.setSearchPath);
    // a statement separator between files, whether or not a file ends with one
    await tx.execScript(files.map((file) => file.sql).join("\n;\n"));
    for (const file of files) await tx.query(sql.insertApplied, [file.version, file.name, file.checksum]);
  });
}

/** Drops a test schema and everything in it. */
export async function dropSchema(owner: Database, schema: string): Promise<void> {
  await owner.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * `it` for a test that only makes sense on one backend. On the others the test is not registered
 * at all rather than skipped, so CI's rule "with PostgreSQL available nothing is skipped" holds.
 */
export function itOn(backend: string, wanted: "postgres" | "pglite"): typeof it {
  return (backend === wanted ? it : () => undefined) as typeof it;
}

/**
 * The engine the layers above the runtime seam (HTTP routes, the web page, CLI flows, tools in the
 * graph) are tested on: PostgreSQL when the test server is configured (CI), else PGlite. PGlite
 * runs the engine as WebAssembly in the test process itself, a quarter or more of such a file's
 * CPU. Each such file keeps a plain `it` that runs on the other engine too. Engine-specific
 * behaviour (saver, leases, LISTEN/NOTIFY, locks, migrations, recovery, run store) runs on every
 * backend.
 */
export const PRIMARY_ENGINE: "pglite" | "postgres" = TEST_DATABASE_URL === undefined ? "pglite" : "postgres";

/**
 * `it` for a behaviour above the runtime seam: registered on PRIMARY_ENGINE only (not skipped
 * elsewhere, see `itOn`); without PostgreSQL it is skipped (reported), see `POSTGRES_TIER_SKIPPED`. A file of such tests keeps at least one plain `it` inside its
 * `describe.each(BACKENDS)`: that one is the smoke test on the other engine.
 */
export function itOnPrimary(backend: string): typeof it {
  return backend === PRIMARY_ENGINE && POSTGRES_TIER_SKIPPED ? (it.skip as typeof it) : itOn(backend, PRIMARY_ENGINE);
}

/**
 * The engine tests of child processes (the CLI, workers, `serve`) run on: PostgreSQL when the
 * test server is configured, else PGlite. A child on PGlite runs the database engine itself and
 * pays about 2.5 s of CPU more per start than one on PostgreSQL, and these files start hundreds
 * of children. Each such file keeps a smoke test on PGlite (a plain `it` in its
 * `describe.each(BACKENDS)`, or a test that names "pglite"), since PGlite is the CLI's default:
 * cli-run, cli-worker, cli-graphs (example c), cli-logging, cli-errors and cli-migrate.
 */
export const CHILD_ENGINE: "pglite" | "postgres" = TEST_DATABASE_URL === undefined ? "pglite" : "postgres";

/** `it` for a flow of child processes: registered on CHILD_ENGINE only, skipped without PostgreSQL (see `itOnPrimary`). */
export function itOnChildEngine(backend: string): typeof it {
  return backend === CHILD_ENGINE && POSTGRES_TIER_SKIPPED ? (it.skip as typeof it) : itOn(backend, CHILD_ENGINE);
}

/** `describe` for a block that only makes sense on one backend (see `itOn`). */
export function describeOn(backend: string, wanted: "postgres" | "pglite"): typeof describe {
  return (backend === wanted ? describe : () => undefined) as typeof describe;
}
