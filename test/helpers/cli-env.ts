import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openDatabase } from "../../src/db/open-database.js";
import type { ScriptedTurn } from "../../src/model/scripted-turns.js";
import { killCliChildren } from "./cli.js";
import { CHILD_ENGINE, TEST_DATABASE_URL, dropSchema, freshSchemaName } from "./databases.js";
import { seedDataDir } from "./pglite-template.js";

/** A place for CLI tests: a temp dir (cwd, workspace, scripts) and the database env of a backend. */
export interface CliContext {
  /** Temporary directory; the CLI runs here. */
  dir: string;
  workspace: string;
  /** DEVMIND_* / DATABASE_URL for the backend, plus the workspace. */
  env: Record<string, string>;
  /** Writes a scripted model file and returns `{ DEVMIND_MODEL: "scripted:PATH" }` for it. */
  script(name: string, turns: ScriptedTurn[]): Record<string, string>;
  /** Removes the temp dir and drops the PostgreSQL schema. */
  cleanup(): Promise<void>;
}

/** How a CLI context's embedded database starts. */
export interface CliContextOptions {
  /**
   * true (default): `<dir>/data` is a copy of the run's migrated template, so the CLI skips the
   * initdb of a new folder; false: `<dir>/data` does not exist, for tests of that path or of
   * commands that must never create it.
   */
  seeded?: boolean;
}

/**
 * A fresh CLI context: PGlite in `<dir>/data`, or a fresh schema on the test PostgreSQL server
 * (DATABASE_URL + DEVMIND_DB_SCHEMA). Nothing from the test process's environment leaks in.
 */
export function cliContext(backend: "pglite" | "postgres", options: CliContextOptions = {}): CliContext {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "devmind-cli-")));
  const workspace = join(dir, "workspace");
  mkdirSync(workspace);
  const schema = freshSchemaName("cli");
  const env: Record<string, string> =
    backend === "postgres"
      ? { DATABASE_URL: TEST_DATABASE_URL as string, DEVMIND_DB_SCHEMA: schema, DEVMIND_WORKSPACE: workspace }
      : { DEVMIND_DATA_DIR: join(dir, "data"), DEVMIND_WORKSPACE: workspace };
  if (backend === "pglite" && options.seeded !== false) seedDataDir(join(dir, "data"));
  return {
    dir,
    workspace,
    env,
    script(name, turns) {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(turns));
      return { DEVMIND_MODEL: `scripted:${path}` };
    },
    async cleanup() {
      if (backend === "postgres") {
        const db = await openDatabase({ url: TEST_DATABASE_URL, schema });
        try {
          await dropSchema(db, schema);
        } finally {
          await db.close();
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Parses NDJSON output: every line one JSON object. */
export function ndjson(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The run id the plain timeline prints first (`run <uuid> · thread …`). */
export function runIdFrom(text: string): string {
  const match = /\brun ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/.exec(text);
  if (match === null) throw new Error(`no run id in:\n${text}`);
  return match[1] as string;
}

/**
 * For a test file: returns a factory of CLI contexts (on CHILD_ENGINE unless told) and registers an afterEach that kills the
 * CLI children still running and cleans up every context the test made.
 */
export function cliContexts(): (backend?: "pglite" | "postgres", options?: CliContextOptions) => CliContext {
  const contexts: CliContext[] = [];
  afterEach(async () => {
    await killCliChildren();
    await Promise.all(contexts.splice(0).map((ctx) => ctx.cleanup()));
  });
  return (backend = CHILD_ENGINE, options = {}) => {
    const ctx = cliContext(backend, options);
    contexts.push(ctx);
    return ctx;
  };
}
