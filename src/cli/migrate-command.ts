import type { Command } from "commander";
import { configSecrets, loadConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { createRedactor } from "../secret-redaction.js";
import { logMigrations } from "./open-runtime.js";

/** Registers `devmind migrate [--status] [--json]` on the program. */
export function registerMigrateCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command("migrate")
    .description("apply the database migrations to the configured schema (or show their status)")
    .option("--status", "only show which migrations are applied, pending, changed or unknown")
    .option("--json", "print JSON instead of text")
    .action(async (options: { status?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const logger = createLogger({ level: config.logLevel, redact: createRedactor(configSecrets(config)).text });
      const [{ migrate, migrationStatus }, { openDatabase }] = await Promise.all([import("../db/migrate.js"), import("../db/open-database.js")]);
      const db = await openDatabase({ url: config.databaseUrl, directUrl: config.databaseDirectUrl, logger, dataDir: config.dataDir, schema: config.dbSchema });
      try {
        if (options.status === true) {
          const states = await migrationStatus(db);
          if (options.json === true) process.stdout.write(`${JSON.stringify({ schema: db.schema, location: db.location, migrations: states })}\n`);
          else {
            process.stdout.write(`schema ${db.schema} at ${db.location}\n`);
            for (const s of states) process.stdout.write(`  ${String(s.version).padStart(4, "0")} ${s.name.padEnd(24)} ${s.state}${s.appliedAt ? ` (${s.appliedAt})` : ""}\n`);
          }
          const bad = states.some((s) => s.state === "changed" || s.state === "unknown");
          setExitCode(bad ? 1 : 0);
          return;
        }
        const result = await migrate(db);
        logMigrations(logger, db, result);
        if (options.json === true) process.stdout.write(`${JSON.stringify({ ...result, location: db.location })}\n`);
        else {
          const what = result.applied.length === 0 ? "already up to date" : `applied ${result.applied.map((v) => String(v).padStart(4, "0")).join(", ")}`;
          process.stdout.write(`schema ${db.schema} at ${db.location}: ${what} (version ${result.current})\n`);
        }
        setExitCode(0);
      } finally {
        await db.close();
      }
    });
}
